/**
 * Every JSON Schema check in the service, and one way to turn its errors into Issues a person (or
 * a model) can act on: a JSON pointer and a plain sentence.
 *
 * Every schema is interpreted (./schema-interpreter.ts), within a step budget per validation and
 * with RE2 patterns (./patterns.ts). Ajv is no longer a validator here: its generated code cannot
 * be budgeted (a recursive `anyOf` costs 2^depth). `newAjv` stays for tests that compare the
 * interpreter with Ajv; it matches patterns with RE2 too.
 */
import { createRequire } from 'node:module'
import type { default as AjvClass, ErrorObject, Options } from 'ajv'
import { capIssues, type Issue } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'
import { schemaOverBudget } from './expansion-budget'
import { re2RegExpEngine } from './patterns'
import { type InterpretedValidator, interpret, resolveRef, schemaProblem } from './schema-interpreter'
import { closest } from './yaml'

export type JsonSchema = Record<string, unknown>

/** Ajv's calling convention: returns validity and leaves `errors` behind. */
export interface Validator {
  (value: unknown): boolean
  errors?: ErrorObject[] | null
}

/** A new Ajv with ajv-formats and RE2 patterns, loaded on first use (never at module load). */
export function newAjv(options: Options): AjvClass {
  const load = createRequire(import.meta.url)
  const Ajv = load('ajv') as { default: new (o: Options) => AjvClass }
  const addFormats = load('ajv-formats') as { default: (ajv: AjvClass) => void }
  const ajv = new Ajv.default({ ...options, code: { ...options.code, regExp: re2RegExpEngine } })
  addFormats.default(ajv)
  return ajv
}

const compiled = new WeakMap<object, InterpretedValidator>()

/** Why a schema cannot be used: over the node budget, malformed, or a pattern RE2 cannot run. */
export class SchemaUnusable extends Error {
  constructor(
    message: string,
    /** JSON pointer of the place inside the schema, when there is one. */
    readonly pointer?: string,
  ) {
    super(pointer ? `${message} (at ${pointer})` : message)
    this.name = 'SchemaUnusable'
  }
}

function build(schema: JsonSchema): InterpretedValidator {
  const over = schemaOverBudget(schema)
  if (over) throw new SchemaUnusable(over)
  const problem = schemaProblem(schema)
  if (problem) throw new SchemaUnusable(problem.message, problem.pointer || undefined)
  return interpret(schema)
}

/**
 * Compiles once per schema object (schemas are built once and reused). A schema over the node
 * budget or one that cannot be used throws SchemaUnusable before anything is built from it.
 */
export function compile(schema: JsonSchema): InterpretedValidator {
  let fn = compiled.get(schema)
  if (!fn) {
    fn = build(schema)
    compiled.set(schema, fn)
  }
  return fn
}

/**
 * Schemas that arrive in requests (client tools): one validator per distinct text in a bounded
 * cache, so a tenant sending ever new schemas costs a bounded cache, not a leak.
 * `compile(schema)` finds it afterwards.
 */
const transient = new BoundedCache<string, InterpretedValidator>(2_000)

export function compileTransient(schema: JsonSchema, text = JSON.stringify(schema)): InterpretedValidator {
  let fn = compiled.get(schema) ?? transient.get(text)
  if (!fn) {
    fn = build(schema)
    transient.set(text, fn)
  }
  compiled.set(schema, fn)
  return fn
}

export function validateAgainst(schema: JsonSchema, value: unknown, pointerPrefix = ''): Issue[] {
  const fn = compile(schema)
  return fn(value) ? [] : issuesFromAjv(fn.errors ?? [], value, pointerPrefix, schema)
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v)

function valueAt(root: unknown, pointer: string): unknown {
  if (!pointer) return root
  let cur: any = root
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (cur == null || typeof cur !== 'object') return undefined
    cur = cur[part]
  }
  return cur
}

/** Field name for messages: the pointer without its leading slash, `/a/0/b` → `a[0].b`. */
export function fieldName(pointer: string): string {
  if (!pointer) return '(root)'
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '')
}

/** The schema node an error's schemaPath names (local `$ref`s followed); undefined when it cannot be walked. */
function schemaAt(root: JsonSchema, schemaPath: string): unknown {
  if (!schemaPath.startsWith('#')) return undefined
  let cur: unknown = root
  for (const raw of schemaPath.slice(1).split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (!cur || typeof cur !== 'object') return undefined
    if (part === '$ref') {
      const ref = (cur as { $ref?: unknown }).$ref
      cur = typeof ref === 'string' && ref.startsWith('#') ? resolveRef(root, ref) : undefined
    } else cur = Object.hasOwn(cur, part) ? (cur as Record<string, unknown>)[part] : undefined
  }
  return cur
}

/**
 * " — did you mean 'x'?" for a field the object's schema does not declare, from the fields it
 * declares and the object does not already have (a key that is there was not what the typo meant).
 */
function fieldHint(root: JsonSchema | undefined, e: ErrorObject, field: string, object: unknown): string {
  if (!root) return ''
  const parent = schemaAt(root, e.schemaPath.replace(/\/additionalProperties$/, ''))
  const props = parent && typeof parent === 'object' ? (parent as { properties?: unknown }).properties : undefined
  const present = object && typeof object === 'object' ? object : {}
  const candidates = props && typeof props === 'object' ? Object.keys(props).filter((k) => !Object.hasOwn(present, k)) : []
  const hint = closest(field, candidates)
  return hint ? ` — did you mean '${hint}'?` : ''
}

/**
 * Ajv-shaped errors as Issues. A field the schema does not know comes first: a misspelt key is
 * the cause, and the "is required" for the key it was meant to be is its consequence.
 */
export function issuesFromAjv(errors: ErrorObject[], value: unknown, pointerPrefix = '', schema?: JsonSchema): Issue[] {
  const unknownFields: Issue[] = []
  const out: Issue[] = []
  const seen = new Set<string>()
  for (const e of errors) {
    let pointer = e.instancePath
    let message: string
    switch (e.keyword) {
      case 'required':
        pointer = `${pointer}/${(e.params as { missingProperty: string }).missingProperty}`
        message = `${fieldName(pointerPrefix + pointer)} is required`
        break
      case 'additionalProperties': {
        const field = (e.params as { additionalProperty: string }).additionalProperty
        pointer = `${pointer}/${field.replace(/~/g, '~0').replace(/\//g, '~1')}`
        message = `${fieldName(pointerPrefix + pointer)} is not allowed here${fieldHint(schema, e, field, valueAt(value, e.instancePath))}`
        break
      }
      case 'type':
        message = `${fieldName(pointerPrefix + pointer)} must be ${article((e.params as { type: string }).type)}, got ${typeOf(valueAt(value, pointer))}`
        break
      case 'enum':
        message = `${fieldName(pointerPrefix + pointer)} must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
        break
      case 'const':
        message = `${fieldName(pointerPrefix + pointer)} must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`
        break
      case 'if':
      case 'anyOf':
        continue // the branch errors say more
      default:
        message = `${fieldName(pointerPrefix + pointer)} ${e.message ?? 'is invalid'}`
    }
    const key = `${pointer}|${message}`
    if (seen.has(key)) continue
    seen.add(key)
    ;(e.keyword === 'additionalProperties' ? unknownFields : out).push({ pointer: pointerPrefix + pointer, message })
  }
  // a call's answer (and the message joined from it) lists at most MAX_LISTED_ISSUES of them
  return capIssues([...unknownFields, ...out])
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)
