/**
 * The JSON Schema (draft-07) validator for every schema in the service: its own and every one a
 * tenant or a remote server wrote (client tools, MCP catalogs, OpenAPI operations, `outputSchema`,
 * `responseSchema`). It interprets the schema instead of compiling it.
 *
 * Why not Ajv: Ajv generates code per schema (tens of µs a node on the event loop) and its first
 * schema compiles the meta-schema (150–250 ms of a Lambda cold start); above all, its generated
 * code cannot be budgeted. A recursive `anyOf` of two branches costs 2^depth against a nested
 * value (measured: 18 levels, 4.8 s, with a 300-byte schema). Here every unit of work is charged to
 * one budget per validation (WORK_BUDGETS.schemaValidation): a keyword visit, a value node
 * compared (`enum`, `const`) or hashed (`uniqueItems`), a key examined, an error, 32 characters measured,
 * 8 characters checked against a format, and a pattern match by its cost (lib/config/patterns.ts, RE2: linear in the
 * text). A validation that would cost more ends in a `budget` error naming the budget (issue 21
 * N8: a 1.3 KB schema bought ~0.8 s per call under the old 200,000-step budget, which counted
 * only keyword visits).
 *
 * Errors have Ajv's shape (keyword, instancePath, params, message), so one `issuesFromAjv` turns
 * them into Issues. Keywords outside draft-07's validation vocabulary are annotations, ignored as
 * Ajv's non-strict mode ignores them.
 */
import { createRequire } from 'node:module'
import type { ErrorObject } from 'ajv'
import { formatCount } from '../runtime/count-format'
import { type ExpansionBudget, WORK_BUDGETS } from './expansion-budget'
import type { JsonSchema } from './json-schema'
import { type CompiledPattern, compilePattern, isPatternProblem, matchCost } from './patterns'

/** Formats checked here as ajv-formats' "full" mode checks them (the rest come from ajv-formats itself). */
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
/** Schema nodes the analysis walks (the service's own schemas; tenant ones stop at schemaNodes first). */
const MAX_SCHEMA_NODES = 20_000
/** Errors kept per validation: more say nothing new and would cost their own work. */
const MAX_ERRORS = 100

type Schema = JsonSchema | boolean
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'])

type FormatCheck = (s: string) => boolean
let ajvFormats: Record<string, unknown> | undefined
/** A string format from ajv-formats' full set, loaded on first use (never at module load). */
function libraryFormat(name: string): FormatCheck | undefined {
  if (name === 'regex') return (s) => !isPatternProblem(compilePattern(s))
  ajvFormats ??= (createRequire(import.meta.url)('ajv-formats/dist/formats') as { fullFormats: Record<string, unknown> }).fullFormats
  const f = Object.hasOwn(ajvFormats, name) ? ajvFormats[name] : undefined
  const def = f && typeof f === 'object' && !(f instanceof RegExp) ? (f as { type?: string; validate?: unknown }) : { validate: f }
  if (def.type && def.type !== 'string') return undefined
  const v = def.validate
  if (v instanceof RegExp) return (s) => v.test(s)
  if (typeof v === 'function') return v as FormatCheck
  if (v === true) return () => true
  return undefined
}
const formatChecks = new Map<string, FormatCheck | undefined>()
const stringFormat = (name: string): FormatCheck | undefined => {
  if (Object.hasOwn(FORMATS, name)) return FORMATS[name]
  if (!formatChecks.has(name)) formatChecks.set(name, libraryFormat(name))
  return formatChecks.get(name)
}

/** What keeps a schema from being used, with the JSON pointer of the place. */
export interface SchemaProblem {
  pointer: string
  message: string
}

