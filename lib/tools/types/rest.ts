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
import { issuesFromAjv, newAjv, validateAgainst, type Validator } from '../../config/json-schema'
import { interpret as interpretSchema, supportsSchema } from '../../config/schema-interpreter'
import type { EgressClient, EgressRequest, EgressResponse } from '../../egress/client'
import { isEgressError } from '../../egress/errors'
import type { SecretStore } from '../../secrets/ports'
import { loadSecrets, malformedSecretReferences, secretInUrlHostMessage, secretNamesIn, secretsBeforeUrlPath, type SecretValues } from '../../secrets/references'
import { SecretScrubber } from '../../secrets/scrubber'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { JsonSchema } from '../../config/json-schema'
import type { ServerToolConfig } from '../../config/server-tool'
import type { ToolOutcome } from '../../calls/outcome'
import { success, toolError } from '../../calls/outcome'
import { checkInputs, inputsSchema, schemaFromInputs, type InputDeclaration, type InputType } from '../inputs'

// ───────────────────────── dependencies ─────────────────────────

/** What REST-like tools need from the outside: the egress client and the tenant's secrets. */
export interface RestDeps {
  http: Pick<EgressClient, 'request'>
  secrets: SecretStore
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const
export type HttpMethod = (typeof HTTP_METHODS)[number]
export const READ_ONLY_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS']

/** `rest` + `read-only` for GET/HEAD/OPTIONS, else `rest` + `write` + `side-effect`. */
export const labelsForMethod = (method: string) => (READ_ONLY_METHODS.includes(method.toUpperCase()) ? ['rest', 'read-only'] : ['rest', 'write', 'side-effect'])

export const DEFAULT_TIMEOUT_MS = 10_000
export const MAX_TIMEOUT_MS = 30_000
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024
/** Characters of a non-2xx body kept in the tool error. */
export const ERROR_BODY_CHARS = 2000

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

const asText = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))

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

const DROP = Symbol('drop')

/** Typed substitution over a JSON value: the body is built as data, then serialized once. */
export function renderBody(template: unknown, values: RenderValues): unknown {
  const out = renderValue(template, values)
  return out === DROP ? null : out
}

function renderValue(t: unknown, values: RenderValues): unknown {
  if (typeof t === 'string') {
    const segs = parseTemplate(t)
    if (segs.length === 1 && segs[0].kind === 'input') {
      const v = values.inputs[segs[0].name]
      return v === undefined ? DROP : v
    }
    return renderString(t, values)
  }
  if (Array.isArray(t)) return t.map((x) => renderValue(x, values)).map((x) => (x === DROP ? null : x))
  if (t && typeof t === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(t)) {
      const r = renderValue(v, values)
      if (r !== DROP) out[k] = r
    }
    return out
  }
  return t
}

/** All strings inside a JSON value with their pointers. */
function stringsIn(value: unknown, pointer: string, out: [string, string][] = []): [string, string][] {
  if (typeof value === 'string') out.push([pointer, value])
  else if (Array.isArray(value)) value.forEach((v, i) => stringsIn(v, `${pointer}/${i}`, out))
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) stringsIn(v, `${pointer}/${escapePointer(k)}`, out)
  return out
}
const escapePointer = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1')

// ───────────────────────── response schemas ─────────────────────────

const schemaCache = new Map<string, Validator | Error>()
const schemaByObject = new WeakMap<object, Validator | Error>()

/**
 * Compiles a user-supplied JSON Schema in an Ajv instance of its own (so its `$id`s cannot collide
 * with the service's schemas or another tool's), cached by object and by text. A top-level
 * `$schema` is ignored (Ajv's default dialect, draft-07, is used).
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
        hit = supportsSchema(rest) ? interpretSchema(rest) : newAjv({ allErrors: true, strict: false, validateSchema: true }).compile(rest)
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

// ───────────────────────── calling ─────────────────────────

export interface PreparedCall {
  tenant: string
  /** Name used in messages (the tool's name). */
  tool: string
  method: string
  url: string
  headers: Record<string, string>
  body?: string
  timeoutMs: number
  maxBytes: number
  sensitiveHeaders: string[]
  /** The body carries a substituted secret (see EgressRequest.sensitiveBody). */
  sensitiveBody?: boolean
  signal?: AbortSignal
  responseSchema?: JsonSchema
}

