/**
 * YAML (and JSON, which is YAML) parsing that keeps positions, so every issue can name its line.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document } from 'yaml'
import type { Issue } from '../errors'
import { jsonSyntaxIssue, jsonTooDeep, MAX_NESTING_DEPTH, yamlTooDeep } from './nesting'

export interface ParsedYaml {
  data: unknown
  /** Absent for a JSON text too large for the YAML parser: issues then carry pointers only. */
  doc?: Document
  lines?: LineCounter
}

/**
 * Largest text handed to the YAML parser. It costs ~1–4 µs per byte on the event loop (1 MiB:
 * 1–4 s), so larger documents must be JSON, which is parsed natively (1 MiB: ~10 ms).
 */
export const MAX_YAML_BYTES = 64 * 1024

export type YamlResult = { ok: true; value: ParsedYaml } | { ok: false; issues: Issue[] }

export function parseYaml(text: string, path?: string): YamlResult {
  // the shape first: the parser's cost grows with nesting (issue 10 F3), this scan's does not
  if (/^\s*[[{]/.test(text) && text.length > MAX_YAML_BYTES) return parseLargeJson(text, path)
  const deep = yamlTooDeep(text, MAX_NESTING_DEPTH, path)
  if (deep) return { ok: false, issues: [deep] }
  if (text.length > MAX_YAML_BYTES) {
    return { ok: false, issues: [{ path, message: `a YAML document may be at most ${MAX_YAML_BYTES / 1024} KiB (this one is ${Math.ceil(text.length / 1024)} KiB); send larger documents as JSON` }] }
  }
  const lines = new LineCounter()
  // uniqueKeys is checked below in one pass: the parser's own check compares every key with every
  // earlier one (a 40,000-key mapping took 25 s)
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: false })
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
    return { ok: true, value: { data: doc.toJS({ maxAliasCount: 100 }), doc, lines } }
  } catch (e) {
    // alias bombs and similar: a document error, not a crash
    return { ok: false, issues: [{ path, message: `document cannot be read: ${(e as Error).message}` }] }
  }
}

/**
 * The issue for a document whose top level is not a mapping. An empty (or whitespace- or
 * comment-only) document parses to null and is told so, rather than that it is not a mapping.
 */
export function notAMapping(data: unknown, path: string | undefined, what: string, needs: string): Issue {
  const message = data === null || data === undefined ? `the document is empty: ${what} needs at least ${needs}` : `${what} must be a YAML mapping (key: value lines)`
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

const unescape = (p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~')

/** Line/column of the node a JSON pointer names; the nearest existing ancestor when it is missing. */
export function positionOf(parsed: ParsedYaml, pointer: string): { line: number; column: number } | undefined {
  if (!parsed.doc || !parsed.lines) return undefined
  const parts = pointer.split('/').slice(1).map(unescape)
  let node: unknown = parsed.doc.contents
  let best: [number, number, number] | undefined = rangeOf(node)
  for (const part of parts) {
    if (isMap(node)) {
      const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === part)
      if (!pair) break
      // point at the key for a whole entry; its value becomes the next node
      best = rangeOf(pair.key) ?? best
      node = pair.value
      const r = rangeOf(node)
      if (r) best = r
    } else if (isSeq(node)) {
      const item = node.items[Number(part)]
      if (item === undefined) break
      node = item
      best = rangeOf(node) ?? best
    } else break
  }
  if (!best) return undefined
  const pos = parsed.lines.linePos(best[0])
  return { line: pos.line, column: pos.col }
}

/** Position of a top-level key (for unknown-field errors). */
export function keyPosition(parsed: ParsedYaml, key: string): { line: number; column: number } | undefined {
  if (!parsed.doc || !parsed.lines) return undefined
  const root = parsed.doc.contents
  if (!isMap(root)) return undefined
  const pair = root.items.find((it) => isPair(it) && isScalar(it.key) && String(it.key.value) === key)
  const r = pair ? rangeOf(pair.key) : undefined
  if (!r) return undefined
  const pos = parsed.lines.linePos(r[0])
  return { line: pos.line, column: pos.col }
}

function rangeOf(node: unknown): [number, number, number] | undefined {
  const r = (node as { range?: [number, number, number] } | null)?.range
  return r ?? undefined
}

/** Adds line/column to each issue that has a pointer, and "(line N)" to its message. */
export function locate(parsed: ParsedYaml, issues: Issue[], path?: string): Issue[] {
  return issues.map((issue) => {
    if (issue.pointer === undefined || issue.line !== undefined) return { path, ...issue }
    const pos = positionOf(parsed, issue.pointer)
    return pos ? { path, ...issue, line: pos.line, column: pos.column, message: `${issue.message} (line ${pos.line})` } : { path, ...issue }
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
