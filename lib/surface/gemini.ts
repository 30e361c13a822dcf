/**
 * JSON Schema to Gemini's function `parameters` (the `Schema` message of
 * google/ai/generativelanguage/v1beta/content.proto in googleapis/googleapis @ c76b740: an
 * OpenAPI 3.0 subset with upper-case types). That message is what Google publishes in a form we
 * can read and hold renderings to (test/fixtures/provider-tools/gemini-tools.schema.json); the
 * newer `parametersJsonSchema` field is described in Google's generated clients but not in that
 * publication, so the subset is the form every API revision accepts.
 *
 * The walk is bounded in nodes visited (shared `$ref`s counted at every use), not in how the
 * schema looks: past the budget a subtree becomes a bare `OBJECT` and says so. Whatever
 * the subset cannot carry is left out and named by JSON pointer, so the caller can say what the
 * model will not see.
 */
import type { JsonSchema } from '../config/json-schema'

/** Nodes one tool's translation may visit. */
export const GEMINI_SCHEMA_NODES = 2_000

type Node = Record<string, unknown>
export interface GeminiSchema {
  schema: Node
  /** JSON pointers (into the tool's input schema) of what the subset cannot carry. */
  dropped: string[]
}

const TYPES: Record<string, string> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
}
/** The formats the proto lists per type; any other is dropped rather than refused. */
const FORMATS: Record<string, readonly string[]> = {
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
  STRING: ['enum', 'date-time'],
}
/** Keywords read here (carried, or folded into something carried); anything else is reported. */
const READ = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'const',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'default',
  '$ref',
  '$defs',
  'definitions',
  '$schema',
  '$id',
  '$comment',
  'examples',
])

const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')
const isObj = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)

