/**
 * Code mode's typed API (issue 27): a TypeScript declaration of the tools a process can call now,
 * generated from their parameter (and output) schemas. The model reads it in the code tool's
 * description and writes one script against `tools`; the runtime map built beside it turns each
 * property path back into the tool's name. Packs (`crm__find`) are nested objects (`tools.crm.find`),
 * names that are not identifiers are quoted, and the text is in name order so it stays
 * byte-identical between turns whose tools did not change (prompt caching).
 */
import type { JsonSchema } from '../config/json-schema'
import type { Tool } from './contracts'

/** A schema nested deeper than this is typed `unknown` below that depth: its cost is bounded, not its shape. */
const MAX_TYPE_DEPTH = 6
/** At most this many members of one object, enum or union are typed; the rest collapse to an index signature or `unknown`. */
const MAX_MEMBERS = 64
/** One tool's JSDoc is cut here (descriptions can be pages long). */
const MAX_DOC_CHARS = 600

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

export const CODE_TOOL = 'execute_code'

/** Property path → tool name: a tool is a string leaf, a pack a nested map. */
export interface CodeApiMap {
  [key: string]: string | CodeApiMap
}

export interface CodeDeclaration {
  /** The declaration text (TypeScript). */
  text: string
  /** What the runtime prelude builds `tools` from. */
  map: CodeApiMap
  /** Tools in the declaration, in its order. */
  names: string[]
}

const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name))

/** JSDoc body text: no comment terminator, no blank runs. */
function docText(text: string): string {
  const flat = text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim()
  return flat.length > MAX_DOC_CHARS ? `${flat.slice(0, MAX_DOC_CHARS - 1).trimEnd()}…` : flat
}

function doc(lines: string[], indent: string): string {
  const body = lines.map(docText).filter(Boolean)
  if (!body.length) return ''
  if (body.length === 1) return `${indent}/** ${body[0]} */\n`
  return `${indent}/**\n${body.map((l) => `${indent} * ${l}`).join('\n')}\n${indent} */\n`
}

function literal(v: unknown): string {
  if (v === null) return 'null'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'number'
  if (typeof v === 'boolean') return String(v)
  return 'unknown'
}

const union = (parts: string[]) => {
  const unique = [...new Set(parts)]
  if (unique.includes('unknown')) return 'unknown'
  return unique.length ? unique.join(' | ') : 'never'
}

/** A JSON Schema as a TypeScript type; `$ref`s are not followed (typed `unknown`), so the work is bounded by the schema's own size. */
export function typeOf(schema: JsonSchema | boolean | undefined, depth = 0, indent = ''): string {
  if (schema === undefined || schema === true) return 'unknown'
  if (schema === false) return 'never'
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'unknown'
  if (depth > MAX_TYPE_DEPTH) return 'unknown'
  const s = schema as Record<string, unknown>
  if ('const' in s) return literal(s.const)
  if (Array.isArray(s.enum)) return s.enum.length <= MAX_MEMBERS ? union(s.enum.map(literal)) : 'unknown'
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = s[k]
    if (Array.isArray(alts) && alts.length)
      return alts.length <= MAX_MEMBERS ? union(alts.map((a) => wrap(typeOf(a as JsonSchema, depth + 1, indent)))) : 'unknown'
  }
  if (Array.isArray(s.allOf) && s.allOf.length) {
    const parts = s.allOf.slice(0, MAX_MEMBERS).map((a) => wrap(typeOf(a as JsonSchema, depth + 1, indent)))
    return parts.includes('never') ? 'never' : parts.filter((p) => p !== 'unknown').join(' & ') || 'unknown'
  }
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? undefined : [s.type]
  if (!types) return s.properties || s.additionalProperties ? objectType(s, depth, indent) : 'unknown'
  return union(types.map((t) => single(String(t), s, depth, indent)))
}

const wrap = (t: string) => (/[|&]/.test(t) && !t.startsWith('{') ? `(${t})` : t)

function single(type: string, s: Record<string, unknown>, depth: number, indent: string): string {
  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      if (Array.isArray(s.items))
        return `[${s.items
          .slice(0, MAX_MEMBERS)
          .map((i) => typeOf(i as JsonSchema, depth + 1, indent))
          .join(', ')}]`
      return `${wrap(typeOf(s.items as JsonSchema | undefined, depth + 1, indent))}[]`
    }
    case 'object':
      return objectType(s, depth, indent)
    default:
      return 'unknown'
  }
}

