/**
 * Strict tools (`strict: true`): the provider samples the call's arguments under a grammar built
 * from the tool's schema, so it accepts only schemas inside its strict subset, and Anthropic caps
 * what one request may make strict (the profile's `strict: { maxTools, maxOptionalParams,
 * maxUnionParams }`). A tool whose schema is outside the subset, or that would pass a cap, is
 * rendered without `strict` and the manifest says why: a strict request the provider rejects fails
 * the whole turn, a non-strict tool only loses the guarantee.
 *
 * The subsets are deliberately conservative (the intersection of what the providers' pages
 * describe, read 2026-12-01): OpenAI Structured Outputs — every object closed
 * (`additionalProperties: false`) with every property required, the root an object, nesting at
 * most 10 levels, a fixed keyword list; Anthropic — every object closed, no numeric, length or
 * pattern constraints (its grammar compiler rejects or mis-sizes them). A schema we cannot judge
 * within the walk budget is not strict.
 */
import type { JsonSchema } from '../config/json-schema'
import type { Tool } from '../tools/contracts'

export type StrictDialect = 'openai' | 'anthropic'

/** The profile's caps on strict tools per request (Anthropic; absent = none). */
export interface StrictCaps {
  maxTools?: number
  maxOptionalParams?: number
  maxUnionParams?: number
}

/** Nodes walked per schema, shared nodes counted at every use: the cost of judging one tool is bounded whatever its schema. */
export const STRICT_WALK_NODES = 2_000
const OPENAI_MAX_DEPTH = 10

const COMMON_KEYWORDS = [
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'description',
  'title',
]
const KEYWORDS: Record<StrictDialect, ReadonlySet<string>> = {
  openai: new Set([
    ...COMMON_KEYWORDS,
    'pattern',
    'format',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
    'multipleOf',
    'minItems',
    'maxItems',
  ]),
  anthropic: new Set(COMMON_KEYWORDS),
}

/** What one schema adds to a request's strict totals (Anthropic counts them across the request). */
export interface StrictCost {
  optionalParams: number
  unionParams: number
}

type Verdict = { ok: true; cost: StrictCost } | { ok: false; reason: string }

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Whether a tool's input schema is inside the dialect's strict subset, and what it costs against the caps. */
export function judgeStrict(schema: JsonSchema, dialect: StrictDialect): Verdict {
  if (!isObj(schema) || schema.type !== 'object') return { ok: false, reason: 'the input schema is not an object schema' }
  const allowed = KEYWORDS[dialect]
  const cost: StrictCost = { optionalParams: 0, unionParams: 0 }
  let nodes = 0
  const walk = (node: unknown, at: string, depth: number): string | undefined => {
    if (++nodes > STRICT_WALK_NODES) return `the schema is larger than ${STRICT_WALK_NODES} nodes`
    if (typeof node === 'boolean') return node ? `${at || '/'} accepts anything` : undefined
    if (!isObj(node)) return `${at || '/'} is not a schema`
    if (dialect === 'openai' && depth > OPENAI_MAX_DEPTH) return `${at} nests deeper than ${OPENAI_MAX_DEPTH} levels`
    for (const k of Object.keys(node)) if (!allowed.has(k)) return `${at || '/'} uses '${k}'`
    const properties = node.properties
    const isObject = node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object')) || isObj(properties)
    if (isObject) {
      if (node.additionalProperties !== false) return `${at || '/'} does not set additionalProperties: false`
      const required = new Set(Array.isArray(node.required) ? node.required : [])
      for (const [name, sub] of Object.entries(isObj(properties) ? properties : {})) {
        if (!required.has(name)) {
          if (dialect === 'openai') return `${at}/properties/${name} is optional (strict needs every property required)`
          cost.optionalParams++
        }
        if (isObj(sub) && (Array.isArray(sub.anyOf) || Array.isArray(sub.type))) cost.unionParams++
        const why = walk(sub, `${at}/properties/${name}`, depth + 1)
        if (why) return why
      }
    }
    if (node.items !== undefined) {
      const why = walk(node.items, `${at}/items`, depth + 1)
      if (why) return why
    }
    if (Array.isArray(node.anyOf)) {
      if (at === '' && dialect === 'openai') return 'the root is an anyOf'
      for (const [i, sub] of node.anyOf.entries()) {
        const why = walk(sub, `${at}/anyOf/${i}`, depth + 1)
        if (why) return why
      }
    }
    for (const defs of ['$defs', 'definitions'] as const) {
      const d = node[defs]
      if (!isObj(d)) continue
      for (const [name, sub] of Object.entries(d)) {
        const why = walk(sub, `${at}/${defs}/${name}`, depth + 1)
        if (why) return why
      }
    }
    if (typeof node.$ref === 'string' && !/^#\/(\$defs|definitions)\//.test(node.$ref)) return `${at || '/'} refers outside the schema`
    return undefined
  }
  const why = walk(schema, '', 0)
  return why ? { ok: false, reason: why } : { ok: true, cost }
}

const verdicts: Record<StrictDialect, WeakMap<Tool, Verdict>> = { openai: new WeakMap(), anthropic: new WeakMap() }
/** Judged once per tool object and dialect (tool objects are cached by document version). */
function verdictOf(tool: Tool, dialect: StrictDialect): Verdict {
  let v = verdicts[dialect].get(tool)
  if (!v) verdicts[dialect].set(tool, (v = judgeStrict(tool.inputSchema, dialect)))
  return v
}

export interface StrictPlan {
  /** Tools rendered with `strict: true`. */
  strict: ReadonlySet<Tool>
  /** Tools asked for strict but rendered without it, with the reason: the schema's, or the cap that was full. */
  notStrict: Record<string, string>
}

/**
 * Which tools of a manifest go strict, most important first (`ranked`: the triage's order), each
 * while the caps still have room; a tool that does not fit a cap leaves room for later, smaller ones.
 */
export function planStrict(ranked: readonly Tool[], dialect: StrictDialect, caps: StrictCaps = {}): StrictPlan {
  const strict = new Set<Tool>()
  const notStrict: Record<string, string> = {}
  let optional = 0
  let union = 0
  for (const t of ranked) {
    const v = verdictOf(t, dialect)
    if (!v.ok) {
      notStrict[t.name] = v.reason
      continue
    }
    const over =
      caps.maxTools !== undefined && strict.size + 1 > caps.maxTools
        ? `maxTools: ${caps.maxTools} strict tools per request`
        : caps.maxOptionalParams !== undefined && optional + v.cost.optionalParams > caps.maxOptionalParams
          ? `maxOptionalParams: ${caps.maxOptionalParams} optional parameters across strict tools`
          : caps.maxUnionParams !== undefined && union + v.cost.unionParams > caps.maxUnionParams
            ? `maxUnionParams: ${caps.maxUnionParams} union-typed parameters across strict tools`
            : undefined
    if (over) {
      notStrict[t.name] = over
      continue
    }
    strict.add(t)
    optional += v.cost.optionalParams
    union += v.cost.unionParams
  }
  return { strict, notStrict }
}

/** The strictest caps over a model chain: the minimum of each cap any entry states. */
export function strictestCaps(all: readonly (StrictCaps | undefined)[]): StrictCaps | undefined {
  const out: StrictCaps = {}
  for (const caps of all) {
    if (!caps) continue
    for (const k of ['maxTools', 'maxOptionalParams', 'maxUnionParams'] as const) {
      const v = caps[k]
      if (v !== undefined) out[k] = out[k] === undefined ? v : Math.min(out[k], v)
    }
  }
  return Object.keys(out).length ? out : undefined
}
