/**
 * One ajv instance for every schema in the service, and one way to turn its errors into
 * Issues a person (or a model) can act on: a JSON pointer and a plain sentence.
 */
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import type { Issue } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'

export type JsonSchema = Record<string, unknown>

export const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: false })
addFormats(ajv)

const compiled = new WeakMap<object, ValidateFunction>()

/** Compiles once per schema object (schemas are built once and reused). */
export function compile(schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema)
  if (!fn) {
    fn = ajv.compile(schema)
    compiled.set(schema, fn)
  }
  return fn
}

/**
 * Schemas that arrive in requests (client tools): one validator per distinct text, never kept in
 * ajv's own registry (which holds every compiled schema object for ever), so a tenant sending
 * ever new schemas costs a bounded cache, not a leak. `compile(schema)` finds it afterwards.
 */
const transient = new BoundedCache<string, ValidateFunction>(2_000)

export function compileTransient(schema: JsonSchema, text = JSON.stringify(schema)): ValidateFunction {
  let fn = compiled.get(schema) ?? transient.get(text)
  if (!fn) {
    try {
      fn = ajv.compile(schema)
    } finally {
      ajv.removeSchema(schema)
    }
    transient.set(text, fn)
  }
  compiled.set(schema, fn)
  return fn
}

export function validateAgainst(schema: JsonSchema, value: unknown, pointerPrefix = ''): Issue[] {
  const fn = compile(schema)
  return fn(value) ? [] : issuesFromAjv(fn.errors ?? [], value, pointerPrefix)
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

export function issuesFromAjv(errors: ErrorObject[], value: unknown, pointerPrefix = ''): Issue[] {
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
      case 'additionalProperties':
        pointer = `${pointer}/${(e.params as { additionalProperty: string }).additionalProperty}`
        message = `${fieldName(pointerPrefix + pointer)} is not allowed here`
        break
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
    out.push({ pointer: pointerPrefix + pointer, message })
  }
  return out
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)
