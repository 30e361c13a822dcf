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
import net from 'node:net'
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

/** Sees one piece of an answer's body; the bytes are valid only during the call (the client reads the next piece into them). */
export type Look = (piece: Uint8Array) => void

/**
 * A request whose answer's body is handed to `look` piece by piece as it arrives and kept by
 * nobody; resolves to the status once the answer has ended. For a flood that checks a large answer
 * on its bytes (test/hostile/rows/discovery.ts, `answered`).
 */
export type Scan = (url: string, init: ClientInit, look: Look) => Promise<number>

/** `Scan` over any client: each piece of the `Response`'s body in turn (the tests' `fetch`). */
export function scanOver(client: Client): Scan {
  return async (url, init, look) => {
    const res = await client(url, init)
    for await (const chunk of res.body ?? []) look(chunk)
    return res.status
  }
}

/**
 * The bench's `Scan`: HTTP/1.1 over kept-alive sockets that read into one buffer of their own
 * (`net` `onread`), so an answer of any size allocates nothing as it arrives.
 *
 * Why: `node:http` reads each piece into a fresh buffer. A D2 flood reads ~1–2 MB an answer in
 * ~50 pieces, ~100 MB a second, and that external memory started a mark-compact in the bench
 * every 110–220 ms (`--trace-gc`: "external memory pressure", 49–105 a D2 run); with its 4
 * helper threads marking, the bench's client took the victim's cores in the runs where its
 * collections ran most (scratch `perf` of 2026-12-04: the bench's helper threads 1,341 samples
 * in a slow D2 run, 671 in a fast one).
 */
export function rawScanClient(): Scan & { close(): void } {
  const idle = new Map<string, RawConnection[]>()
  const open = new Set<RawConnection>()
  const scan: Scan = async (url, init, look) => {
    const u = new URL(url)
    if (u.protocol !== 'http:') throw new Error(`rawScanClient speaks http only, not ${u.protocol}`)
    const key = `${u.hostname}:${u.port || 80}`
    let pool = idle.get(key)
    if (!pool) idle.set(key, (pool = []))
    let conn = pool.pop()
    while (conn?.closed) conn = pool.pop()
    const reused = conn !== undefined
    conn ??= rawConnection(u.hostname.replace(/^\[|\]$/g, ''), Number(u.port || 80), open)
    try {
      const status = await conn.send(requestOf(u, init), init, look)
      if (conn.reusable) pool.push(conn)
      else conn.destroy()
      return status
    } catch (e) {
      // a kept-alive connection the server closed as this request went out: once more on a new one
      if (reused && e instanceof ClosedBeforeAnswer) return scan(url, init, look)
      throw e
    }
  }
  return Object.assign(scan, {
    close() {
      for (const c of open) c.destroy()
      idle.clear()
    },
  })
}

class ClosedBeforeAnswer extends Error {}

/** The request's head and body, written as they are: a flood's encoded body is never copied. */
function requestOf(u: URL, init: ClientInit): { head: Buffer; body?: Uint8Array } {
  const body = typeof init.body === 'string' ? Buffer.from(init.body) : init.body
  const lines = [`${init.method ?? 'GET'} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`]
  for (const [name, value] of Object.entries(init.headers ?? {})) lines.push(`${name}: ${value}`)
  lines.push(`content-length: ${body?.byteLength ?? 0}`)
  return { head: Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body: body?.byteLength ? body : undefined }
}

interface RawConnection {
  readonly closed: boolean
  /** Whether the connection may carry another request (the last answer ended cleanly, no `connection: close`). */
  readonly reusable: boolean
  send(request: { head: Buffer; body?: Uint8Array }, init: ClientInit, look: Look): Promise<number>
  destroy(): void
}

/** What the parser expects next of the answer. */
type Phase = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailer' | 'until-close' | 'done'

/** The largest head or chunk-size line a connection gathers before it calls the answer malformed. */
const MAX_LINE = 64 * 1024

