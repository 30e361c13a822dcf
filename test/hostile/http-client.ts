/**
 * The attack client of `npm run bench -- hostile`: one request over a kept-alive `node:http`
 * connection, answered as a `Response`, for the few shapes the attack classes send (a method,
 * flat headers, a string or byte body).
 *
 * Why not `fetch`: the bench's attack client shares the machine's 2 cores with the app, which a
 * real attacker's client never does, so what it spends per request is taken from the service under
 * test. Undici's `fetch` spent 1.5–1.7 ms of CPU per 340 KB refused spawn (N5) against the app's
 * 0.6; this client spends 0.13–0.22 ms, and its 2 connections send 3–5× the attacks a second
 * (scratch run of 4 s floods, 2026-12-03). A stronger attack for less of the bench's own CPU.
 */
import http from 'node:http'
import { Readable } from 'node:stream'

export interface ClientInit {
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
  /** Gives up on the request after this long (default 180 s), as `AbortSignal.timeout` did. */
  timeoutMs?: number
}

export type Client = (url: string, init?: ClientInit) => Promise<Response>

/** Statuses a `Response` may not carry a body with. */
const NO_BODY = new Set([101, 103, 204, 205, 304])

/** A client whose connections stay open between requests (as undici's pool keeps them). */
export function nodeHttpClient(): Client & { close(): void } {
  const agent = new http.Agent({ keepAlive: true })
  const send = (url: string, init: ClientInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const u = new URL(url)
      const body = typeof init.body === 'string' ? Buffer.from(init.body) : init.body
      const headers: Record<string, string> = { ...init.headers }
      if (body) headers['content-length'] = String(body.byteLength)
      const req = http.request(
        { host: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? 'GET', headers, agent },
        (res) => {
          const status = res.statusCode ?? 0
          const out = new Headers()
          for (const [name, value] of Object.entries(res.headers))
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) out.append(name, v)
          if (NO_BODY.has(status)) res.resume()
          // the body as it arrives: a flood that only looks at an answer's ends never holds it whole
          resolve(new Response(NO_BODY.has(status) ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out }))
        },
      )
      req.setTimeout(init.timeoutMs ?? 180_000, () =>
        req.destroy(new Error(`no answer from ${u.pathname} within ${init.timeoutMs ?? 180_000} ms`)),
      )
      req.on('error', reject)
      req.end(body)
    })
  return Object.assign(send, { close: () => agent.destroy() })
}

/** The global `fetch`, in the same shape (tests and the default). */
export const fetchClient: Client = (url, init = {}) =>
  fetch(url, { method: init.method, headers: init.headers, body: init.body, signal: AbortSignal.timeout(init.timeoutMs ?? 180_000) })
