/**
 * Resolving an OpenAPI 3.0/3.1 document's local `$ref`s into self-contained JSON Schemas a model
 * can read. Reading the document is ./read, which a configuration's check needs without the rest.
 */
import type { ExpansionBudget } from '../../../config/expansion-budget'
import { countNodes } from '../../../config/expansion-budget'
import type { JsonSchema } from '../../../config/json-schema'
import type { OpenApiDocument } from './read'

export { type OpenApiDocument, type ReadResult, readOpenApi, readOpenApiInSlices } from './read'

/**
 * The value a local reference (`#/components/schemas/Pet`) points at; undefined when dangling or
 * external. `steps` is charged one unit per pointer segment walked: a pointer is tenant input and
 * each time one is followed costs its length again. The walk itself is done once per document
 * and reference (the charge is not): a shared reference followed 100,000 times was split and
 * percent-decoded 100,000 times, the largest cost of a spec built on sharing (issue 21 N3).
 */
export function resolvePointer(doc: OpenApiDocument, ref: string, steps?: ExpansionBudget): unknown {
  const r = pointer(doc, ref)
  steps?.spend(r.segments)
  return r.target
}

function pointer(doc: OpenApiDocument, ref: string): { target: unknown; segments: number } {
  let known = resolved.get(doc)
  if (!known) resolved.set(doc, (known = new Map()))
  let r = known.get(ref)
  if (!r) known.set(ref, (r = walkPointer(doc, ref)))
  return r
}

/** Pointers already walked, per document (documents are never changed once read). */
const resolved = new WeakMap<object, Map<string, { target: unknown; segments: number }>>()

/** How many distinct pointers of `doc` have been walked (what following them really cost). */
export const pointersWalked = (doc: OpenApiDocument): number => resolved.get(doc)?.size ?? 0

function walkPointer(doc: OpenApiDocument, ref: string): { target: unknown; segments: number } {
  if (!ref.startsWith('#')) return { target: undefined, segments: 0 }
  let cur: any = doc
  const path = ref.slice(1)
  if (path === '') return { target: doc, segments: 0 }
  if (!path.startsWith('/')) return { target: undefined, segments: 0 }
  const parts = path.split('/').slice(1)
  for (const raw of parts) {
    let part: string
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return { target: undefined, segments: parts.length }
    }
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return { target: undefined, segments: parts.length }
    cur = cur[part]
  }
  return { target: cur, segments: parts.length }
}

/**
 * Follows `$ref` chains on a non-schema object (a parameter, request body, response, path item).
 * Every reference followed is charged to `steps` (issue 21 N3: a path item shared by `$ref`
 * brings its whole parameter list along each time it is used). A chain is followed once per
 * document and starting reference, up to what `steps` may spend; every later use is charged the
 * same segments at once (a chain of 5,000 parameter `$ref`s used by 400 operations was followed
 * 400 times).
 */
export function deref<T = any>(doc: OpenApiDocument, value: any, problems?: string[], steps?: ExpansionBudget): T | undefined {
  if (!value || typeof value !== 'object' || typeof value.$ref !== 'string') return value as T
  let chains = followed.get(doc)
  if (!chains) followed.set(doc, (chains = new Map()))
  const limit = steps?.limit ?? Number.POSITIVE_INFINITY
  let chain = chains.get(value.$ref)
  if (!chain || (!chain.complete && chain.limit !== limit)) chains.set(value.$ref, (chain = followChain(doc, value.$ref, limit)))
  if (chain.problem) problems?.push(chain.problem)
  steps?.spendAll(chain.segments)
  return chain.target as T
}

/** A `$ref` chain as one walk found it: where it ends, the pointer segments it took, what was wrong with it. */
interface Chain {
  target: unknown
  segments: number
  problem?: string
  /** Walked to its end (not stopped past `limit` segments). */
  complete: boolean
  limit: number
}

const followed = new WeakMap<object, Map<string, Chain>>()

function followChain(doc: OpenApiDocument, ref: string, limit: number): Chain {
  const seen = new Set<string>()
  let segments = 0
  let cur: any = { $ref: ref }
  while (cur && typeof cur === 'object' && typeof cur.$ref === 'string') {
    if (seen.has(cur.$ref)) return { target: undefined, segments, problem: `circular reference ${cur.$ref}`, complete: true, limit }
    seen.add(cur.$ref)
    const next = pointer(doc, cur.$ref)
    segments += next.segments
    if (next.target === undefined)
      return {
        target: undefined,
        segments,
        problem: `unresolved reference ${cur.$ref}${cur.$ref.startsWith('#') ? '' : ' (only local references are supported)'}`,
        complete: true,
        limit,
      }
    // past what the caller may spend: the charge refuses it, whatever lies further down the chain
    if (segments > limit) return { target: undefined, segments, complete: false, limit }
    cur = next.target
  }
  return { target: cur, segments, complete: true, limit }
}

/** Formats the service's Ajv knows (ajv-formats, plus OpenAPI's numeric ones); others are dropped. */
const KNOWN_FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
])

/** Keywords that say nothing to a model or a validator and only cost tokens. */
const DROPPED = new Set([
  '$id',
  '$schema',
  '$comment',
  'xml',
  'externalDocs',
  'discriminator',
  'example',
  'examples',
  'nullable',
  'deprecated',
  '$anchor',
  '$dynamicAnchor',
  'definitions',
  '$defs',
])

