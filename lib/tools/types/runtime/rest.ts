/**
 * The calling half of `rest` (lib/tools/types/rest.ts holds its definition): rendering a request
 * from its templates, sending it through the egress client and turning every outcome into a
 * result. `rest_api` sends its requests through performCall too.
 */

import type { ToolOutcome } from '../../../calls/outcome'
import { success, toolError } from '../../../calls/outcome'
import { argumentIssues } from '../../../config/argument-validation'
import type { JsonSchema } from '../../../config/json-schema'
import { issuesFromAjv, type Validator } from '../../../config/json-schema'
import type { ServerToolConfig } from '../../../config/server-tool'
import type { EgressRequest, EgressResponse } from '../../../egress/client'
import { isEgressError } from '../../../egress/errors'
import type { SecretStore } from '../../../secrets/ports'
import { loadSecrets, secretInUrlHostMessage, secretNamesIn, secretsBeforeUrlPath } from '../../../secrets/references'
import { SecretScrubber } from '../../../secrets/scrubber'
import type { FactoryEnv, ToolSpec } from '../../contracts'
import {
  asText,
  compileUserSchema,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  parseTemplate,
  type RenderValues,
  type RestDeps,
  type RestParameters,
  renderString,
  soleInput,
} from '../rest'

/** Characters of a non-2xx body kept in the tool error. */
export const ERROR_BODY_CHARS = 2000

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
  ct === '' ||
  /^text\//i.test(ct) ||
  /^application\/(?:[\w.+-]+\+)?(?:xml|javascript|x-www-form-urlencoded|yaml|x-yaml|graphql)\b/i.test(ct)

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
      return toolError(`The response of ${where} does not match the tool's responseSchema: ${list}.`, {
        status: res.status,
        errors,
        body: decoded.value,
      })
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
        return toolError(`The response of ${where} is larger than the limit of ${call.maxBytes} bytes (maxResponseBytes).`, {
          reason: 'too-large',
          maxBytes: call.maxBytes,
        })
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
      outcome: toolError(
        `Tool '${tool}' needs the secret${loaded.missing.length > 1 ? 's' : ''} ${list}, which ${loaded.missing.length > 1 ? 'are' : 'is'} not set for this tenant (PUT /brain/${tenant}/secrets/<name>).`,
        {
          missingSecrets: loaded.missing,
        },
      ),
    }
  }
  return { ok: true, values: loaded.values, scrubber: new SecretScrubber(loaded.values) }
}

/** A rendered header value must stay one line. */
export const unsafeHeaderValue = (v: string) => /[\r\n\0]/.test(v)

/** Sets a header, replacing one of the same name in any case. */
export function setHeader(headers: Record<string, string>, name: string, value: string) {
  for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k]
  headers[name] = value
}

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name.toLowerCase()) return v
  return undefined
}

/** The invoke of one configured `rest` tool; `prepared` is what its create already worked out. */
export function restInvoke(
  config: ServerToolConfig<RestParameters>,
  env: FactoryEnv,
  deps: RestDeps,
  prepared: { inputSchema: JsonSchema; bodyTemplate: unknown },
): ToolSpec['invoke'] {
  const p = config.parameters
  const method = p.method ?? 'GET'
  const { inputSchema, bodyTemplate } = prepared
  const secretNames = [...secretNamesIn([p.url, p.headers ?? {}, p.query ?? {}, bodyTemplate ?? null])]
  const sensitiveHeaders = Object.entries(p.headers ?? {})
    .filter(([, v]) => secretNamesIn(v).size > 0)
    .map(([k]) => k)
  const sensitiveBody = bodyTemplate !== undefined && secretNamesIn(bodyTemplate).size > 0
  // configurations stored before the write-time check existed are refused when called
  const hostSecrets = secretsBeforeUrlPath(p.url)
  const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const maxBytes = p.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  return async (params, ctx) => {
    const issues = argumentIssues(inputSchema, params)
    if (issues.length)
      return toolError(`Invalid arguments for '${config.name}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
    if (hostSecrets.length)
      return toolError(`Tool '${config.name}' was not called: ${secretInUrlHostMessage(hostSecrets)}.`, { secrets: hostSecrets })
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
        if (unsafeHeaderValue(value))
          return scrubber.scrub(toolError(`Header '${name}' would contain a line break; the call was not made.`))
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
  }
}
