/**
 * The one outbound HTTP client of the service (REST tools, OpenAPI packs, MCP, prompt tools).
 *
 *   const egress = new EgressClient({ allow: deploymentAllowList(env), tenantAllowList: documentTenantAllowList(store) })
 *   const res = await egress.request({ tenant, url, method: 'POST', headers, body, timeoutMs: 5000, maxBytes: 1 << 20 })
 *   // → { status, statusText, headers, body: Buffer, url (final), redirects }
 *
 * Every hop (the first request and each redirect) goes through EgressGuard.check and is sent to
 * the address that was checked. At most 5 redirects; 301/302 turn POST into GET, 303 turns
 * everything but HEAD into GET, 307/308 keep method and body. When a redirect leaves the
 * origin, credentials (Authorization, Cookie, Proxy-Authorization and `sensitiveHeaders`) are
 * dropped; a body marked `sensitiveBody` cannot be dropped without changing the request, so a
 * redirect that would carry it to another origin is not followed (EgressError 'unsafe-redirect').
 * One deadline (`timeoutMs`) covers resolution, every hop and the body.
 */
import { onAbort } from '../runtime/abort-listener'
import type { Logger } from '../runtime/logger'
import { silentLogger } from '../runtime/logger'
import { type AddressClass, socketAddress } from './address'
import type { AllowList } from './allow-list'
import { type Connector, NodeConnector } from './connector'
import { EgressError } from './errors'
import { type CheckedTarget, EgressGuard, type Resolver } from './guard'
import type { OwnEndpoints } from './own-endpoints'
import type { TenantAllowListSource } from './tenant-allow-list'

export interface EgressRequest {
  tenant: string
  url: string | URL
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
  /** Whole-call deadline (default 10 s, capped by the client's maxTimeoutMs). */
  timeoutMs?: number
  /** Largest decoded response body accepted (default 1 MiB, capped by the client's maxResponseBytes). */
  maxBytes?: number
  signal?: AbortSignal
  /** 'follow' (default, ≤ maxRedirects) or 'manual' (a 3xx is returned as it is). */
  redirect?: 'follow' | 'manual'
  /** At most 5 (and at most the client's limit). */
  maxRedirects?: number
  /** Header names that carry credentials and must not follow a redirect to another origin. */
  sensitiveHeaders?: string[]
  /** The body carries credentials (a substituted secret): it is never re-sent to another origin. */
  sensitiveBody?: boolean
}

export interface EgressResponse {
  status: number
  statusText: string
  headers: Record<string, string>
  body: Buffer
  /** The URL that produced this response (after redirects). */
  url: string
  redirects: number
}

export interface EgressClientOptions {
  allow?: AllowList
  /** The service's own listeners, never reachable (see OwnEndpoints). */
  ownEndpoints?: OwnEndpoints
  tenantAllowList?: TenantAllowListSource
  tenantGrantable?: AddressClass[]
  resolver?: Resolver
  connector?: Connector
  log?: Logger
  defaultTimeoutMs?: number
  maxTimeoutMs?: number
  defaultMaxBytes?: number
  maxResponseBytes?: number
}

export const MAX_REDIRECTS = 5
const REDIRECTS = new Set([301, 302, 303, 307, 308])
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization']

export class EgressClient {
  readonly guard: EgressGuard
  private readonly connector: Connector
  private readonly log: Logger
  private readonly limits: { defaultTimeoutMs: number; maxTimeoutMs: number; defaultMaxBytes: number; maxResponseBytes: number }

  constructor(opts: EgressClientOptions = {}) {
    this.guard = new EgressGuard(opts)
    this.connector = opts.connector ?? new NodeConnector()
    this.log = opts.log ?? silentLogger
    this.limits = {
      defaultTimeoutMs: opts.defaultTimeoutMs ?? 10_000,
      maxTimeoutMs: opts.maxTimeoutMs ?? 120_000,
      defaultMaxBytes: opts.defaultMaxBytes ?? 1024 * 1024,
      maxResponseBytes: opts.maxResponseBytes ?? 32 * 1024 * 1024,
    }
  }

