/**
 * A JSON Schema (draft-07 subset) validator that interprets the schema instead of compiling it.
 *
 * Why: Ajv generates code per schema, and validating its first schema compiles the meta-schema;
 * measured on the Lambda bundle that is ~150–250 ms of a cold start, more than the whole cold start
 * of a bare Hono + DynamoDB handler. The schemas tools actually carry (objects, strings, enums,
 * arrays, numbers, local `$ref`s, `anyOf`…) need none of that, so they are interpreted here and
 * Ajv is loaded only for a schema that uses something this subset does not know
 * (`supportsSchema` says which). Errors have Ajv's shape (keyword, instancePath, params,
 * message), so one `issuesFromAjv` turns both into Issues.
 *
 * Work is bounded: every keyword visit costs one step from a budget, so a `$ref` cycle or a
 * hostile schema/value pair ends in a `budget` error instead of a stall.
 */
import type { ErrorObject } from 'ajv'
import { WORK_BUDGETS } from './expansion-budget'
import type { JsonSchema } from './json-schema'

/** Keywords interpreted here; annotations that never fail validation are listed too. */
const KNOWN = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$ref',
  'definitions',
  '$defs',
  'format',
  // annotations
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'example',
  'readOnly',
  'writeOnly',
  'deprecated',
  'nullable',
])

/** Formats checked here as ajv-formats' "full" mode checks them; any other format goes to Ajv. */
const FORMATS: Record<string, (s: string) => boolean> = {
  uuid: (s) => /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(s),
  date: (s) => {
    const m = /^(\d\d\d\d)-(\d\d)-(\d\d)$/.exec(s)
    if (!m) return false
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
    const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
    const days = [0, 31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo]
  },
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  password: () => true,
  binary: () => true,
}

const NUMERIC_FORMATS: Record<string, (n: number) => boolean> = {
  int32: (n) => Number.isInteger(n) && n <= 2 ** 31 - 1 && n >= -(2 ** 31),
  int64: (n) => Number.isInteger(n),
  float: () => true,
  double: () => true,
}

const MAX_STEPS = WORK_BUDGETS.schemaValidation.limit
/** Nesting of schema visits (a `$ref` cycle nests without consuming the value). */
const MAX_DEPTH = WORK_BUDGETS.schemaDepth.limit
const MAX_SCHEMA_NODES = 20_000

type Schema = JsonSchema | boolean

/** Whether every keyword and format in the schema is one this interpreter knows. */
export function supportsSchema(schema: unknown): boolean {
  let nodes = 0
  const visit = (s: unknown, depth: number): boolean => {
    if (typeof s === 'boolean') return true
    if (!s || typeof s !== 'object' || Array.isArray(s) || depth > 64 || ++nodes > MAX_SCHEMA_NODES) return false
    for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
      if (!KNOWN.has(k)) return false
      switch (k) {
        case 'properties':
        case 'definitions':
        case '$defs':
          if (!v || typeof v !== 'object' || Array.isArray(v)) return false
          for (const sub of Object.values(v as Record<string, unknown>)) if (!visit(sub, depth + 1)) return false
          break
        case 'additionalProperties':
        case 'not':
        case 'items':
          if (Array.isArray(v) || !visit(v, depth + 1)) return false // tuple `items` goes to Ajv
          break
        case 'anyOf':
        case 'oneOf':
        case 'allOf':
          if (!Array.isArray(v) || v.length === 0) return false
          for (const sub of v) if (!visit(sub, depth + 1)) return false
          break
        case '$ref':
          if (typeof v !== 'string' || !(v === '#' || v.startsWith('#/'))) return false
          break
        case 'format':
          if (typeof v !== 'string' || !(v in FORMATS || v in NUMERIC_FORMATS)) return false
          break
        case 'pattern':
          if (typeof v !== 'string') return false
          try {
            new RegExp(v, 'u')
          } catch {
            return false
          }
          break
        case 'type': {
          const types = Array.isArray(v) ? v : [v]
          if (!types.every((t) => typeof t === 'string' && TYPES.has(t))) return false
          break
        }
        case 'required':
          if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return false
          break
        case 'enum':
          if (!Array.isArray(v)) return false
          break
        case 'minLength':
        case 'maxLength':
        case 'minItems':
        case 'maxItems':
        case 'minProperties':
        case 'maxProperties':
        case 'minimum':
        case 'maximum':
        case 'exclusiveMinimum':
        case 'exclusiveMaximum':
          if (typeof v !== 'number') return false // draft-04 boolean exclusives go to Ajv
          break
        case 'multipleOf':
          if (typeof v !== 'number' || v <= 0) return false
          break
        case 'uniqueItems':
        case 'nullable':
        case 'readOnly':
        case 'writeOnly':
        case 'deprecated':
          break
      }
    }
    return true
  }
  return visit(schema, 0)
}

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])

/** A validate function with Ajv's calling convention: returns validity, leaves `errors` behind. */
export interface InterpretedValidator {
  (value: unknown): boolean
  errors?: ErrorObject[] | null
}

