/**
 * `rest` (spec §3): one HTTP endpoint as a tool.
 *
 *   type: rest
 *   parameters:
 *     url: https://api.example.com/users/{id}          # {input} placeholders, URL-encoded
 *     method: POST                                     # default GET
 *     headers: { Authorization: "Bearer ${secret:API_TOKEN}" }
 *     query: { q: "{query}", tag: "{tags}" }           # an array input repeats the parameter
 *     bodyTemplate: { name: "{name}", age: "{age}", note: "Hi {name}" }
 *     inputs: [{ name: id, type: string }, …]
 *     responseSchema: { type: object, required: [id] }
 *     timeoutMs: 10000                                 # max 30000
 *     maxResponseBytes: 1048576
 *
 * Templates: `{name}` is a declared input, `${secret:NAME}` a tenant secret, `{{` and `}}` are
 * literal braces, any other `{` is literal. In the body a string that is exactly one placeholder
 * becomes the input's typed value (a number stays a number, an object an object; a missing
 * optional input drops the property); placeholders inside longer strings are interpolated into
 * that string. The body is built as a value and serialized once — never by concatenating JSON.
 *
 * Every outbound call goes through the egress client; every secret value used in the call is
 * scrubbed from the result and from any error.
 */
import { schemaOverBudget } from '../../config/expansion-budget'
import type { JsonSchema } from '../../config/json-schema'
import { SchemaUnusable, type Validator } from '../../config/json-schema'
import { interpret as interpretSchema, schemaProblem } from '../../config/schema-interpreter'
import type { ServerToolConfig } from '../../config/server-tool'
import type { EgressClient } from '../../egress/client'
import type { SecretStore } from '../../secrets/ports'
import {
  malformedSecretReferences,
  type SecretValues,
  secretInUrlHostMessage,
  secretNamesIn,
  secretsBeforeUrlPath,
} from '../../secrets/references'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import { checkInputs, type InputDeclaration, type InputType, inputsSchema, schemaFromInputs } from '../inputs'
import { invokeOnFirstUse, type LoadToolRuntimes } from './runtime-loader'

// ───────────────────────── dependencies ─────────────────────────

/** What REST-like tools need from the outside: the egress client, the tenant's secrets, and where their calling code is. */
export interface RestDeps {
  http: Pick<EgressClient, 'request'>
  secrets: SecretStore
  load: LoadToolRuntimes
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const
export type HttpMethod = (typeof HTTP_METHODS)[number]
export const READ_ONLY_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS']

/** `rest` + `read-only` for GET/HEAD/OPTIONS, else `rest` + `write` + `side-effect`. */
export const labelsForMethod = (method: string) =>
  READ_ONLY_METHODS.includes(method.toUpperCase()) ? ['rest', 'read-only'] : ['rest', 'write', 'side-effect']

export const DEFAULT_TIMEOUT_MS = 10_000
export const MAX_TIMEOUT_MS = 30_000
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

// ───────────────────────── templates ─────────────────────────

export type Segment = { kind: 'text'; text: string } | { kind: 'input'; name: string } | { kind: 'secret'; name: string }

const TEMPLATE_TOKEN = /\$\{secret:([A-Za-z][A-Za-z0-9_-]{0,127})\}|\{\{|\}\}|\{([A-Za-z_$][A-Za-z0-9_$]*)\}/g

export function parseTemplate(template: string): Segment[] {
  const out: Segment[] = []
  let last = 0
  const text = (t: string) => {
    if (!t) return
    const prev = out[out.length - 1]
    if (prev?.kind === 'text') prev.text += t
    else out.push({ kind: 'text', text: t })
  }
  for (const m of template.matchAll(TEMPLATE_TOKEN)) {
    text(template.slice(last, m.index))
    if (m[1]) out.push({ kind: 'secret', name: m[1] })
    else if (m[2]) out.push({ kind: 'input', name: m[2] })
    else text(m[0][0]) // {{ → {, }} → }
    last = m.index! + m[0].length
  }
  text(template.slice(last))
  return out
}

/** The input a template consists of, when it is exactly one placeholder. */
export function soleInput(template: string): string | undefined {
  const segs = parseTemplate(template)
  return segs.length === 1 && segs[0].kind === 'input' ? segs[0].name : undefined
}

export function inputsUsed(template: string): string[] {
  return parseTemplate(template).flatMap((s) => (s.kind === 'input' ? [s.name] : []))
}

export const asText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))

export interface RenderValues {
  inputs: Record<string, unknown>
  secrets: SecretValues
}

