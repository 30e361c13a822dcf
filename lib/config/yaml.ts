/**
 * YAML (and JSON, which is YAML) parsing that keeps positions, so every issue can name its line.
 *
 * Reads usually need no YAML parser at all: a structured document is stored with the JSON form of
 * its data (`jsonFormOf`, computed by the write that validated it), and `parseYaml` takes that form
 * when it is given. The `yaml` package (~110 KiB, 25–55 ms of a Lambda cold start to load and run)
 * is required from node_modules on first use — a write, a document stored without a JSON form, or
 * an issue that needs a line number — never at module load (SST installs it beside the bundle).
 */
import { createRequire } from 'node:module'
import type { Document, LineCounter } from 'yaml'
import type { Issue } from '../errors'
import { formatCount } from '../runtime/count-format'
import { expandedSize, WORK_BUDGETS } from './expansion-budget'
import { jsonSyntaxIssue, jsonTooDeep, MAX_NESTING_DEPTH, yamlTooDeep } from './nesting'

type YamlModule = typeof import('yaml')
let loaded: YamlModule | undefined
/** The `yaml` package, loaded synchronously on first use. */
export const yamlModule = (): YamlModule => (loaded ??= createRequire(import.meta.url)('yaml') as YamlModule)

export interface ParsedYaml {
  data: unknown
  /**
   * The text the data came from, when its syntax tree was not built yet (the data was read from
   * the stored JSON form): `doc` and `lines` are built from it when an issue first needs a position.
   */
  text?: string
  /** Absent for a JSON text too large for the YAML parser: issues then carry pointers only. */
  doc?: Document
  lines?: LineCounter
  /** The syntax tree's positions as plain data, for data parsed where its tree could not come along (a parse worker). */
  positions?: YamlPositions
}

/**
 * A structured document's text, the JSON form of its data when its writer stored one, and the
 * text already parsed when its writer had it parsed (YamlParsing): then no check parses it again.
 */
export type YamlSource =
  | string
  | {
      text: string
      json?: string
      parsed?: YamlResult
      /**
       * YAML texts held in the data (a tool's inline OpenAPI spec), parsed where the write parsed
       * the document — a parse worker when long — keyed by the text, so no check parses them here.
       */
      nested?: ReadonlyMap<string, YamlResult>
    }

/** Where YAML text is parsed: inline, or in a worker thread (lib/config/yaml-pool.ts) when it can cost more than a few ms. */
export interface YamlParsing {
  parse(text: string, at: { tenant: string; path?: string; signal?: AbortSignal }): Promise<YamlResult>
}

/** Parsing on the calling thread: tests, the CLI, and small texts of every caller. */
export const INLINE_YAML: YamlParsing = { parse: async (text, { path }) => parseYaml(text, path) }

/** YAML parser runs on this thread (documents and characters): what tests read to show a body was parsed elsewhere. */
export const parsedHere = { documents: 0, characters: 0 }

/** The text of a YamlSource. */
export const textOf = (source: YamlSource): string => (typeof source === 'string' ? source : source.text)

/** What a stored or bundled document gives `parseYaml`: its body and JSON form. */
export const yamlSourceOf = (doc: { body: string; json?: string }): YamlSource =>
  doc.json === undefined ? doc.body : { text: doc.body, json: doc.json }

/** Largest JSON form (UTF-8 bytes) stored beside a body: with an inline body of at most 64 KiB, an item stays far below DynamoDB's 400 KB. */
export const MAX_JSON_FORM = 64 * 1024
const NOT_EXACT = new Error('not exactly representable as JSON')

/**
 * The JSON text of parsed YAML data, or undefined when JSON cannot hold it exactly (`.inf`, `.nan`,
 * `-0`, a self-referencing alias) or it would exceed MAX_JSON_FORM. The size is counted while
 * serialising: aliases can make the data far larger than its text (`[*a, *a, …]` of a long
 * string), so the walk stops at the limit instead of building the whole string first.
 */
export function jsonFormOf(data: unknown): string | undefined {
  let budget = MAX_JSON_FORM
  try {
    const json = JSON.stringify(data, (key: string, value: unknown) => {
      budget -= key.length + 4
      if (typeof value === 'string') budget -= value.length
      else if (typeof value === 'number') {
        if (!Number.isFinite(value) || Object.is(value, -0)) throw NOT_EXACT
        budget -= 24
      } else budget -= 8
      if (budget < 0) throw NOT_EXACT
      return value
    })
    // the budget counts characters; the item holds UTF-8 bytes (up to 3 per character)
    return json !== undefined && Buffer.byteLength(json, 'utf8') <= MAX_JSON_FORM ? json : undefined
  } catch {
    return undefined // NOT_EXACT, or a cycle
  }
}