const SCHEMA_MAPS = new Set(['properties', 'definitions', '$defs', 'patternProperties'])
const SUBSCHEMAS = new Set(['additionalProperties', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'])
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf'])
const NUMBERS = new Set([
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
])
// most keys have neither character: checked first, since the validator escapes every key it visits
const escapePointer = (k: string) => (k.includes('~') || k.includes('/') ? k.replace(/~/g, '~0').replace(/\//g, '~1') : k)

/**
 * The patterns of a whole pack (an OpenAPI document's operations), charged once each to
 * `budget` (WORK_BUDGETS.packPatterns) as they are compiled; over it, BudgetExceeded is thrown.
 */
export interface PackPatterns {
  budget: ExpansionBudget
  charged: Set<string>
}

/**
 * The first problem that keeps `schema` from being validated — a malformed keyword, a non-local
 * `$ref`, a pattern RE2 cannot run — or undefined when it can be. Every schema reachable from the
 * root (through `$ref`s too) is checked once.
 */
export function schemaProblem(root: unknown, pack?: PackPatterns): SchemaProblem | undefined {
  let nodes = 0
  const seen = new Set<object>()
  // compiling patterns costs per instruction: the distinct ones of a schema are charged together
  let instructions = 0
  const compiled = new Set<string>()
  const patternProblem = (source: string, at: string): SchemaProblem | undefined => {
    const p = compilePattern(source)
    if (isPatternProblem(p)) return { pointer: at, message: `${p.message} (position ${p.position})` }
    if (compiled.has(source)) return undefined
    compiled.add(source)
    if (pack && !pack.charged.has(source)) {
      pack.charged.add(source)
      pack.budget.spend(p.size)
    }
    instructions += p.size
    const limit = WORK_BUDGETS.schemaPatterns.limit
    if (instructions > limit)
      return { pointer: at, message: `the schema's patterns compile to more than ${formatCount(limit)} instructions together` }
    return undefined
  }
  const schema = (s: unknown, at: string, depth: number): SchemaProblem | undefined => {
    if (typeof s === 'boolean') return undefined
    if (!s || typeof s !== 'object' || Array.isArray(s)) return { pointer: at, message: 'a schema must be an object or a boolean' }
    if (seen.has(s)) return undefined
    seen.add(s)
    if (depth > 64) return { pointer: at, message: 'the schema nests more than 64 levels deep' }
    if (++nodes > MAX_SCHEMA_NODES) return { pointer: at, message: `the schema has more than ${formatCount(MAX_SCHEMA_NODES)} nodes` }
    for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
      const here = `${at}/${escapePointer(k)}`
      const bad = (message: string): SchemaProblem => ({ pointer: here, message })
      let found: SchemaProblem | undefined
      if (SCHEMA_MAPS.has(k)) {
        if (!v || typeof v !== 'object' || Array.isArray(v)) return bad(`${k} must be an object of schemas`)
        for (const [name, sub] of Object.entries(v as Record<string, unknown>)) {
          if (k === 'patternProperties' && (found = patternProblem(name, `${here}/${escapePointer(name)}`))) return found
          if ((found = schema(sub, `${here}/${escapePointer(name)}`, depth + 1))) return found
        }
      } else if (SUBSCHEMAS.has(k)) {
        if ((found = schema(v, here, depth + 1))) return found
      } else if (SCHEMA_LISTS.has(k)) {
        if (!Array.isArray(v) || v.length === 0) return bad(`${k} must be a non-empty array of schemas`)
        for (let i = 0; i < v.length; i++) if ((found = schema(v[i], `${here}/${i}`, depth + 1))) return found
      } else
        switch (k) {
          case 'items':
            if (Array.isArray(v)) {
              for (let i = 0; i < v.length; i++) if ((found = schema(v[i], `${here}/${i}`, depth + 1))) return found
            } else if ((found = schema(v, here, depth + 1))) return found
            break
          case 'dependencies':
            if (!v || typeof v !== 'object' || Array.isArray(v)) return bad('dependencies must be an object')
            for (const [name, dep] of Object.entries(v as Record<string, unknown>)) {
              if (Array.isArray(dep)) {
                if (!dep.every((x) => typeof x === 'string')) return bad(`dependencies/${name} must list property names`)
              } else if ((found = schema(dep, `${here}/${escapePointer(name)}`, depth + 1))) return found
            }
            break
          case '$ref': {
            if (typeof v !== 'string') return bad('$ref must be a string')
            if (!(v === '#' || v.startsWith('#/'))) return bad(`only local references (#/…) can be followed, not '${v.slice(0, 80)}'`)
            const target = resolveRef(root, v)
            if (target === undefined) return bad(`can't resolve reference ${v.slice(0, 80)}`)
            if ((found = schema(target, v.slice(1), depth + 1))) return found
            break
          }
          case 'pattern': {
            if (typeof v !== 'string') return bad('pattern must be a string')
            if ((found = patternProblem(v, here))) return found
            break
          }
          case 'format':
            if (typeof v !== 'string') return bad('format must be a string')
            break
          case 'type': {
            const types = Array.isArray(v) ? v : [v]
            if (!types.every((t) => typeof t === 'string' && TYPES.has(t))) return bad(`type must be one of ${[...TYPES].join(', ')}`)
            break
          }
          case 'required':
            if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return bad('required must list property names')
            break
          case 'enum':
            if (!Array.isArray(v)) return bad('enum must be an array')
            break
          case 'multipleOf':
            if (typeof v !== 'number' || !(v > 0)) return bad('multipleOf must be a number above 0')
            break
          default:
            if (NUMBERS.has(k) && typeof v !== 'number') return bad(`${k} must be a number`)
        }
    }
    return undefined
  }
  return schema(root, '', 0)
}

/** Whether the schema can be validated here (`schemaProblem` says why not). */
export const supportsSchema = (schema: unknown): boolean => schemaProblem(schema) === undefined

/**
 * A validate function with Ajv's calling convention: returns validity, leaves `errors` behind.
 * `maxSteps` (at most the validator's own budget) ends this one validation sooner: a caller that
 * runs a first slice of the work where it is cheap to stop (lib/config/argument-validation.ts).
 */
export interface InterpretedValidator {
  (value: unknown, maxSteps?: number): boolean
  errors?: ErrorObject[] | null
  /** Steps the last validation took (what the budget counts). */
  steps?: number
  /** Whether the last validation ended at its step budget (or the depth limit), not at its answer. */
  overBudget?: boolean
}

/** A validator for a schema `schemaProblem` accepted; patterns and references are resolved once. */
export function interpret(root: JsonSchema, maxSteps: number = MAX_STEPS): InterpretedValidator {
  const patterns = new Map<string, CompiledPattern>()
  const pattern = (p: string): CompiledPattern => {
    let r = patterns.get(p)
    if (!r) {
      const c = compilePattern(p)
      if (isPatternProblem(c)) throw new Error(c.message)
      patterns.set(p, (r = c))
    }
    return r
  }
  const refs = new Map<string, unknown>()
  // Which keyword groups each schema node has, found once per node and kept for every validation:
  // a visit reads only the keywords its node has. Reading every keyword of draft-07 on each visit
  // (schemas of many shapes: megamorphic property loads) was two thirds of a step's cost.
  const groups = new Map<object, number>()
  const groupsOf = (s: Record<string, unknown>): number => {
    let g = groups.get(s)
    if (g === undefined) groups.set(s, (g = keywordGroups(s)))
    return g
  }
  const validate: InterpretedValidator = (value: unknown, callSteps?: number) => {
    const errors: ErrorObject[] = []
    const limit = callSteps === undefined ? maxSteps : Math.min(callSteps, maxSteps)
    let steps = 0
    let depth = 0
    // Past the budget (or the depth limit) the validation stops: every visit and helper returns at
    // once and the answer is the budget error. Not a throw: unwinding an exception through the
    // ~200 optimized frames of a deep validation measured 1.5–2.7 ms, most of a refused call's
    // cost (issue 21 N8, docs/decisions.md).
    let stopped = false
    const spend = (units: number): boolean => {
      steps += units
      if (steps > limit) stopped = true
      return !stopped
    }
    const fail = (keyword: string, instancePath: string, schemaPath: string, params: Record<string, unknown>, message: string) => {
      spend(1)
      if (errors.length < MAX_ERRORS) errors.push({ keyword, instancePath, schemaPath, params, message } as ErrorObject)
    }
    // charged before it runs: past the budget the match never runs
    const matches = (p: string, text: string) => {
      const c = pattern(p)
      return spend(matchCost(c, text.length)) && c.test(text)
    }
    const equal = (a: unknown, b: unknown) => deepEqual(a, b, spend)
    // a long object's keys listed once per validation: every schema that visits it (anyOf
    // branches, allOf parts) is still charged its keys, but 40 branches over 8,000 keys listed
    // them 40 times; short objects are listed again (cheaper than remembering them)
    let keyLists: Map<object, string[]> | undefined
    const keysOf = (obj: object): string[] => {
      let keys = keyLists?.get(obj)
      if (keys) return keys
      keys = Object.keys(obj)
      if (keys.length >= 64) (keyLists ??= new Map()).set(obj, keys)
      return keys
    }
    // one function per validation, not a closure per schema node: nodes are what the budget counts
    const reject = (out: boolean, path: string, sp: string, keyword: string, params: Record<string, unknown>, message: string): false => {
      if (out) fail(keyword, path, `${sp}/${keyword}`, params, message)
      return false
    }
    // Whether an error is built (`kept(out) && reject(…)`): an error past MAX_ERRORS is charged
    // its step but never built (a recursive anyOf fails thousands of times, and built each
    // failure's message, params and paths to drop them)
    const kept = (out: boolean): boolean => {
      if (!out) return false
      if (errors.length < MAX_ERRORS) return true
      spend(1)
      return false
    }

    // (a thrown Error — a reference that does not resolve — ends the whole validation, `depth` with it)
    const check = (schema: Schema, v: unknown, path: string, sp: string, out: boolean): boolean => {
      if (!spend(1)) return false
      if (depth > MAX_DEPTH) {
        stopped = true
        return false
      }
      depth++
      const ok = checkNode(schema, v, path, sp, out)
      depth--
      return ok
    }
    const checkNode = (schema: Schema, v: unknown, path: string, sp: string, out: boolean): boolean => {
      if (schema === true) return true
      if (schema === false) {
        if (kept(out)) fail('false schema', path, sp, {}, 'boolean schema is false')
        return false
      }
      let ok = true
      const s = schema as Record<string, any>
      const g = groupsOf(s)
      if (g & G.REF) {
        let target = refs.get(s.$ref)
        if (target === undefined) refs.set(s.$ref, (target = resolveRef(root, s.$ref)))
        if (target === undefined) throw new Error(`can't resolve reference ${s.$ref}`)
        if (!check(target as Schema, v, path, `${sp}/$ref`, out)) ok = false
      }
      if (g & G.TYPE) {
        if (typeof s.type === 'string' ? !hasType(v, s.type) : !hasAnyType(v, s.type as string[])) {
          const types: string[] = [].concat(s.type)
          ok = kept(out) && reject(out, path, sp, 'type', { type: types.join(',') }, `must be ${types.join(',')}`)
        }
      }
      if (g & G.ENUM && !equalToOne(s.enum as unknown[], v, spend))
        ok = kept(out) && reject(out, path, sp, 'enum', { allowedValues: s.enum }, 'must be equal to one of the allowed values')
      if (g & G.CONST && !equal(s.const, v))
        ok = kept(out) && reject(out, path, sp, 'const', { allowedValue: s.const }, 'must be equal to constant')
      if (g & G.STRING && typeof v === 'string') {
        if (s.maxLength !== undefined || s.minLength !== undefined) {
          if (!spend(Math.ceil(v.length / 32))) return false
          const len = codePoints(v)
          if (s.maxLength !== undefined && len > s.maxLength)
            ok =
              kept(out) && reject(out, path, sp, 'maxLength', { limit: s.maxLength }, `must NOT have more than ${s.maxLength} characters`)
          if (s.minLength !== undefined && len < s.minLength)
            ok =
              kept(out) && reject(out, path, sp, 'minLength', { limit: s.minLength }, `must NOT have fewer than ${s.minLength} characters`)
        }
        if (s.pattern !== undefined && !matches(s.pattern, v))
          ok = kept(out) && reject(out, path, sp, 'pattern', { pattern: s.pattern }, `must match pattern "${s.pattern}"`)
        if (typeof s.format === 'string' && !Object.hasOwn(NUMERIC_FORMATS, s.format)) {
          const f = stringFormat(s.format)
          // ajv-formats' checks cost up to ~2.7 µs per 64 characters (uri, measured): 8 characters a step
          if (!spend(Math.ceil(v.length / 8))) return false
          if (f && !f(v)) ok = kept(out) && reject(out, path, sp, 'format', { format: s.format }, `must match format "${s.format}"`)
        }
      }
      if (g & G.NUMBER && typeof v === 'number') {
        if (s.maximum !== undefined && !(v <= s.maximum))
          ok = kept(out) && reject(out, path, sp, 'maximum', { comparison: '<=', limit: s.maximum }, `must be <= ${s.maximum}`)
        if (s.minimum !== undefined && !(v >= s.minimum))
          ok = kept(out) && reject(out, path, sp, 'minimum', { comparison: '>=', limit: s.minimum }, `must be >= ${s.minimum}`)
        if (s.exclusiveMaximum !== undefined && !(v < s.exclusiveMaximum))
          ok =
            kept(out) &&
            reject(out, path, sp, 'exclusiveMaximum', { comparison: '<', limit: s.exclusiveMaximum }, `must be < ${s.exclusiveMaximum}`)
        if (s.exclusiveMinimum !== undefined && !(v > s.exclusiveMinimum))
          ok =
            kept(out) &&
            reject(out, path, sp, 'exclusiveMinimum', { comparison: '>', limit: s.exclusiveMinimum }, `must be > ${s.exclusiveMinimum}`)
        if (s.multipleOf !== undefined && !isMultiple(v, s.multipleOf))
          ok = kept(out) && reject(out, path, sp, 'multipleOf', { multipleOf: s.multipleOf }, `must be multiple of ${s.multipleOf}`)
        if (typeof s.format === 'string' && Object.hasOwn(NUMERIC_FORMATS, s.format) && !NUMERIC_FORMATS[s.format](v))
          ok = kept(out) && reject(out, path, sp, 'format', { format: s.format }, `must match format "${s.format}"`)
      }
      if (g & G.ARRAY && Array.isArray(v)) {
        if (s.maxItems !== undefined && v.length > s.maxItems)
          ok = kept(out) && reject(out, path, sp, 'maxItems', { limit: s.maxItems }, `must NOT have more than ${s.maxItems} items`)
        if (s.minItems !== undefined && v.length < s.minItems)
          ok = kept(out) && reject(out, path, sp, 'minItems', { limit: s.minItems }, `must NOT have fewer than ${s.minItems} items`)
        if (s.uniqueItems === true) {
          // like Ajv: with `items` typed as scalars only, items of another type take no part
          const itemTypes =
            s.items && typeof s.items === 'object' && !Array.isArray(s.items) && s.items.type !== undefined
              ? ([] as string[]).concat(s.items.type)
              : []
          const scalars = itemTypes.length > 0 && !itemTypes.some((t) => t === 'object' || t === 'array')
          const dup = scalars ? duplicateScalar(v, itemTypes, spend) : duplicate(v, spend)
          if (stopped) return false
          if (dup)
            ok =
              kept(out) &&
              reject(
                out,
                path,
                sp,
                'uniqueItems',
                { i: dup.i, j: dup.j },
                `must NOT have duplicate items (items ## ${dup.j} and ${dup.i} are identical)`,
              )
        }
        if (Array.isArray(s.items)) {
          const tuple = s.items as Schema[]
          for (let i = 0; i < v.length && !stopped; i++) {
            if (i < tuple.length) {
              if (!check(tuple[i], v[i], `${path}/${i}`, `${sp}/items/${i}`, out)) ok = false
            } else if (s.additionalItems !== undefined && !check(s.additionalItems, v[i], `${path}/${i}`, `${sp}/additionalItems`, out))
              ok = false
          }
        } else if (s.items !== undefined) {
          for (let i = 0; i < v.length && !stopped; i++) if (!check(s.items, v[i], `${path}/${i}`, `${sp}/items`, out)) ok = false
        }
        if (s.contains !== undefined) {
          const mark = errors.length
          // every item is visited (and charged); the failing ones' errors are dropped on a match
          let some = false
          for (let i = 0; i < v.length && !stopped; i++) if (check(s.contains, v[i], `${path}/${i}`, `${sp}/contains`, out)) some = true
          if (some) errors.length = mark
          else ok = kept(out) && reject(out, path, sp, 'contains', { minContains: 1 }, 'must contain at least 1 valid item(s)')
        }
      }
      // every visit to an object is charged its keys, whatever keywords its schema has
      let keys: string[] | undefined
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && !spend((keys = keysOf(v)).length)) return false
      if (keys !== undefined && g & G.OBJECT) {
        const obj = v as Record<string, unknown>
        if (s.maxProperties !== undefined && keys.length > s.maxProperties)
          ok =
            kept(out) &&
            reject(out, path, sp, 'maxProperties', { limit: s.maxProperties }, `must NOT have more than ${s.maxProperties} properties`)
        if (s.minProperties !== undefined && keys.length < s.minProperties)
          ok =
            kept(out) &&
            reject(out, path, sp, 'minProperties', { limit: s.minProperties }, `must NOT have fewer than ${s.minProperties} properties`)
        if (s.required !== undefined)
          for (const req of s.required as string[]) {
            if (!Object.hasOwn(obj, req))
              ok = kept(out) && reject(out, path, sp, 'required', { missingProperty: req }, `must have required property '${req}'`)
          }
        if (s.dependencies !== undefined) {
          for (const [name, dep] of Object.entries(s.dependencies as Record<string, unknown>)) {
            if (!Object.hasOwn(obj, name)) continue
            if (Array.isArray(dep)) {
              for (const req of dep as string[])
                if (!Object.hasOwn(obj, req))
                  ok =
                    kept(out) &&
                    reject(
                      out,
                      path,
                      sp,
                      'dependencies',
                      { property: name, missingProperty: req, depsCount: dep.length, deps: dep.join(', ') },
                      `must have property ${req} when property ${name} is present`,
                    )
            } else if (!check(dep as Schema, v, path, `${sp}/dependencies/${escapePointer(name)}`, out)) ok = false
          }
        }
        const props = s.properties as Record<string, Schema> | undefined
        const patternProps = s.patternProperties as Record<string, Schema> | undefined
        const additional = s.additionalProperties
        // a schema with none of the three has nothing to do per key (the keys are charged above)
        if (props !== undefined || patternProps !== undefined || additional !== undefined)
          for (const k of keys) {
            if (stopped) return false
            const at = `${path}/${escapePointer(k)}`
            let known = false
            if (props !== undefined && Object.hasOwn(props, k)) {
              known = true
              if (!check(props[k], obj[k], at, `${sp}/properties/${escapePointer(k)}`, out)) ok = false
            }
            if (patternProps)
              for (const [p, sub] of Object.entries(patternProps)) {
                if (!matches(p, k)) continue
                known = true
                if (!check(sub, obj[k], at, `${sp}/patternProperties/${escapePointer(p)}`, out)) ok = false
              }
            if (known) continue
            if (additional === false) {
              ok =
                kept(out) && reject(out, path, sp, 'additionalProperties', { additionalProperty: k }, 'must NOT have additional properties')
            } else if (additional !== undefined && additional !== true) {
              if (!check(additional, obj[k], at, `${sp}/additionalProperties`, out)) ok = false
            }
          }
        if (s.propertyNames !== undefined)
          for (const k of keys) {
            if (stopped) return false
            if (!check(s.propertyNames, k, path, `${sp}/propertyNames`, out))
              ok = kept(out) && reject(out, path, sp, 'propertyNames', { propertyName: k }, 'property name must be valid')
          }
      }
      if (!(g & G.APPLICATORS) || stopped) return ok
      if (s.allOf !== undefined) {
        const all = s.allOf as Schema[]
        for (let i = 0; i < all.length; i++) if (!check(all[i], v, path, `${sp}/allOf/${i}`, out)) ok = false
      }
      if (s.anyOf !== undefined) {
        const mark = errors.length
        const any = s.anyOf as Schema[]
        let matched = false
        for (let i = 0; i < any.length && !matched; i++) matched = check(any[i], v, path, `${sp}/anyOf/${i}`, out)
        if (matched) errors.length = mark
        else ok = kept(out) && reject(out, path, sp, 'anyOf', {}, 'must match a schema in anyOf')
      }
      if (s.oneOf !== undefined) {
        const mark = errors.length
        const one = s.oneOf as Schema[]
        const passing: number[] = []
        for (let i = 0; i < one.length; i++) if (check(one[i], v, path, `${sp}/oneOf/${i}`, out)) passing.push(i)
        if (passing.length === 1) errors.length = mark
        else {
          if (passing.length > 1) errors.length = mark
          ok =
            kept(out) &&
            reject(
              out,
              path,
              sp,
              'oneOf',
              { passingSchemas: passing.length > 1 ? passing.slice(0, 2) : null },
              'must match exactly one schema in oneOf',
            )
        }
      }
      if (s.not !== undefined && check(s.not, v, path, `${sp}/not`, false))
        ok = kept(out) && reject(out, path, sp, 'not', {}, 'must NOT be valid')
      if (s.if !== undefined && (s.then !== undefined || s.else !== undefined)) {
        const branch = check(s.if, v, path, `${sp}/if`, false) ? 'then' : 'else'
        if (s[branch] !== undefined && !check(s[branch], v, path, `${sp}/${branch}`, out))
          ok = kept(out) && reject(out, path, sp, 'if', { failingKeyword: branch }, `must match "${branch}" schema`)
      }
      return ok
    }

    let valid = check(root, value, '', '#', true)
    const overBudget = stopped
    if (stopped) {
      errors.length = 0
      errors.push({
        keyword: 'budget',
        instancePath: '',
        schemaPath: '#',
        params: { limit },
        message: `is too costly to validate against this schema (over the validation budget of ${formatCount(limit)} steps or ${MAX_DEPTH} levels)`,
      } as ErrorObject)
      valid = false
    }
    validate.errors = valid ? null : errors
    validate.steps = steps
    validate.overBudget = overBudget
    return valid
  }
  return validate
}

/** Keyword groups of a schema node (bits of `groupsOf`): a group is read on a visit only when its node has one of its keywords. */
const G = {
  REF: 1,
  TYPE: 2,
  ENUM: 4,
  CONST: 8,
  STRING: 16,
  NUMBER: 32,
  ARRAY: 64,
  OBJECT: 128,
  APPLICATORS: 256,
} as const

const GROUP_KEYWORDS: [number, string[]][] = [
  [G.REF, ['$ref']],
  [G.TYPE, ['type']],
  [G.ENUM, ['enum']],
  [G.CONST, ['const']],
  [G.STRING, ['maxLength', 'minLength', 'pattern', 'format']],
  [G.NUMBER, ['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf', 'format']],
  [G.ARRAY, ['maxItems', 'minItems', 'uniqueItems', 'items', 'additionalItems', 'contains']],
  [
    G.OBJECT,
    [
      'maxProperties',
      'minProperties',
      'required',
      'dependencies',
      'properties',
      'patternProperties',
      'additionalProperties',
      'propertyNames',
    ],
  ],
  [G.APPLICATORS, ['allOf', 'anyOf', 'oneOf', 'not', 'if']],
]

function keywordGroups(s: Record<string, unknown>): number {
  let g = 0
  for (const [bit, keywords] of GROUP_KEYWORDS) if (keywords.some((k) => s[k] !== undefined)) g |= bit
  return g
}

/** Code points of a string, without materialising them. */
function codePoints(s: string): number {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

/** Charges units of work; false once the validation is over its budget (the helpers then return at once: their answer no longer counts). */
type Spend = (units: number) => boolean

function hasAnyType(v: unknown, types: string[]): boolean {
  for (const t of types) if (hasType(v, t)) return true
  return false
}

function equalToOne(values: unknown[], v: unknown, spend: Spend): boolean {
  for (const e of values) if (deepEqual(e, v, spend)) return true
  return false
}

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

export function resolveRef(root: unknown, ref: string): unknown {
  if (ref === '#') return root
  let cur: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    let part: string
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    } catch {
      return undefined
    }
    if (!cur || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined
    cur = (cur as Record<string, unknown>)[part]
  }
  return cur
}

/** Deep equality, one step charged per value node compared. */
function deepEqual(a: unknown, b: unknown, spend: Spend): boolean {
  if (!spend(1)) return false
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i], spend))
  }
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && deepEqual((a as any)[k], (b as any)[k], spend))
}