/** Renders a template into a string; `encode` applies to every substituted value (not to literal text). */
export function renderString(template: string, values: RenderValues, encode: (s: string) => string = (s) => s): string {
  return parseTemplate(template)
    .map((s) => {
      if (s.kind === 'text') return s.text
      if (s.kind === 'secret') return encode(values.secrets.get(s.name) ?? '')
      const v = values.inputs[s.name]
      return Array.isArray(v) ? v.map((x) => encode(asText(x))).join(',') : encode(asText(v))
    })
    .join('')
}

/** All strings inside a JSON value with their pointers. */
export function stringsIn(value: unknown, pointer: string, out: [string, string][] = []): [string, string][] {
  if (typeof value === 'string') out.push([pointer, value])
  else if (Array.isArray(value)) value.forEach((v, i) => stringsIn(v, `${pointer}/${i}`, out))
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) stringsIn(v, `${pointer}/${escapePointer(k)}`, out)
  return out
}
export const escapePointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')

// ───────────────────────── response schemas ─────────────────────────

const schemaCache = new Map<string, Validator | Error>()
const schemaByObject = new WeakMap<object, Validator | Error>()

/**
 * A validator for a user-supplied JSON Schema (interpreted, budgeted, RE2 patterns), cached by
 * object and by text. A top-level `$schema` is ignored (draft-07 is used).
 */
export function compileUserSchema(schema: JsonSchema): Validator {
  let hit = schemaByObject.get(schema)
  if (!hit) {
    const { $schema: _dialect, ...rest } = schema
    const key = JSON.stringify(rest)
    hit = schemaCache.get(key)
    if (!hit) {
      try {
        const over = schemaOverBudget(rest)
        if (over) throw new Error(over)
        const problem = schemaProblem(rest)
        if (problem) throw new SchemaUnusable(problem.message, problem.pointer || undefined)
        hit = interpretSchema(rest)
      } catch (e) {
        hit = e as Error
      }
      if (schemaCache.size >= 500) schemaCache.delete(schemaCache.keys().next().value as string)
      schemaCache.set(key, hit)
    }
    schemaByObject.set(schema, hit)
  }
  if (hit instanceof Error) throw hit
  return hit
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const FORBIDDEN_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'proxy-connection',
])

export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return `'${name}' is not a valid header name`
  if (FORBIDDEN_HEADERS.has(name.toLowerCase())) return `header '${name}' is set by the HTTP client and cannot be configured`
  return undefined
}

// ───────────────────────── the `rest` type ─────────────────────────

export interface RestParameters {
  url: string
  method?: HttpMethod
  headers?: Record<string, string>
  query?: Record<string, string>
  bodyTemplate?: unknown
  inputs?: InputDeclaration[]
  responseSchema?: JsonSchema
  timeoutMs?: number
  maxResponseBytes?: number
}

export const restParametersSchema: JsonSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: 'http(s) URL template: {input} placeholders are URL-encoded; ${secret:NAME} references a tenant secret',
    },
    method: { enum: [...HTTP_METHODS], description: 'default GET' },
    headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, description: 'header templates' },
    query: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 8192 },
      description: 'query parameter templates; a parameter whose only placeholder is a missing optional input is left out',
    },
    bodyTemplate: { description: 'JSON value (or JSON text) with placeholders; typed substitution' },
    inputs: inputsSchema,
    responseSchema: { type: 'object', description: 'JSON Schema the (JSON) response must match' },
    timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS, description: `default ${DEFAULT_TIMEOUT_MS}` },
    maxResponseBytes: { type: 'integer', minimum: 1, maximum: MAX_RESPONSE_BYTES, description: `default ${DEFAULT_MAX_RESPONSE_BYTES}` },
  },
}

const SCALAR: InputType[] = ['string', 'number', 'integer', 'boolean']

/** The body template as a JSON value: a string that is JSON text is parsed; any other value is used as it is. */
export function bodyTemplateValue(t: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof t !== 'string') return { ok: true, value: t }
  const s = t.trim()
  if (s.startsWith('{') || s.startsWith('[')) {
    if (soleInput(s)) return { ok: true, value: t }
    try {
      return { ok: true, value: JSON.parse(s) }
    } catch (e) {
      return {
        ok: false,
        message: `looks like JSON text but does not parse (${(e as Error).message}); placeholders belong inside JSON strings, e.g. {"age": "{age}"}`,
      }
    }
  }
  return { ok: true, value: t }
}