function objectType(s: Record<string, unknown>, depth: number, indent: string): string {
  const props = s.properties && typeof s.properties === 'object' ? Object.entries(s.properties as Record<string, JsonSchema>) : []
  const required = new Set(Array.isArray(s.required) ? (s.required as unknown[]).filter((r) => typeof r === 'string') : [])
  const inner = `${indent}  `
  const lines: string[] = []
  for (const [name, p] of props.slice(0, MAX_MEMBERS)) {
    const description = p && typeof p === 'object' && typeof (p as { description?: unknown }).description === 'string'
    const d = description ? doc([(p as { description: string }).description], inner) : ''
    lines.push(`${d}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(p, depth + 1, inner)}`)
  }
  const extra = s.additionalProperties
  if (props.length > MAX_MEMBERS) lines.push(`${inner}[key: string]: unknown`)
  else if (extra && typeof extra === 'object')
    lines.push(`${inner}[key: string]: ${props.length ? 'unknown' : typeOf(extra as JsonSchema, depth + 1, inner)}`)
  else if (!props.length) return extra === false ? 'Record<string, never>' : 'Record<string, unknown>'
  return `{\n${lines.join('\n')}\n${indent}}`
}

/** `pack__local` → [pack, local]; anything else → [name]. */
function pathOf(t: Tool): string[] {
  const sep = t.name.indexOf('__')
  return sep > 0 && sep < t.name.length - 2 ? [t.name.slice(0, sep), t.name.slice(sep + 2)] : [t.name]
}

function member(t: Tool, local: string, indent: string): string {
  const docs = [t.description]
  if (t.labels.includes('destructive')) docs.push('Destructive: refused from code unless the recipe sets codeAllowDestructive.')
  const params = typeOf(t.inputSchema ?? { type: 'object' }, 1, indent)
  const optional =
    !Array.isArray((t.inputSchema as { required?: unknown } | undefined)?.required) ||
    !(t.inputSchema as { required: unknown[] }).required.length
  const out = t.outputSchema ? typeOf(t.outputSchema, 1, indent) : 'unknown'
  return `${doc(docs, indent)}${indent}${key(local)}(params${optional ? '?' : ''}: ${params}): Promise<${out}>`
}

/**
 * The declaration of `tools`, in name order. A pack whose name is also a loose tool's stays flat
 * (`tools["crm__find"]`), so no path means two things.
 */
export function codeDeclaration(tools: readonly Tool[]): CodeDeclaration {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const loose = new Set(sorted.filter((t) => pathOf(t).length === 1).map((t) => t.name))
  const packs = new Map<string, Tool[]>()
  const entries: { sortKey: string; text: string }[] = []
  const map: CodeApiMap = {}
  for (const t of sorted) {
    const path = pathOf(t)
    if (path.length === 2 && !loose.has(path[0])) {
      let members = packs.get(path[0])
      if (!members) packs.set(path[0], (members = []))
      members.push(t)
    } else {
      entries.push({ sortKey: t.name, text: member(t, t.name, '  ') })
      map[t.name] = t.name
    }
  }
  for (const [pack, members] of packs) {
    const hint = members.map((m) => m.promptHint?.trim()).find(Boolean)
    const sub: CodeApiMap = {}
    const lines = members.map((m) => {
      const local = pathOf(m)[1]
      sub[local] = m.name
      return member(m, local, '    ')
    })
    map[pack] = sub
    entries.push({ sortKey: pack, text: `${doc(hint ? [hint] : [], '  ')}  readonly ${key(pack)}: {\n${lines.join('\n')}\n  }` })
  }
  entries.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0))
  const text =
    "/** The tools you can call. Each call returns a Promise of the tool's result; a refused or failing call rejects with an Error saying why. */\n" +
    `interface Tools {\n${entries.map((e) => e.text).join('\n')}\n}\ndeclare const tools: Tools\n`
  return { text, map, names: sorted.map((t) => t.name) }
}

/** The declaration's size as the model receives it (UTF-8 bytes). */
const utf8 = new TextEncoder()
export const declarationBytes = (d: CodeDeclaration) => utf8.encode(d.text).length

/** Pieces a BPE tokenizer rarely merges across: a word, up to 3 digits, a punctuation run, each with its leading space; whitespace runs. */
const TOKEN_PIECES = / ?[A-Za-z]+| ?\d{1,3}| ?[^\sA-Za-z\d]+|\s+(?!\S)|\s+/gu

/**
 * About how many tokens a model reads for `text`: the count of the pieces a GPT-style
 * pre-tokenizer splits it into. The service bundles no tokenizer (its vocabulary is megabytes);
 * test/unit/surface/code-declaration-tokens.test.ts holds it within 25 % of o200k_base on English,
 * German, Japanese and odd-name declarations.
 */
export function estimateTokens(text: string): number {
  let n = 0
  TOKEN_PIECES.lastIndex = 0
  while (TOKEN_PIECES.exec(text) !== null) n++
  return n
}