  /** Checks a URL without calling it (for transports that must open their own connection). */
  check(tenant: string, url: string | URL): Promise<CheckedTarget> {
    return this.guard.check(tenant, url)
  }

  async request(req: EgressRequest): Promise<EgressResponse> {
    const timeoutMs = Math.max(1, Math.min(req.timeoutMs ?? this.limits.defaultTimeoutMs, this.limits.maxTimeoutMs))
    const maxBytes = Math.max(0, Math.min(req.maxBytes ?? this.limits.defaultMaxBytes, this.limits.maxResponseBytes))
    const maxRedirects = Math.max(0, Math.min(req.maxRedirects ?? MAX_REDIRECTS, MAX_REDIRECTS))
    const controller = new AbortController()
    let host = safeHost(req.url)
    const timer = setTimeout(
      () =>
        controller.abort(new EgressError('timeout', `the call to ${host} did not complete within ${timeoutMs} ms`, { host, timeoutMs })),
      timeoutMs,
    )
    const onCallerAbort = () => controller.abort(new EgressError('aborted', `the call to ${host} was cancelled`, { host }))
    let stopListening: (() => void) | undefined
    if (req.signal?.aborted) onCallerAbort()
    else if (req.signal) stopListening = onAbort(req.signal, onCallerAbort)
    const signal = controller.signal

    let url = String(req.url)
    let method = (req.method ?? 'GET').toUpperCase()
    let headers = { ...(req.headers ?? {}) }
    let body: Buffer | undefined =
      req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : Buffer.from(req.body)
    const sensitive = new Set([...CREDENTIAL_HEADERS, ...(req.sensitiveHeaders ?? []).map((h) => h.toLowerCase())])
    try {
      for (let hop = 0; ; hop++) {
        const target = await abortable(this.guard.check(req.tenant, url), signal)
        host = target.host
        const res = await this.connector.send({
          url: target.url,
          ...socketAddress(target.pinned),
          port: target.port,
          method,
          headers,
          body,
          maxBytes,
          signal,
        })
        const location = res.headers.location
        if (req.redirect === 'manual' || !REDIRECTS.has(res.status) || !location) {
          return { ...res, url: target.url.href, redirects: hop }
        }
        if (hop >= maxRedirects) {
          throw new EgressError('redirects', `${target.host} redirected more than ${maxRedirects} times`, {
            host: target.host,
            maxRedirects,
          })
        }
        let next: URL
        try {
          next = new URL(location, target.url)
        } catch {
          throw new EgressError('network', `${target.host} redirected to an invalid location`, { host: target.host })
        }
        if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
          method = 'GET'
          body = undefined
          headers = withoutHeaders(headers, ['content-type', 'content-length', 'content-encoding'])
        }
        if (next.origin !== target.url.origin) {
          if (body && req.sensitiveBody) {
            throw new EgressError(
              'unsafe-redirect',
              `${target.host} redirected (${res.status}) to another origin (${next.host}) and the request body, which carries a secret, would have been sent there again; the redirect was not followed`,
              { host: target.host, status: res.status, location: next.origin },
            )
          }
          headers = withoutHeaders(headers, [...sensitive])
        }
        this.log.log('debug', 'egress.redirect', { tenant: req.tenant, from: target.host, to: next.hostname, status: res.status })
        url = next.href
      }
    } catch (e) {
      if (signal.aborted && signal.reason instanceof EgressError) throw signal.reason
      throw e
    } finally {
      clearTimeout(timer)
      stopListening?.()
    }
  }
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  const drop = new Set(names.map((n) => n.toLowerCase()))
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !drop.has(k.toLowerCase())))
}

function safeHost(url: string | URL): string {
  try {
    return new URL(String(url)).hostname || 'the server'
  } catch {
    return 'the server'
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const stop = onAbort(signal, () => reject(signal.reason))
    promise.then(
      (v) => {
        stop()
        resolve(v)
      },
      (e) => {
        stop()
        reject(e)
      },
    )
  })
}