const isJsonType = (ct: string) => /^application\/(?:[\w.+-]+\+)?json\b/i.test(ct) || /^text\/json\b/i.test(ct)
const isTextType = (ct: string) =>
  ct === '' || /^text\//i.test(ct) || /^application\/(?:[\w.+-]+\+)?(?:xml|javascript|x-www-form-urlencoded|yaml|x-yaml|graphql)\b/i.test(ct)

/** Decodes a response body: JSON → value, text → string, anything else → a short note. */
export function decodeBody(res: Pick<EgressResponse, 'headers' | 'body'>): { ok: true; value: unknown } | { ok: false; message: string } {
  const ct = (res.headers['content-type'] ?? '').trim()
  if (res.body.length === 0) return { ok: true, value: null }
  if (isJsonType(ct)) {
    try {
      return { ok: true, value: JSON.parse(res.body.toString('utf8')) }
    } catch {
      return { ok: false, message: `declared ${ct.split(';')[0]} but the body is not valid JSON` }
    }
  }
  if (isTextType(ct)) return { ok: true, value: res.body.toString('utf8') }
  return { ok: true, value: `[${res.body.length} bytes of ${ct.split(';')[0]} not shown]` }
}

const trim = (s: string, n = ERROR_BODY_CHARS) => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s)

/** Where a call went, for messages: method, origin and path (the query may carry credentials). */
function target(method: string, url: string): string {
  try {
    const u = new URL(url)
    return `${method} ${u.origin}${u.pathname}`
  } catch {
    return method
  }
}

/**
 * Sends a prepared call and turns every outcome into a ToolOutcome: the decoded body on 2xx (checked
 * against responseSchema), a tool error with status and trimmed body otherwise, and a tool error
 * for every refusal or failure. The scrubber is applied to all of it.
 */