function rawConnection(host: string, port: number, open: Set<RawConnection>): RawConnection {
  let phase: Phase = 'done'
  let status = 0
  let remaining = 0
  let line: number[] = []
  let head = ''
  let keepAlive = true
  let closed = false
  let sawByte = false
  let look: Look = () => {}
  let settle: ((e?: Error) => void) | undefined

  const finish = (e?: Error) => {
    const s = settle
    settle = undefined
    if (e) phase = 'done'
    s?.(e)
  }

  /** Handles `view[from..]` up to the answer's end (bytes after it, which a server does not send unasked, are dropped). */
  const step = (view: Buffer, from: number) => {
    let i = from
    while (i < view.length && phase !== 'done') {
      if (phase === 'head' || phase === 'chunk-size' || phase === 'chunk-end' || phase === 'trailer') {
        // a line at a time: the head's lines end in an empty one, chunk framing is one line each
        const nl = view.indexOf(10, i)
        const end = nl === -1 ? view.length : nl + 1
        for (let k = i; k < end; k++) line.push(view[k])
        i = end
        if (line.length > MAX_LINE) throw new Error(`an answer's ${phase} line is over ${MAX_LINE} bytes`)
        if (nl === -1) continue
        const text = Buffer.from(line)
          .toString('latin1')
          .replace(/\r?\n$/, '')
        line = []
        if (phase === 'head') onHeadLine(text)
        else if (phase === 'chunk-size') {
          const size = Number.parseInt(text.split(';')[0], 16)
          if (!Number.isFinite(size) || size < 0) throw new Error(`a chunk size that is not one: ${JSON.stringify(text)}`)
          if (size === 0) phase = 'trailer'
          else {
            remaining = size
            phase = 'chunk-data'
          }
        } else if (phase === 'chunk-end') {
          if (text !== '') throw new Error(`a chunk not followed by its line end: ${JSON.stringify(text)}`)
          phase = 'chunk-size'
        } else if (text === '') phase = 'done'
      } else {
        const take = phase === 'until-close' ? view.length - i : Math.min(remaining, view.length - i)
        if (take > 0) look(view.subarray(i, i + take))
        i += take
        remaining -= take
        if (remaining === 0 && phase === 'length') phase = 'done'
        else if (remaining === 0 && phase === 'chunk-data') phase = 'chunk-end'
      }
    }
  }

  let fields: { length?: number; chunked: boolean } = { chunked: false }
  const onHeadLine = (text: string) => {
    if (!head) {
      const m = /^HTTP\/1\.([01]) (\d{3})/.exec(text)
      if (!m) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify(text.slice(0, 100))}`)
      head = text
      status = Number(m[2])
      keepAlive = m[1] === '1'
      fields = { chunked: false }
      return
    }
    if (text !== '') {
      const colon = text.indexOf(':')
      const name = text.slice(0, colon).trim().toLowerCase()
      const value = text.slice(colon + 1).trim()
      if (name === 'content-length') fields.length = Number(value)
      else if (name === 'transfer-encoding') fields.chunked = /chunked/i.test(value)
      else if (name === 'connection') keepAlive = !/close/i.test(value)
      return
    }
    // the head has ended
    if (status === 101 || status === 204 || status === 304 || (status >= 100 && status < 200)) phase = 'done'
    else if (fields.chunked) phase = 'chunk-size'
    else if (fields.length !== undefined) {
      remaining = fields.length
      phase = remaining === 0 ? 'done' : 'length'
    } else {
      keepAlive = false
      phase = 'until-close'
    }
  }

  const socket = net.connect({
    host,
    port,
    noDelay: true,
    onread: {
      buffer: Buffer.allocUnsafe(256 * 1024),
      callback(nread: number, buf: Uint8Array) {
        if (!settle) return true
        sawByte = true
        const view = Buffer.from(buf.buffer, buf.byteOffset, nread)
        try {
          step(view, 0)
          if (phase === 'done') finish()
        } catch (e) {
          keepAlive = false
          socket.destroy()
          finish(e as Error)
        }
        return true
      },
    },
  })
  socket.on('error', () => {})
  socket.on('close', () => {
    closed = true
    open.delete(conn)
    if (!settle) return
    if (phase === 'until-close') {
      phase = 'done'
      finish()
    } else
      finish(
        sawByte
          ? new Error(`the connection closed in the answer's ${phase}`)
          : new ClosedBeforeAnswer('the connection closed before an answer'),
      )
  })

  const conn: RawConnection = {
    get closed() {
      return closed
    },
    get reusable() {
      return keepAlive && !closed && phase === 'done'
    },
    send(request, init, see) {
      if (settle) throw new Error('one request at a time on a connection')
      look = see
      phase = 'head'
      head = ''
      status = 0
      line = []
      sawByte = false
      const timeoutMs = init.timeoutMs ?? 180_000
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          socket.destroy()
          finish(new Error(`no answer within ${timeoutMs} ms`))
        }, timeoutMs)
        settle = (e) => {
          clearTimeout(timer)
          if (e) reject(e)
          else resolve(status)
        }
        // one write to the socket for both (corked), without joining them into a new buffer
        socket.cork()
        socket.write(request.head)
        if (request.body) socket.write(request.body)
        socket.uncork()
      })
    },
    destroy: () => socket.destroy(),
  }
  open.add(conn)
  return conn
}