function checkRest(p: RestParameters): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = []
  const inputs = p.inputs ?? []
  problems.push(...checkInputs(inputs, '/inputs'))
  const declared = new Map(inputs.map((i) => [i.name, i.type]))
  const method = p.method ?? 'GET'

  const usePlaceholders = (pointer: string, template: string, where: 'url' | 'header' | 'query' | 'body') => {
    const sole = soleInput(template)
    for (const name of inputsUsed(template)) {
      const type = declared.get(name)
      if (!type) {
        problems.push({
          pointer,
          message: `placeholder {${name}} does not name a declared input (declare it in inputs, or write {{${name}}} for literal braces)`,
        })
        continue
      }
      if (where === 'body') continue
      if (where === 'query' && type === 'array' && sole === name) continue
      if (!SCALAR.includes(type)) {
        const hint = type === 'array' && where === 'query' ? ' unless it is the whole value (then the parameter repeats)' : ''
        problems.push({
          pointer,
          message: `input '${name}' is ${type === 'array' ? 'an array' : 'an object'} and cannot be placed in the ${where}${hint}`,
        })
      }
    }
  }

  usePlaceholders('/url', p.url, 'url')
  const hostSecrets = secretsBeforeUrlPath(p.url)
  if (hostSecrets.length) problems.push({ pointer: '/url', message: secretInUrlHostMessage(hostSecrets) })
  const probe = renderString(p.url, {
    inputs: Object.fromEntries(inputs.map((i) => [i.name, 'x'])),
    secrets: new Map([...secretNamesIn(p.url)].map((n) => [n, 'x'])),
  })
  let parsed: URL | undefined
  try {
    parsed = new URL(probe)
  } catch {
    problems.push({ pointer: '/url', message: 'url must be an absolute http or https URL' })
  }
  if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    problems.push({ pointer: '/url', message: `url must use http or https, not ${parsed.protocol.replace(':', '')}` })
  if (parsed && (parsed.username || parsed.password))
    problems.push({ pointer: '/url', message: 'url must not carry credentials; use a header with ${secret:NAME}' })

  for (const [name, value] of Object.entries(p.headers ?? {})) {
    const pointer = `/headers/${escapePointer(name)}`
    const bad = headerNameProblem(name)
    if (bad) problems.push({ pointer, message: bad })
    usePlaceholders(pointer, value, 'header')
  }
  for (const [name, value] of Object.entries(p.query ?? {})) usePlaceholders(`/query/${escapePointer(name)}`, value, 'query')

  if (p.bodyTemplate !== undefined) {
    if (method === 'GET' || method === 'HEAD')
      problems.push({ pointer: '/bodyTemplate', message: `a ${method} request has no body; remove bodyTemplate or change method` })
    const body = bodyTemplateValue(p.bodyTemplate)
    if (!body.ok) problems.push({ pointer: '/bodyTemplate', message: `bodyTemplate ${body.message}` })
    else for (const [pointer, s] of stringsIn(body.value, '/bodyTemplate')) usePlaceholders(pointer, s, 'body')
  }

  for (const field of ['url', 'headers', 'query', 'bodyTemplate'] as const) {
    if (p[field] !== undefined) problems.push(...malformedSecretReferences(p[field], `/${field}`))
  }

  if (p.responseSchema !== undefined) {
    try {
      compileUserSchema(p.responseSchema)
    } catch (e) {
      problems.push({ pointer: '/responseSchema', message: `responseSchema is not a usable JSON Schema: ${(e as Error).message}` })
    }
  }
  return problems
}

export class RestToolFactory implements ToolFactory<RestParameters> {
  readonly typeId = 'rest'
  readonly kind = 'single' as const
  readonly parametersSchema = restParametersSchema

  constructor(private readonly deps: RestDeps) {}

  check(parameters: RestParameters) {
    return checkRest(parameters)
  }

  /**
   * The spec a listing or manifest needs is built here; the code that renders and sends the
   * request loads on the first call (lib/tools/types/runtime).
   */
  async create(config: ServerToolConfig<RestParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const p = config.parameters
    const inputSchema = schemaFromInputs(p.inputs ?? [])
    const body = p.bodyTemplate === undefined ? undefined : bodyTemplateValue(p.bodyTemplate)
    if (body && !body.ok) throw new Error(`bodyTemplate ${body.message}`)
    const bodyTemplate = body?.ok ? body.value : undefined
    const deps = this.deps
    return [
      {
        inputSchema,
        extraLabels: labelsForMethod(p.method ?? 'GET'),
        invoke: invokeOnFirstUse(deps.load, (m) => m.restInvoke(config, env, deps, { inputSchema, bodyTemplate })),
      },
    ]
  }
}