export async function performCall(http: RestDeps['http'], call: PreparedCall, scrubber: SecretScrubber): Promise<ToolOutcome> {
  const where = target(call.method, call.url)
  const request: EgressRequest = {
    tenant: call.tenant,
    url: call.url,
    method: call.method,
    headers: call.headers,
    ...(call.body !== undefined ? { body: call.body } : {}),
    timeoutMs: call.timeoutMs,
    maxBytes: call.maxBytes,
    sensitiveHeaders: call.sensitiveHeaders,
    ...(call.sensitiveBody ? { sensitiveBody: true } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
  }
  let outcome: ToolOutcome
  try {
    const res = await http.request(request)
    outcome = interpret(call, res, where, scrubber)
  } catch (e) {
    outcome = failure(call, e, where)
  }
  return scrubber.scrub(outcome)
}

function interpret(call: PreparedCall, res: EgressResponse, where: string, scrubber: SecretScrubber): ToolOutcome {
  const decoded = decodeBody(res)
  // scrubbed before it is cut: a cut through a secret would leave its prefix behind
  const shortBody = () => trim(scrubber.scrubText(res.body.toString('utf8')))
  if (res.status < 200 || res.status > 299) {
    return toolError(`${where} answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`, {
      status: res.status,
      ...(res.body.length ? { body: shortBody() } : {}),
    })
  }
  if (!decoded.ok) return toolError(`${where} answered ${res.status}, but ${decoded.message}.`, { status: res.status, body: shortBody() })
  if (call.responseSchema) {
    let validate: Validator
    try {
      validate = compileUserSchema(call.responseSchema)
    } catch (e) {
      return toolError(`Tool '${call.tool}' has a responseSchema that cannot be compiled: ${(e as Error).message}`)
    }
    if (!validate(decoded.value)) {
      const errors = issuesFromAjv(validate.errors ?? [], decoded.value)
      const list = errors
        .slice(0, 5)
        .map((i) => `${i.pointer || '/'}: ${i.message}`)
        .join('; ')
      return toolError(`The response of ${where} does not match the tool's responseSchema: ${list}.`, { status: res.status, errors, body: decoded.value })
    }
  }
  return success({
    status: res.status,
    body: decoded.value,
    ...(call.method === 'HEAD' ? { headers: res.headers } : {}),
  })
}

function failure(call: PreparedCall, e: unknown, where: string): ToolOutcome {
  if (isEgressError(e)) {
    switch (e.reason) {
      case 'denied':
      case 'scheme':
        return toolError(`${where} was not called: ${e.message}.`, { reason: e.reason })
      case 'unsafe-redirect':
        return toolError(`${where} was not completed: ${e.message}.`, { reason: e.reason, ...e.details })
      case 'timeout':
        return toolError(`${where} did not answer within ${call.timeoutMs} ms.`, { reason: 'timeout', timeoutMs: call.timeoutMs })
      case 'too-large':
        return toolError(`The response of ${where} is larger than the limit of ${call.maxBytes} bytes (maxResponseBytes).`, { reason: 'too-large', maxBytes: call.maxBytes })
      default:
        return toolError(`${where} failed: ${e.message}.`, { reason: e.reason })
    }
  }
  return toolError(`${where} failed: ${(e as Error)?.message ?? String(e)}`)
}

/** Loads the referenced secrets; a tool error naming the missing ones (names only) if any are unset. */
export async function secretsFor(
  secrets: SecretStore,
  tenant: string,
  names: Iterable<string>,
  tool: string,
): Promise<{ ok: true; values: Map<string, string>; scrubber: SecretScrubber } | { ok: false; outcome: ToolOutcome }> {
  const wanted = [...names]
  if (!wanted.length) return { ok: true, values: new Map(), scrubber: new SecretScrubber() }
  let loaded
  try {
    loaded = await loadSecrets(secrets, tenant, wanted)
  } catch (e) {
    return { ok: false, outcome: toolError(`Tool '${tool}' could not read its secrets: ${(e as Error).message}`) }
  }
  if (loaded.missing.length) {
    const list = loaded.missing.map((n) => `'${n}'`).join(', ')
    return {
      ok: false,
      outcome: toolError(`Tool '${tool}' needs the secret${loaded.missing.length > 1 ? 's' : ''} ${list}, which ${loaded.missing.length > 1 ? 'are' : 'is'} not set for this tenant (PUT /brain/${tenant}/secrets/<name>).`, {
        missingSecrets: loaded.missing,
      }),
    }
  }
  return { ok: true, values: loaded.values, scrubber: new SecretScrubber(loaded.values) }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const FORBIDDEN_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-connection'])

export function headerNameProblem(name: string): string | undefined {
  if (!HEADER_NAME.test(name)) return `'${name}' is not a valid header name`
  if (FORBIDDEN_HEADERS.has(name.toLowerCase())) return `header '${name}' is set by the HTTP client and cannot be configured`
  return undefined
}

/** A rendered header value must stay one line. */
export const unsafeHeaderValue = (v: string) => /[\r\n\0]/.test(v)

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
    url: { type: 'string', minLength: 1, maxLength: 4096, description: 'http(s) URL template: {input} placeholders are URL-encoded; ${secret:NAME} references a tenant secret' },
    method: { enum: [...HTTP_METHODS], description: 'default GET' },
    headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, description: 'header templates' },
    query: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, description: 'query parameter templates; a parameter whose only placeholder is a missing optional input is left out' },
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
      return { ok: false, message: `looks like JSON text but does not parse (${(e as Error).message}); placeholders belong inside JSON strings, e.g. {"age": "{age}"}` }
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
        problems.push({ pointer, message: `placeholder {${name}} does not name a declared input (declare it in inputs, or write {{${name}}} for literal braces)` })
        continue
      }
      if (where === 'body') continue
      if (where === 'query' && type === 'array' && sole === name) continue
      if (!SCALAR.includes(type)) {
        const hint = type === 'array' && where === 'query' ? ' unless it is the whole value (then the parameter repeats)' : ''
        problems.push({ pointer, message: `input '${name}' is ${type === 'array' ? 'an array' : 'an object'} and cannot be placed in the ${where}${hint}` })
      }
    }
  }

  usePlaceholders('/url', p.url, 'url')
  const hostSecrets = secretsBeforeUrlPath(p.url)
  if (hostSecrets.length) problems.push({ pointer: '/url', message: secretInUrlHostMessage(hostSecrets) })
  const probe = renderString(p.url, { inputs: Object.fromEntries(inputs.map((i) => [i.name, 'x'])), secrets: new Map([...secretNamesIn(p.url)].map((n) => [n, 'x'])) })
  let parsed: URL | undefined
  try {
    parsed = new URL(probe)
  } catch {
    problems.push({ pointer: '/url', message: 'url must be an absolute http or https URL' })
  }
  if (parsed && parsed.protocol !== 'http:' && parsed.protocol !== 'https:') problems.push({ pointer: '/url', message: `url must use http or https, not ${parsed.protocol.replace(':', '')}` })
  if (parsed && (parsed.username || parsed.password)) problems.push({ pointer: '/url', message: 'url must not carry credentials; use a header with ${secret:NAME}' })

  for (const [name, value] of Object.entries(p.headers ?? {})) {
    const pointer = `/headers/${escapePointer(name)}`
    const bad = headerNameProblem(name)
    if (bad) problems.push({ pointer, message: bad })
    usePlaceholders(pointer, value, 'header')
  }
  for (const [name, value] of Object.entries(p.query ?? {})) usePlaceholders(`/query/${escapePointer(name)}`, value, 'query')

  if (p.bodyTemplate !== undefined) {
    if (method === 'GET' || method === 'HEAD') problems.push({ pointer: '/bodyTemplate', message: `a ${method} request has no body; remove bodyTemplate or change method` })
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

  async create(config: ServerToolConfig<RestParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const p = config.parameters
    const method = p.method ?? 'GET'
    const inputs = p.inputs ?? []
    const inputSchema = schemaFromInputs(inputs)
    const body = p.bodyTemplate === undefined ? undefined : bodyTemplateValue(p.bodyTemplate)
    if (body && !body.ok) throw new Error(`bodyTemplate ${body.message}`)
    const bodyTemplate = body?.ok ? body.value : undefined
    const secretNames = [...secretNamesIn([p.url, p.headers ?? {}, p.query ?? {}, bodyTemplate ?? null])]
    const sensitiveHeaders = Object.entries(p.headers ?? {})
      .filter(([, v]) => secretNamesIn(v).size > 0)
      .map(([k]) => k)
    const sensitiveBody = bodyTemplate !== undefined && secretNamesIn(bodyTemplate).size > 0
    // configurations stored before the write-time check existed are refused when called
    const hostSecrets = secretsBeforeUrlPath(p.url)
    const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const maxBytes = p.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    const deps = this.deps

    return [
      {
        inputSchema,
        extraLabels: labelsForMethod(method),
        async invoke(params, ctx) {
          const issues = validateAgainst(inputSchema, params)
          if (issues.length) return toolError(`Invalid arguments for '${config.name}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
          if (hostSecrets.length) return toolError(`Tool '${config.name}' was not called: ${secretInUrlHostMessage(hostSecrets)}.`, { secrets: hostSecrets })
          const loaded = await secretsFor(deps.secrets, env.tenant, secretNames, config.name)
          if (!loaded.ok) return loaded.outcome
          const { values: secrets, scrubber } = loaded
          try {
            const values: RenderValues = { inputs: params, secrets }
            const url = new URL(renderString(p.url, values, encodeURIComponent))
            for (const [name, template] of Object.entries(p.query ?? {})) {
              const sole = soleInput(template)
              if (sole !== undefined) {
                const v = params[sole]
                if (v === undefined || v === null) continue
                if (Array.isArray(v)) {
                  for (const item of v) url.searchParams.append(name, asText(item))
                  continue
                }
              }
              url.searchParams.append(name, renderString(template, values))
            }
            const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' }
            for (const [name, template] of Object.entries(p.headers ?? {})) {
              const sole = soleInput(template)
              if (sole !== undefined && (params[sole] === undefined || params[sole] === null)) continue
              const value = renderString(template, values)
              if (unsafeHeaderValue(value)) return scrubber.scrub(toolError(`Header '${name}' would contain a line break; the call was not made.`))
              setHeader(headers, name, value)
            }
            let payload: string | undefined
            if (bodyTemplate !== undefined) {
              const rendered = renderBody(bodyTemplate, values)
              const ct = headerValue(headers, 'content-type')
              if (typeof rendered === 'string' && ct && !isJsonType(ct)) payload = rendered
              else {
                payload = JSON.stringify(rendered)
                if (!ct) headers['content-type'] = 'application/json'
              }
            }
            return await performCall(
              deps.http,
              {
                tenant: env.tenant,
                tool: config.name,
                method,
                url: url.href,
                headers,
                ...(payload !== undefined ? { body: payload } : {}),
                timeoutMs,
                maxBytes,
                sensitiveHeaders,
                sensitiveBody,
                ...(ctx?.signal ? { signal: ctx.signal } : {}),
                ...(p.responseSchema ? { responseSchema: p.responseSchema } : {}),
              },
              scrubber,
            )
          } catch (e) {
            return scrubber.scrub(toolError(`Tool '${config.name}' could not build its request: ${(e as Error).message}`))
          }
        },
      },
    ]
  }
}

/** Sets a header, replacing one of the same name in any case. */
export function setHeader(headers: Record<string, string>, name: string, value: string) {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k]
  headers[name] = value
}

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name.toLowerCase()) return v
  return undefined
}