/**
 * Largest text handed to the YAML parser. It costs ~1–4 µs per byte on the event loop (1 MiB:
 * 1–4 s), so larger documents must be JSON, which is parsed natively (1 MiB: ~10 ms).
 */
export const MAX_YAML_BYTES = WORK_BUDGETS.yamlBytes.limit

/** `overBudget`: refused by a work budget (WORK_BUDGETS), not by its syntax — refused at every write path. */
export type YamlResult = { ok: true; value: ParsedYaml } | { ok: false; issues: Issue[]; overBudget?: true }

export function parseYaml(source: YamlSource, path?: string): YamlResult {
  const text = textOf(source)
  if (typeof source !== 'string' && source.parsed) {
    const { parsed, json } = source
    if (!parsed.ok) return { ...parsed, issues: parsed.issues.map((issue) => ({ ...issue, path })) }
    // each check gets data of its own (a check may normalise what it reads), as from a parse
    const data = json !== undefined ? JSON.parse(json) : structuredClone(parsed.value.data)
    return { ok: true, value: { ...parsed.value, data } }
  }
  if (typeof source !== 'string' && source.json !== undefined) {
    try {
      return { ok: true, value: { data: JSON.parse(source.json), text } }
    } catch {
      // not JSON after all: the text is the truth
    }
  }
  // the shape first: the parser's cost grows with nesting (issue 10 F3), this scan's does not
  if (/^\s*[[{]/.test(text) && text.length > MAX_YAML_BYTES) return parseLargeJson(text, path)
  // past the size limit the text is refused anyway: only its first 64 KiB are lexed, for a position
  parsedHere.documents++
  parsedHere.characters += Math.min(text.length, MAX_YAML_BYTES)
  const deep = yamlTooDeep(text.length > MAX_YAML_BYTES ? text.slice(0, MAX_YAML_BYTES) : text, MAX_NESTING_DEPTH, path)
  if (deep) return { ok: false, issues: [deep] }
  if (text.length > MAX_YAML_BYTES) {
    return {
      ok: false,
      issues: [
        {
          path,
          message: `a YAML document may be at most ${MAX_YAML_BYTES / 1024} KiB (this one is ${Math.ceil(text.length / 1024)} KiB); send larger documents as JSON`,
        },
      ],
    }
  }
  const lines = new (yamlModule().LineCounter)()
  // uniqueKeys is checked below in one pass: the parser's own check compares every key with every
  // earlier one (a 40,000-key mapping took 25 s)
  const doc = yamlModule().parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: false })
  if (doc.errors.length) {
    return {
      ok: false,
      issues: doc.errors.map((e) => ({
        path,
        line: e.linePos?.[0].line,
        column: e.linePos?.[0].col,
        message: firstLine(e.message),
      })),
    }
  }
  const duplicate = duplicateKey(doc, lines, path)
  if (duplicate) return { ok: false, issues: [duplicate] }
  try {
    const data = doc.toJS({ maxAliasCount: 100 })
    // aliases share what they point at: every consumer walks each use, so each use is charged
    const limit = WORK_BUDGETS.yamlNodes.limit
    if (expandedSize(data, limit) > limit)
      return {
        ok: false,
        overBudget: true,
        issues: [
          {
            path,
            message: `the document expands to more than ${formatCount(limit)} units of data (a node, or 16 characters of text; every use of an anchor counts again)`,
          },
        ],
      }
    return { ok: true, value: { data, doc, lines } }
  } catch (e) {
    // alias bombs and similar: a document error, not a crash
    return { ok: false, overBudget: true, issues: [{ path, message: `document cannot be read: ${(e as Error).message}` }] }
  }
}

/**
 * The issue for a document whose top level is not a mapping. An empty (or whitespace- or
 * comment-only) document parses to null and is told so, rather than that it is not a mapping.
 */
export function notAMapping(data: unknown, path: string | undefined, what: string, needs: string): Issue {
  const message =
    data === null || data === undefined
      ? `the document is empty: ${what} needs at least ${needs}`
      : `${what} must be a YAML mapping (key: value lines)`
  return { path, pointer: '', line: 1, column: 1, message }
}