/**
 * The pair of equal scalars Ajv reports: scanning from the end, the first item met again (`i`
 * the earlier, `j` the later of the two).
 */
function duplicateScalar(items: unknown[], types: string[], spend: Spend): { i: number; j: number } | undefined {
  const seen = new Map<string, number>()
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]
    if (!spend(1)) return undefined
    if (!hasAnyType(item, types)) continue
    const key = `${typeof item}:${String(item)}`
    const j = seen.get(key)
    if (j !== undefined) return { i, j }
    seen.set(key, i)
  }
  return undefined
}

/**
 * The pair of equal items Ajv reports for objects and untyped items: the last item equal to an
 * earlier one (`i`), and the nearest earlier one equal to it (`j`). Items are bucketed by a
 * structural hash and compared only within their bucket, so the work is linear in the items:
 * comparing each with every earlier one was quadratic, and 1,000 distinct objects of three keys
 * (half a million comparisons) went over the budget that 7,000 steps of hashing now decide
 * (issue 21 N8). Colliding items are compared node by node, each node charged: a crafted
 * collision costs steps like any other comparison.
 */
function duplicate(items: unknown[], spend: Spend): { i: number; j: number } | undefined {
  const buckets = new Map<number, number[]>()
  let found: { i: number; j: number } | undefined
  for (let x = 0; x < items.length; x++) {
    if (!spend(1)) return undefined
    const h = hashOf(items[x], spend)
    if (!spend(0)) return undefined
    const bucket = buckets.get(h)
    if (!bucket) {
      buckets.set(h, [x])
      continue
    }
    for (let b = bucket.length - 1; b >= 0; b--)
      if (deepEqual(items[bucket[b]], items[x], spend)) {
        found = { i: x, j: bucket[b] }
        break
      }
    bucket.push(x)
  }
  return found
}