export interface InlineOptions {
  /** Nesting of inlined references before a branch is cut (default 8). */
  maxDepth?: number
  /** Drop `readOnly` properties (request bodies) or `writeOnly` ones (responses). */
  drop?: 'readOnly' | 'writeOnly'
  /**
   * Charged one unit per node produced, each use of a shared node again (a `required` list, an
   * enum, a default kept by reference is rendered once per use); throws BudgetExceeded when spent
   * (issue 10 F1, issue 21 N2).
   */
  budget?: ExpansionBudget
  /** Charged one unit per pointer segment of each `$ref` followed. */
  steps?: ExpansionBudget
}

/**
 * A self-contained JSON Schema: local `$ref`s inlined, recursion cut into an open object with a
 * description, OpenAPI 3.0 `nullable` turned into a type union, unknown formats and doc-only
 * keywords dropped.
 */
export function inlineSchema(doc: OpenApiDocument, schema: unknown, problems: string[], opts: InlineOptions = {}): JsonSchema {
  const out = walk(doc, schema, problems, opts, [], 0)
  return out && typeof out === 'object' && !Array.isArray(out) ? (out as JsonSchema) : {}
}

function walk(doc: OpenApiDocument, s: unknown, problems: string[], opts: InlineOptions, stack: string[], depth: number): unknown {
  opts.budget?.spend()
  if (s === true || s === false) return s
  if (!s || typeof s !== 'object' || Array.isArray(s)) return {}
  const src = s as Record<string, any>
  if (typeof src.$ref === 'string') {
    const ref = src.$ref
    const name = ref.split('/').pop()
    if (stack.includes(ref) || depth >= (opts.maxDepth ?? 8)) {
      return { type: 'object', description: `${name} (nested further; see the API documentation)` }
    }
    const target = resolvePointer(doc, ref, opts.steps)
    if (target === undefined) {
      problems.push(`unresolved reference ${ref}${ref.startsWith('#') ? '' : ' (only local references are supported)'}`)
      return {}
    }
    const inlined = walk(doc, target, problems, opts, [...stack, ref], depth + 1) as Record<string, unknown>
    // 3.1 allows siblings next to $ref (description, …): they refine the target
    const siblings = Object.fromEntries(Object.entries(src).filter(([k]) => k !== '$ref' && !DROPPED.has(k)))
    return Object.keys(siblings).length ? { ...inlined, ...walkObject(doc, siblings, problems, opts, stack, depth) } : inlined
  }
  const out = walkObject(doc, src, problems, opts, stack, depth)
  if (src.nullable === true && out.type !== undefined) {
    const types = Array.isArray(out.type) ? out.type : [out.type]
    out.type = types.includes('null') ? types : [...types, 'null']
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
  }
  return out
}

function walkObject(
  doc: OpenApiDocument,
  src: Record<string, any>,
  problems: string[],
  opts: InlineOptions,
  stack: string[],
  depth: number,
): Record<string, any> {
  const out: Record<string, any> = {}
  const sub = (v: unknown) => walk(doc, v, problems, opts, stack, depth)
  for (const [k, v] of Object.entries(src)) {
    if (DROPPED.has(k) || k.startsWith('x-')) continue
    switch (k) {
      case 'format':
        if (typeof v === 'string' && KNOWN_FORMATS.has(v)) out.format = v
        break
      case 'properties':
      case 'patternProperties':
        if (v && typeof v === 'object') {
          const props: Record<string, unknown> = {}
          for (const [name, ps] of Object.entries(v)) {
            if (opts.drop && ps && typeof ps === 'object' && (ps as Record<string, unknown>)[opts.drop] === true) continue
            props[name] = sub(ps)
          }
          out[k] = props
        }
        break
      case 'items':
        out.items = Array.isArray(v) ? v.map(sub) : sub(v)
        break
      case 'prefixItems':
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        if (Array.isArray(v)) out[k] = v.map(sub)
        break
      case 'additionalProperties':
      case 'not':
      case 'contains':
      case 'propertyNames':
      case 'if':
      case 'then':
      case 'else':
      case 'unevaluatedProperties':
      case 'unevaluatedItems':
        out[k] = typeof v === 'boolean' ? v : sub(v)
        break
      default:
        // required lists, enums, defaults: kept by reference, not copied, but every use is rendered
        // in full for ajv and the model, so every use is charged (issue 21 N2)
        if (k === 'required' && !Array.isArray(v)) break
        if (opts.budget && v && typeof v === 'object') opts.budget.spend(countNodes(v, opts.budget.limit))
        out[k] = v
    }
  }
  if (opts.drop && Array.isArray(out.required) && out.properties) {
    out.required = out.required.filter((r: string) => Object.hasOwn(out.properties, r))
    if (!out.required.length) delete out.required
  }
  return out
}

/** The server URL of a document: `servers[0].url` with its variables' defaults. */
export function serverUrl(doc: OpenApiDocument): string | undefined {
  const server = Array.isArray(doc.servers) ? doc.servers[0] : undefined
  if (!server || typeof server.url !== 'string') return undefined
  return server.url.replace(/\{([^}]+)\}/g, (whole: string, name: string) => {
    const def = server.variables?.[name]?.default
    return typeof def === 'string' ? def : whole
  })
}