/** A JSON document above the YAML size: parsed natively, its issues located by pointer only. */
function parseLargeJson(text: string, path?: string): YamlResult {
  const deep = jsonTooDeep(text, MAX_NESTING_DEPTH, path)
  if (deep) return { ok: false, issues: [deep] }
  try {
    return { ok: true, value: { data: JSON.parse(text) } }
  } catch {
    return { ok: false, issues: [jsonSyntaxIssue(text, path)] }
  }
}

/** The first mapping key that repeats an earlier one in the same mapping (scalar keys by value). */
function duplicateKey(doc: Document, lines: LineCounter, path?: string): Issue | undefined {
  const { isScalar, visit } = yamlModule()
  let found: Issue | undefined
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>()
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key
        if (seen.has(key)) {
          const r = rangeOf(pair.key)
          const pos = r ? lines.linePos(r[0]) : undefined
          found = { path, line: pos?.line, column: pos?.col, message: 'Map keys must be unique' }
          return visit.BREAK
        }
        seen.add(key)
      }
      return undefined
    },
  })
  return found
}

const firstLine = (m: string) => m.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')

const unescapePointerPart = (p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~')

/**
 * Where every node of a parsed text is, as plain data (typed arrays and strings): built from the
 * syntax tree where the text was parsed, so that data parsed in a worker thread comes back with
 * its positions, and issues found on the main thread get their lines without parsing it again.
 * Nodes are numbered in walk order, 0 the document's root.
 */
export interface YamlPositions {
  /** The parent's number (-1 for the root). */
  parent: Int32Array
  /** The node's first child and next sibling (-1: none), in the order of the text. */
  firstChild: Int32Array
  nextSibling: Int32Array
  /** The node's key in its parent mapping (a scalar key's text); '' for a sequence item (its place among its siblings is its index). */
  key: string[]
  /** 1 a mapping, 2 a sequence, 0 anything else: only mappings and sequences have children a pointer walks into. */
  kind: Uint8Array
  /** Where a pointer to the node points: its value, else its key, else its parent's place (line 0: nowhere). */
  line: Int32Array
  column: Int32Array
  /** Where its key is (a mapping entry's); line 0 when it has none. */
  keyLine: Int32Array
  keyColumn: Int32Array
}

/** The positions of every node of a syntax tree; linear in its nodes. */
export function yamlPositions(doc: Document, lines: LineCounter): YamlPositions {
  const { isMap, isPair, isScalar, isSeq } = yamlModule()
  const parent: number[] = []
  const key: string[] = []
  const kind: number[] = []
  const line: number[] = []
  const column: number[] = []
  const keyLine: number[] = []
  const keyColumn: number[] = []
  const firstChild: number[] = []
  const nextSibling: number[] = []
  const lastChild: number[] = []
  const place = (node: unknown) => {
    const r = rangeOf(node)
    return r ? lines.linePos(r[0]) : undefined
  }
  const stack: { node: unknown; parent: number; key: string; keyNode?: unknown }[] = [{ node: doc.contents, parent: -1, key: '' }]
  while (stack.length) {
    const { node, parent: p, key: k, keyNode } = stack.pop()!
    const i = parent.length
    const keyAt = keyNode === undefined ? undefined : place(keyNode)
    const own = place(node) ?? keyAt
    parent.push(p)
    key.push(k)
    kind.push(isMap(node) ? 1 : isSeq(node) ? 2 : 0)
    line.push(own ? own.line : p < 0 ? 0 : line[p])
    column.push(own ? own.col : p < 0 ? 0 : column[p])
    keyLine.push(keyAt?.line ?? 0)
    keyColumn.push(keyAt?.col ?? 0)
    firstChild.push(-1)
    nextSibling.push(-1)
    lastChild.push(-1)
    // children are taken from the stack in the order of the text, each after the subtree before it
    if (p >= 0) {
      if (lastChild[p] < 0) firstChild[p] = i
      else nextSibling[lastChild[p]] = i
      lastChild[p] = i
    }
    if (isMap(node)) {
      for (let j = node.items.length - 1; j >= 0; j--) {
        const pair = node.items[j]
        if (isPair(pair) && isScalar(pair.key)) stack.push({ node: pair.value, parent: i, key: String(pair.key.value), keyNode: pair.key })
      }
    } else if (isSeq(node)) {
      for (let j = node.items.length - 1; j >= 0; j--) stack.push({ node: node.items[j], parent: i, key: '' })
    }
  }
  return {
    parent: Int32Array.from(parent),
    firstChild: Int32Array.from(firstChild),
    nextSibling: Int32Array.from(nextSibling),
    key,
    kind: Uint8Array.from(kind),
    line: Int32Array.from(line),
    column: Int32Array.from(column),
    keyLine: Int32Array.from(keyLine),
    keyColumn: Int32Array.from(keyColumn),
  }
}

/**
 * The child of `node` that a pointer part names: a mapping's first entry with that key, a
 * sequence's item at the index the part reads as (`01` is item 1) — found by walking the
 * siblings, as a search of the syntax tree would, so no index is built for a lookup or two.
 */
function childOf(positions: YamlPositions, node: number, part: string): number | undefined {
  const kind = positions.kind[node]
  if (kind === 0) return undefined
  const index = kind === 2 ? Number(part) : -1
  if (kind === 2 && !(Number.isInteger(index) && index >= 0)) return undefined
  let n = 0
  for (let child = positions.firstChild[node]; child >= 0; child = positions.nextSibling[child], n++) {
    if (kind === 1 ? positions.key[child] === part : n === index) return child
  }
  return undefined
}

/** The node a pointer names, or its nearest existing ancestor; `whole` when every part was found. */
function walk(positions: YamlPositions, pointer: string): { node: number; whole: boolean } {
  let node = 0
  for (const part of pointer.split('/').slice(1).map(unescapePointerPart)) {
    const child = childOf(positions, node, part)
    if (child === undefined) return { node, whole: false }
    node = child
  }
  return { node, whole: true }
}

/** The positions of a parsed text: carried with it, or built from its syntax tree on first use. */
function positionsOf(parsed: ParsedYaml): YamlPositions | undefined {
  if (parsed.positions) return parsed.positions
  if (!syntaxTree(parsed)) return undefined
  parsed.positions = yamlPositions(parsed.doc!, parsed.lines!)
  return parsed.positions
}

/** Line/column of the node a JSON pointer names; the nearest existing ancestor when it is missing. */
export function positionOf(parsed: ParsedYaml, pointer: string): { line: number; column: number } | undefined {
  const positions = positionsOf(parsed)
  if (!positions?.parent.length) return undefined
  const { node } = walk(positions, pointer)
  const line = positions.line[node]
  return line ? { line, column: positions.column[node] } : undefined
}

/**
 * Whether the pointer names a node the text has. An issue about a field that is absent (" is
 * required") has none: positionOf then answers its parent's position.
 */
export function pointerExists(parsed: ParsedYaml, pointer: string): boolean {
  const positions = positionsOf(parsed)
  return positions?.parent.length ? walk(positions, pointer).whole : false
}

/** Position of a top-level key (for unknown-field errors). */
export function keyPosition(parsed: ParsedYaml, key: string): { line: number; column: number } | undefined {
  const positions = positionsOf(parsed)
  if (!positions?.parent.length || positions.kind[0] !== 1) return undefined
  const entry = childOf(positions, 0, key)
  const line = entry === undefined ? 0 : positions.keyLine[entry]
  return line ? { line, column: positions.keyColumn[entry!] } : undefined
}

/**
 * Builds the syntax tree of data that came from a JSON form, once, when a position is first asked
 * for; false when there is none to build (a large JSON text, or a text that no longer parses).
 */
function syntaxTree(parsed: ParsedYaml): boolean {
  if (parsed.doc && parsed.lines) return true
  if (parsed.text === undefined) return false
  const again = parseYaml(parsed.text)
  parsed.text = undefined
  if (!again.ok || !again.value.doc) return false
  parsed.doc = again.value.doc
  parsed.lines = again.value.lines
  return true
}

function rangeOf(node: unknown): [number, number, number] | undefined {
  const r = (node as { range?: [number, number, number] } | null)?.range
  return r ?? undefined
}

/** Adds line/column to each issue that has a pointer (the message stays as it was: readers show the line beside it). */
export function locate(parsed: ParsedYaml, issues: Issue[], path?: string): Issue[] {
  return issues.map((issue) => {
    if (issue.pointer === undefined || issue.line !== undefined) return { path, ...issue }
    const pos = positionOf(parsed, issue.pointer)
    return pos ? { path, ...issue, line: pos.line, column: pos.column } : { path, ...issue }
  })
}

/** Closest candidate by edit distance, for "did you mean" hints. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestD = Infinity
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase())
    if (d < bestD) [best, bestD] = [c, d]
  }
  return bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = tmp
    }
  }
  return prev[b.length]
}
