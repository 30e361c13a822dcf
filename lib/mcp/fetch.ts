/**
 * The `fetch` the MCP SDK transports get: every request goes through the egress guard.
 *
 * - Message POSTs and session DELETEs go through `EgressClient.request` (resolve, check, pin,
 *   re-checked redirects, one deadline, byte cap). Their SSE answers end when the server has
 *   answered the request, so a buffered body is a complete stream.
 * - The long-lived GET event stream (server → client notifications such as
 *   `notifications/tools/list_changed`) cannot be buffered. It is opened here with the same
 *   guard: `EgressClient.check` resolves and checks the host, and the socket connects to the
 *   pinned address (nothing re-resolves the name). Redirects are not followed on this path
 *   (the SDK follows same-origin ones itself, calling back in here, so each hop is re-checked).
 *   A deadline covers the response headers; the stream then lives until the transport closes it,
 *   up to a byte cap over its lifetime.
 */
import http from 'node:http'
import https from 'node:https'
import { parseAddress, socketAddress } from '../egress/address'
import { normalizeHost } from '../egress/allow-list'
import type { EgressClient } from '../egress/client'
import { pinnedLookup } from '../egress/connector'
import { EgressError } from '../egress/errors'

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

export interface EgressFetchOptions {
  tenant: string
  /** Deadline of one request (and of the headers of an event stream). */
  timeoutMs: number
  /** Largest buffered response (default 4 MiB). */
  maxBytes?: number
  /** Largest number of bytes one event stream may carry before it is closed (default 16 MiB). */
  streamMaxBytes?: number
}

const NULL_BODY = new Set([101, 103, 204, 205, 304])
/** The connector has decoded the body; these would describe bytes the Response does not hold. */
const DROP_RESPONSE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])

export function egressFetch(egress: Pick<EgressClient, 'request' | 'check'>, opts: EgressFetchOptions): FetchLike {
  return async (input, init = {}) => {
    const url = String(input)
    const method = (init.method ?? 'GET').toUpperCase()
    const headers = headerRecord(init.headers)
    const signal = init.signal ?? undefined
    if (method === 'GET' && /text\/event-stream/i.test(headers.accept ?? '')) {
      return openEventStream(egress, opts, url, headers, signal)
    }
    const res = await egress.request({
      tenant: opts.tenant,
      url,
      method,
      headers,
      body: await bodyBytes(init.body),
      timeoutMs: opts.timeoutMs,
      maxBytes: opts.maxBytes ?? 4 * 1024 * 1024,
      signal,
      redirect: init.redirect === 'manual' || init.redirect === 'error' ? 'manual' : 'follow',
    })
    const out = new Headers()
    for (const [k, v] of Object.entries(res.headers)) if (!DROP_RESPONSE_HEADERS.has(k)) out.set(k, v)
    return new Response(NULL_BODY.has(res.status) ? null : new Uint8Array(res.body), {
      status: res.status,
      statusText: res.statusText,
      headers: out,
    })
  }
}

function headerRecord(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {}
  if (!h) return out
  new Headers(h).forEach((v, k) => {
    out[k] = v
  })
  return out
}

async function bodyBytes(body: RequestInit['body']): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return body
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  return new Uint8Array(await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer())
}

async function openEventStream(
  egress: Pick<EgressClient, 'check'>,
  opts: EgressFetchOptions,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const target = await egress.check(opts.tenant, url)
  const { address, family } = socketAddress(target.pinned)
  const secure = target.url.protocol === 'https:'
  const hostname = normalizeHost(target.url.hostname)
  const limit = opts.streamMaxBytes ?? 16 * 1024 * 1024
  const sendHeaders: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (k !== 'host' && k !== 'connection') sendHeaders[k] = v
  sendHeaders.host = target.url.host

  return new Promise<Response>((resolve, reject) => {
    let settled = false
    const fail = (e: unknown) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(e)
    }
    const request = (secure ? https : http).request({
      host: address,
      family,
      port: target.port,
      path: `${target.url.pathname}${target.url.search}`,
      method: 'GET',
      headers: sendHeaders,
      agent: false, // a dedicated socket: this stream may stay open for the life of the session
      lookup: pinnedLookup(address, family),
      ...(signal ? { signal } : {}),
      ...(secure && !parseAddress(hostname) ? { servername: hostname } : {}),
    })
    const timer = setTimeout(() => {
      const e = new EgressError('timeout', `the event stream of ${hostname} did not open within ${opts.timeoutMs} ms`, {
        host: hostname,
        timeoutMs: opts.timeoutMs,
      })
      request.destroy(e)
      fail(e)
    }, opts.timeoutMs)
    request.on('error', (e) =>
      fail(
        signal?.aborted
          ? signal.reason
          : e instanceof EgressError
            ? e
            : new EgressError('network', `the event stream of ${hostname} failed: ${(e as NodeJS.ErrnoException).code ?? e.message}`, {
                host: hostname,
              }),
      ),
    )
    request.on('response', (res) => {
      clearTimeout(timer)
      if (settled) {
        res.destroy()
        return
      }
      settled = true
      const out = new Headers()
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined || DROP_RESPONSE_HEADERS.has(k)) continue
        out.set(k, Array.isArray(v) ? v.join(', ') : v)
      }
      let size = 0
      let done = false
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          res.on('data', (chunk: Buffer) => {
            if (done) return
            size += chunk.length
            if (size > limit) {
              done = true
              controller.error(
                new EgressError('too-large', `the event stream of ${hostname} exceeded ${limit} bytes`, {
                  host: hostname,
                  maxBytes: limit,
                }),
              )
              res.destroy()
              return
            }
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          })
          res.on('end', () => {
            if (done) return
            done = true
            controller.close()
          })
          res.on('error', (e) => {
            if (done) return
            done = true
            controller.error(e)
          })
          res.on('close', () => {
            if (done) return
            done = true
            if (res.complete) controller.close()
            else controller.error(new EgressError('network', `the event stream of ${hostname} closed`, { host: hostname }))
          })
        },
        cancel() {
          done = true
          res.destroy()
        },
      })
      const status = res.statusCode ?? 0
      resolve(new Response(NULL_BODY.has(status) ? null : body, { status, statusText: res.statusMessage ?? '', headers: out }))
    })
    request.end()
  })
}