const NUMBER_BITS = new Float64Array(1)
const NUMBER_WORDS = new Int32Array(NUMBER_BITS.buffer)

/** murmur3's finaliser: every input bit reaches every output bit. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) | 0
}

function hashText(s: string, seed: number): number {
  let h = seed
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return mix(h)
}

/**
 * A hash equal for values `deepEqual` finds equal (an object's members summed, so their order
 * does not count; -0 as 0). One step per value node, one per 32 characters of a string or key.
 */
function hashOf(v: unknown, spend: Spend): number {
  if (!spend(1)) return 0
  if (v === null) return 0x2f0b3c1d
  switch (typeof v) {
    case 'string':
      if (!spend(v.length >> 5)) return 0
      return hashText(v, 0x811c9dc5)
    case 'number':
      NUMBER_BITS[0] = v === 0 ? 0 : v
      return mix(NUMBER_WORDS[0] ^ Math.imul(NUMBER_WORDS[1], 0x9e3779b1))
    case 'boolean':
      return v ? 0x4a7c15e3 : 0x1b873593
    case 'object':
      break
    default:
      return 0x27d4eb2f
  }
  if (Array.isArray(v)) {
    let h = 0x3c6ef372 ^ v.length
    for (let i = 0; i < v.length && spend(0); i++) h = Math.imul(h, 31) + hashOf(v[i], spend)
    return mix(h)
  }
  let h = 0x5bd1e995
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue
    if (!spend(k.length >> 5)) return 0
    h = (h + mix(hashText(k, 0x7f4a7c15) + Math.imul(hashOf((v as Record<string, unknown>)[k], spend), 0x9e3779b1))) | 0
  }
  return mix(h)
}