export function toGeminiSchema(input: JsonSchema, budget: number = GEMINI_SCHEMA_NODES): GeminiSchema {
  const root = isObj(input) ? input : {}
  const dropped: string[] = []
  let left = budget

  const resolve = (ref: string): unknown => {
    // only references inside the tool's own schema: the manifest never fetches
    if (ref === '#') return root
    if (!ref.startsWith('#/')) return undefined
    let at: unknown = root
    for (const part of ref.slice(2).split('/')) {
      if (!isObj(at)) return undefined
      at = at[part.replace(/~1/g, '/').replace(/~0/g, '~')]
    }
    return at
  }

  const walk = (raw: unknown, at: string): Node => {
    if (--left < 0) {
      dropped.push(`${at || '/'} (over ${budget} nodes)`)
      return { type: 'OBJECT' }
    }
    let s = isObj(raw) ? raw : {}
    for (let hops = 0; typeof s.$ref === 'string' && hops < 8; hops++) {
      const target = resolve(s.$ref)
      if (!isObj(target)) {
        dropped.push(`${at}/$ref`)
        s = {}
        break
      }
      // the referring node's own annotations win over the target's (JSON Schema 2020-12 reads both)
      const { $ref: _, ...own } = s
      s = { ...target, ...own }
    }
    // each keyword read costs a node too, so a node of a million keys costs the budget, not a million
    for (const k in s) {
      if (READ.has(k)) continue
      if (--left < 0) {
        dropped.push(`${at} (over ${budget} nodes)`)
        break
      }
      dropped.push(`${at}/${esc(k)}`)
    }

    // unions: a nullable pair becomes `nullable`; others keep anyOf when the subset can carry it
    const union = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined
    const unionKey = Array.isArray(s.anyOf) ? 'anyOf' : 'oneOf'
    // arrays inside a node (type lists, enums, required) cost their length, like nodes
    const charge = (a: unknown[]) => {
      left -= a.length
      return left >= 0
    }
    let types = (Array.isArray(s.type) ? (charge(s.type) ? s.type : []) : typeof s.type === 'string' ? [s.type] : []) as unknown[]
    if (Array.isArray(s.type) && !types.length) dropped.push(`${at}/type (over ${budget} nodes)`)
    let nullable = s.nullable === true
    if (types.includes('null')) {
      nullable = true
      types = types.filter((t) => t !== 'null')
    }
    const out: Node = {}
    if (union) {
      // [index in the union, walked branch]; a `null` branch makes the rest nullable
      const walked: [number, Node][] = []
      let cut = -1
      for (let i = 0; i < union.length; i++) {
        const b = union[i]
        if (isObj(b) && b.type === 'null') {
          nullable = true
          continue
        }
        if (left <= 0 && walked.length) {
          cut = i
          break
        }
        walked.push([i, walk(b, `${at}/${unionKey}/${i}`)])
      }
      if (cut >= 0) dropped.push(`${at}/${unionKey}/${cut}- (over ${budget} nodes)`)
      if (walked.length === 1 && types.length === 0) {
        // `anyOf: [X, null]`: X, nullable, with the union's own annotations
        const inner = { ...walked[0][1], ...annotations(s) }
        if (nullable) inner.nullable = true
        return inner
      }
      const common = new Set(walked.map(([, b]) => b.type))
      // Schema.type is required: a union of one type keeps it; a union of several has no type the
      // message can state, so its first branch stands in and the rest are reported
      if (common.size === 1) {
        out.type = walked[0][1].type
        out.anyOf = walked.map(([, b]) => b)
      } else {
        for (const [i] of walked.slice(1)) dropped.push(`${at}/${unionKey}/${i}`)
        Object.assign(out, walked[0]?.[1] ?? { type: 'STRING' })
      }
    }
    if (types.length > 1) dropped.push(`${at}/type/1${types.length > 2 ? `-${types.length - 1}` : ''}`)
    let type = typeof types[0] === 'string' ? TYPES[types[0] as string] : undefined
    if (!type && !out.type) {
      if (isObj(s.properties)) type = 'OBJECT'
      else if (s.items !== undefined) type = 'ARRAY'
      else if (Array.isArray(s.enum) || typeof s.const === 'string') type = 'STRING'
      else if (!union) type = 'OBJECT'
    }
    if (type) out.type = type
    const t = out.type as string
    if (typeof s.title === 'string') out.title = s.title
    if (typeof s.description === 'string') out.description = s.description
    if (nullable) out.nullable = true
    if (typeof s.format === 'string') {
      if (FORMATS[t]?.includes(s.format)) out.format = s.format
      else dropped.push(`${at}/format`)
    }
    const values = Array.isArray(s.enum) ? s.enum : s.const !== undefined ? [s.const] : undefined
    if (values) {
      // Gemini enums are strings of a STRING schema
      if (!charge(values)) dropped.push(`${at}/enum (over ${budget} nodes)`)
      else if (t === 'STRING' && values.every((v) => typeof v === 'string')) {
        out.enum = values
        out.format = 'enum'
      } else dropped.push(`${at}/${Array.isArray(s.enum) ? 'enum' : 'const'}`)
    }
    if (t === 'ARRAY') {
      out.items = walk(s.items, `${at}/items`)
      if (Number.isInteger(s.minItems)) out.minItems = String(s.minItems)
      if (Number.isInteger(s.maxItems)) out.maxItems = String(s.maxItems)
    }
    if (t === 'OBJECT' && isObj(s.properties)) {
      const props: Node = {}
      for (const k in s.properties) {
        if (left <= 0) {
          dropped.push(`${at}/properties (over ${budget} nodes)`)
          break
        }
        props[k] = walk(s.properties[k], `${at}/properties/${esc(k)}`)
      }
      out.properties = props
      if (Array.isArray(s.required) && charge(s.required)) {
        const req = s.required.filter((r): r is string => typeof r === 'string' && r in props)
        if (req.length) out.required = req
      }
    }
    if ((t === 'NUMBER' || t === 'INTEGER') && typeof s.minimum === 'number') out.minimum = s.minimum
    if ((t === 'NUMBER' || t === 'INTEGER') && typeof s.maximum === 'number') out.maximum = s.maximum
    if (s.default !== undefined) out.default = s.default
    return out
  }

  const schema = walk(root, '')
  if (schema.type !== 'OBJECT') {
    // a function's parameters are an object; anything else is wrapped out of reach of the model
    dropped.push('/type')
    return { schema: { type: 'OBJECT' }, dropped }
  }
  return { schema, dropped }
}

function annotations(s: Node): Node {
  const out: Node = {}
  if (typeof s.title === 'string') out.title = s.title
  if (typeof s.description === 'string') out.description = s.description
  if (s.default !== undefined) out.default = s.default
  return out
}

/**
 * The manifest body's `schemaDropped` member for the Gemini form: per tool (by its own name) the
 * pointers its parameters lost in translation, empty when nothing was lost.
 */
export function geminiDroppedJson(tools: readonly { name: string; inputSchema: JsonSchema }[]): string {
  const out: Record<string, string[]> = {}
  for (const t of tools) {
    const { dropped } = toGeminiSchema(t.inputSchema)
    if (dropped.length) out[t.name] = dropped
  }
  return `,"schemaDropped":${JSON.stringify(out)}`
}