/** A validator for a schema `supportsSchema` accepted. Regular expressions are built once. */
export function interpret(root: JsonSchema): InterpretedValidator {
  const patterns = new Map<string, RegExp>()
  const regex = (p: string) => {
    let r = patterns.get(p)
    if (!r) patterns.set(p, (r = new RegExp(p, 'u')))
    return r
  }
  const validate: InterpretedValidator = (value: unknown) => {
    const errors: ErrorObject[] = []
    let steps = 0
    let depth = 0
    const fail = (keyword: string, instancePath: string, schemaPath: string, params: Record<string, unknown>, message: string) => {
      errors.push({ keyword, instancePath, schemaPath, params, message } as ErrorObject)
    }

    const check = (schema: Schema, v: unknown, path: string, sp: string, out: boolean): boolean => {
      if (++steps > MAX_STEPS || depth > MAX_DEPTH) throw new SchemaBudgetError()
      depth++
      try {
        return checkNode(schema, v, path, sp, out)
      } finally {
        depth--
      }
    }
    const checkNode = (schema: Schema, v: unknown, path: string, sp: string, out: boolean): boolean => {
      if (schema === true) return true
      if (schema === false) {
        if (out) fail('false schema', path, sp, {}, 'boolean schema is false')
        return false
      }
      let ok = true
      const s = schema as Record<string, any>
      const report = (keyword: string, params: Record<string, unknown>, message: string) => {
        ok = false
        if (out) fail(keyword, path, `${sp}/${keyword}`, params, message)
      }
      if (s.$ref !== undefined) {
        const target = resolveRef(root, s.$ref)
        if (target === undefined) throw new Error(`can't resolve reference ${s.$ref}`)
        if (!check(target as Schema, v, path, `${sp}/$ref`, out)) ok = false
      }
      if (s.type !== undefined) {
        const types: string[] = Array.isArray(s.type) ? s.type : [s.type]
        if (!types.some((t) => hasType(v, t))) {
          report('type', { type: types.join(',') }, `must be ${types.join(',')}`)
        }
      }
      if (s.enum !== undefined && !s.enum.some((e: unknown) => deepEqual(e, v)))
        report('enum', { allowedValues: s.enum }, 'must be equal to one of the allowed values')
      if (s.const !== undefined && !deepEqual(s.const, v)) report('const', { allowedValue: s.const }, 'must be equal to constant')
      if (typeof v === 'string') {
        const len = [...v].length
        if (s.maxLength !== undefined && len > s.maxLength)
          report('maxLength', { limit: s.maxLength }, `must NOT have more than ${s.maxLength} characters`)
        if (s.minLength !== undefined && len < s.minLength)
          report('minLength', { limit: s.minLength }, `must NOT have fewer than ${s.minLength} characters`)
        if (s.pattern !== undefined && !regex(s.pattern).test(v))
          report('pattern', { pattern: s.pattern }, `must match pattern "${s.pattern}"`)
        if (s.format !== undefined && s.format in FORMATS && !(s.format in NUMERIC_FORMATS) && !FORMATS[s.format](v))
          report('format', { format: s.format }, `must match format "${s.format}"`)
      }
      if (typeof v === 'number') {
        if (s.maximum !== undefined && !(v <= s.maximum))
          report('maximum', { comparison: '<=', limit: s.maximum }, `must be <= ${s.maximum}`)
        if (s.minimum !== undefined && !(v >= s.minimum))
          report('minimum', { comparison: '>=', limit: s.minimum }, `must be >= ${s.minimum}`)
        if (s.exclusiveMaximum !== undefined && !(v < s.exclusiveMaximum))
          report('exclusiveMaximum', { comparison: '<', limit: s.exclusiveMaximum }, `must be < ${s.exclusiveMaximum}`)
        if (s.exclusiveMinimum !== undefined && !(v > s.exclusiveMinimum))
          report('exclusiveMinimum', { comparison: '>', limit: s.exclusiveMinimum }, `must be > ${s.exclusiveMinimum}`)
        if (s.multipleOf !== undefined && !isMultiple(v, s.multipleOf))
          report('multipleOf', { multipleOf: s.multipleOf }, `must be multiple of ${s.multipleOf}`)
        if (s.format !== undefined && s.format in NUMERIC_FORMATS && !NUMERIC_FORMATS[s.format](v))
          report('format', { format: s.format }, `must match format "${s.format}"`)
      }
      if (Array.isArray(v)) {
        if (s.maxItems !== undefined && v.length > s.maxItems)
          report('maxItems', { limit: s.maxItems }, `must NOT have more than ${s.maxItems} items`)
        if (s.minItems !== undefined && v.length < s.minItems)
          report('minItems', { limit: s.minItems }, `must NOT have fewer than ${s.minItems} items`)
        if (s.uniqueItems === true) {
          // like Ajv: with typed `items`, items of another type take no part in the comparison
          const itemTypes =
            s.items && typeof s.items === 'object' && s.items.type !== undefined ? ([] as string[]).concat(s.items.type) : undefined
          const dup = duplicate(
            v,
            (item) => !itemTypes || itemTypes.some((t) => hasType(item, t)),
            () => {
              if (++steps > MAX_STEPS) throw new SchemaBudgetError()
            },
          )
          if (dup)
            report(
              'uniqueItems',
              { i: dup[1], j: dup[0] },
              `must NOT have duplicate items (items ## ${dup[1]} and ${dup[0]} are identical)`,
            )
        }
        if (s.items !== undefined) v.forEach((item, i) => check(s.items, item, `${path}/${i}`, `${sp}/items`, out) || (ok = false))
      }
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const obj = v as Record<string, unknown>
        const keys = Object.keys(obj)
        if (s.maxProperties !== undefined && keys.length > s.maxProperties)
          report('maxProperties', { limit: s.maxProperties }, `must NOT have more than ${s.maxProperties} properties`)
        if (s.minProperties !== undefined && keys.length < s.minProperties)
          report('minProperties', { limit: s.minProperties }, `must NOT have fewer than ${s.minProperties} properties`)
        for (const req of (s.required ?? []) as string[]) {
          if (!Object.hasOwn(obj, req)) report('required', { missingProperty: req }, `must have required property '${req}'`)
        }
        const props = (s.properties ?? {}) as Record<string, Schema>
        for (const k of keys) {
          if (Object.hasOwn(props, k)) {
            if (!check(props[k], obj[k], `${path}/${escapePointer(k)}`, `${sp}/properties/${escapePointer(k)}`, out)) ok = false
          } else if (s.additionalProperties === false) {
            report('additionalProperties', { additionalProperty: k }, 'must NOT have additional properties')
          } else if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
            if (!check(s.additionalProperties, obj[k], `${path}/${escapePointer(k)}`, `${sp}/additionalProperties`, out)) ok = false
          }
        }
      }
      if (s.allOf !== undefined) (s.allOf as Schema[]).forEach((sub, i) => check(sub, v, path, `${sp}/allOf/${i}`, out) || (ok = false))
      if (s.anyOf !== undefined) {
        const mark = errors.length
        if ((s.anyOf as Schema[]).some((sub, i) => check(sub, v, path, `${sp}/anyOf/${i}`, out))) errors.length = mark
        else report('anyOf', {}, 'must match a schema in anyOf')
      }
      if (s.oneOf !== undefined) {
        const mark = errors.length
        const passing = (s.oneOf as Schema[]).map((sub, i) => (check(sub, v, path, `${sp}/oneOf/${i}`, out) ? i : -1)).filter((i) => i >= 0)
        if (passing.length === 1) errors.length = mark
        else {
          if (passing.length > 1) errors.length = mark
          report('oneOf', { passingSchemas: passing.length > 1 ? passing.slice(0, 2) : null }, 'must match exactly one schema in oneOf')
        }
      }
      if (s.not !== undefined && check(s.not, v, path, `${sp}/not`, false)) report('not', {}, 'must NOT be valid')
      return ok
    }

    let valid: boolean
    try {
      valid = check(root, value, '', '#', true)
    } catch (e) {
      if (!(e instanceof SchemaBudgetError)) throw e
      errors.length = 0
      fail('budget', '', '#', {}, `is too costly to validate against this schema (more than ${MAX_STEPS} checks or ${MAX_DEPTH} levels)`)
      valid = false
    }
    validate.errors = valid ? null : errors
    return valid
  }
  return validate
}

class SchemaBudgetError extends Error {}

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'string':
      return typeof v === 'string'
    case 'number':
      return typeof v === 'number'
    case 'integer':
      return typeof v === 'number' && !(v % 1) && !Number.isNaN(v)
    case 'boolean':
      return typeof v === 'boolean'
    case 'null':
      return v === null
    case 'array':
      return Array.isArray(v)
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v)
  }
  return false
}

function isMultiple(v: number, m: number): boolean {
  const q = v / m
  return Number.isFinite(q) && Math.abs(q - Math.round(q)) < 1e-9
}

function resolveRef(root: JsonSchema, ref: string): unknown {
  if (ref === '#') return root
  let cur: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

const escapePointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]))
  }
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && deepEqual((a as any)[k], (b as any)[k]))
}

/** The first pair of equal items, [earlier, later], like Ajv reports them. */
function duplicate(items: unknown[], compared: (item: unknown) => boolean, tick: () => void): [number, number] | undefined {
  const seen = new Map<string, number>()
  for (let j = 0; j < items.length; j++) {
    const item = items[j]
    if (!compared(item)) continue
    if (item === null || typeof item !== 'object') {
      const key = `${typeof item}:${String(item)}`
      const i = seen.get(key)
      if (i !== undefined) return [i, j]
      seen.set(key, j)
      continue
    }
    for (let i = 0; i < j; i++) {
      tick()
      if (compared(items[i]) && deepEqual(items[i], item)) return [i, j]
    }
  }
  return undefined
}
