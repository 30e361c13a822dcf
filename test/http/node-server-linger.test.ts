/**
 * Lingering close on the node server (functions/http/linger.ts): a refusal written before a body
 * of unknown or over-long length arrived says `Connection: close`, reads at most a small budget
 * of the rest, and never resets the connection under its answer. Real sockets on 127.0.0.1;
 * counted, not timed: answers read, bytes the server's sockets read, places in the fair share.
 */
import { Agent, request, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { DEFAULT_LINGER, type LingeringResponseClass, type LingerSettings, lingeringResponse } from '../../functions/http/linger'
import { ALL, tokenFor } from '../support/http'

const MiB = 1024 * 1024
const CHUNK = 64 * 1024

interface Started {
  port: number
  /** every connection the server accepted, for the bytes its socket read */
  sockets: Socket[]
  /** the HTTP parser each of them was given (Node reuses parsers across connections) */
  parsers: object[]
  responses: LingeringResponseClass
  deps: ReturnType<typeof createMemoryDeps>
}

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.close(() => r())
          s.closeAllConnections()
        }),
    ),
  )
})

async function start(settings: LingerSettings = DEFAULT_LINGER, deps = createMemoryDeps()): Promise<Started> {
  const responses = lingeringResponse(settings)
  const server = serve({
    fetch: createApp(deps).fetch,
    port: 0,
    hostname: '127.0.0.1',
    serverOptions: { ServerResponse: responses },
  }) as Server
  servers.push(server)
  const sockets: Socket[] = []
  const parsers: object[] = []
  server.on('connection', (s: Socket) => {
    sockets.push(s)
    parsers.push(countBodyBytes(s))
  })
  await new Promise<void>((r) => server.once('listening', () => r()))
  return { port: (server.address() as AddressInfo).port, sockets, parsers, responses, deps }
}

interface Outcome {
  status: number
  connection?: string
  /** the client's error when it came before any answer (a reset under the answer) */
  lost?: string
}

/**
 * Streams `bytes` of body (chunked unless `declared`), as fast as the connection takes them,
 * until the answer comes (or on, when `keepSending`); reads the answer whole and then lets go of
 * the connection (unless `keepSending`).
 */
function stream(
  port: number,
  opts: { bytes: number; token?: string; declared?: number; prefix?: string; keepSending?: boolean },
): Promise<Outcome> {
  return new Promise((resolve) => {
    // kept alive, as curl's or a browser's would be (Node's own client without an agent asks for close)
    const headers: Record<string, string | number> = { 'content-type': 'application/json', connection: 'keep-alive' }
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.declared !== undefined) headers['content-length'] = opts.declared
    const req = request({ host: '127.0.0.1', port, path: '/brain/acme/projects/p1/processes', method: 'POST', agent: false, headers })
    let answered = false
    req.on('response', (res) => {
      answered = true
      res.resume()
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection })
        if (!opts.keepSending) req.destroy()
      })
    })
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (!answered) resolve({ status: 0, lost: e.code ?? e.message })
    })
    const chunk = Buffer.alloc(CHUNK, 0x20)
    let sent = 0
    if (opts.prefix) {
      req.write(opts.prefix)
      sent += Buffer.byteLength(opts.prefix)
    }
    const pump = () => {
      while ((opts.keepSending || !answered) && sent < opts.bytes) {
        sent += chunk.length
        if (!req.write(chunk)) return void req.once('drain', pump)
      }
      if (!answered || opts.keepSending) req.end()
    }
    pump()
  })
}

/** Waits (polling, bounded) until `cond` holds: a count the server reached, never a duration asserted. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!cond()) throw new Error(`never: ${what}`)
}

// What a socket may read after its answer besides the budget: the read that crossed it and the
// socket's own buffer, filled when reading stops. Each is at most 64 KiB.
const AFTER = DEFAULT_LINGER.readBytes + 2 * CHUNK
// and before it, to a refusal that reads no body: the request's head, the request's own buffer
// and one socket read (Node reads ahead while the app decides)
const IN_ALL = AFTER + 2 * CHUNK

describe('a refusal that leaves a long body unread', () => {
  it('is read by all of 20 clients streaming 16 MiB chunked with no token, and each socket reads at most its budget', async () => {
    const { port, sockets, responses } = await start()
    // clients that send on after their answer, as one that writes its whole body regardless would
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => stream(port, { bytes: 16 * MiB, keepSending: true })))
    expect(outcomes.filter((o) => o.lost)).toEqual([])
    expect(outcomes).toEqual(Array(20).fill({ status: 401, connection: 'close' }))
    expect(sockets).toHaveLength(20)
    await until(() => responses.readStopped() === 20, 'every body’s reading stopped at its budget')
    // the clients' sends now block on closed windows: what the sockets read stays within the budget
    await new Promise((r) => setTimeout(r, 300))
    expect(sockets.filter((s) => s.destroyed)).toEqual([])
    const most = Math.max(...sockets.map((s) => s.bytesRead))
    expect(most).toBeLessThanOrEqual(IN_ALL)
    expect(responses.readWhileLingering()).toBeLessThanOrEqual(20 * AFTER)
  })

  it('reads at most its budget of a body declared larger than any route takes', async () => {
    const { port, sockets, responses } = await start()
    const outcome = await stream(port, { bytes: 16 * MiB, declared: 16 * MiB, keepSending: true })
    // refused for its declared size before its token is asked for
    expect(outcome).toEqual({ status: 413, connection: 'close' })
    await until(() => responses.readStopped() === 1, 'reading stopped at the budget')
    await new Promise((r) => setTimeout(r, 300))
    expect(sockets[0].destroyed).toBe(false)
    expect(sockets[0].bytesRead).toBeLessThanOrEqual(IN_ALL)
  })

  it('keeps the connection of a small refused body alive for the next request', async () => {
    const { port, sockets } = await start()
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const once = () =>
        new Promise<{ status: number; connection?: string }>((resolve, reject) => {
          const body = JSON.stringify({ tool: 'x', input: 'y'.repeat(10_000) })
          const req = request(
            {
              host: '127.0.0.1',
              port,
              path: '/brain/acme/projects/p1/processes',
              method: 'POST',
              agent,
              headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
            },
            (res) => {
              res.resume()
              res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }))
            },
          )
          req.on('error', reject)
          req.end(body)
        })
      expect(await once()).toEqual({ status: 401, connection: 'keep-alive' })
      expect(await once()).toEqual({ status: 401, connection: 'keep-alive' })
      expect(sockets).toHaveLength(1)
    } finally {
      agent.destroy()
    }
  })

  it('stops reading at its budget and gives the tenant’s place in the fair share back, while its client still sends', async () => {
    const deps = createMemoryDeps({ fairShare: { busyFloor: 1e-9 } })
    const { port, sockets, responses } = await start({ ...DEFAULT_LINGER, lingerMs: 60_000 }, deps)
    const inFlight = () => deps.fairShare?.view().find((v) => v.tenant === 'acme')?.inFlight
    const token = await tokenFor('acme', ALL)
    const models = Array.from({ length: 1_500 }, (_, i) => `"cortecs/m${i}"`).join(',')
    // a spawn listing more models than a chain may hold: refused while it streams; its client
    // sends on after the answer, 16 MiB in all, and never closes
    const outcome = stream(port, { bytes: 16 * MiB, token, prefix: `{"models": [${models},`, keepSending: true })
    expect(await outcome).toEqual({ status: 400, connection: 'close' })
    await until(() => responses.lingering() === 1, 'the connection lingering')
    await until(() => responses.readStopped() === 1, 'reading stopped at the budget')
    await until(() => inFlight() === 0, 'the place given back')
    expect(inFlight()).toBe(0)
    // the client's sends now block on a closed window: what the socket read stays within the budget
    await new Promise((r) => setTimeout(r, 300))
    expect(sockets[0].destroyed).toBe(false)
    expect(responses.readWhileLingering()).toBeLessThanOrEqual(AFTER)
  })

  it('destroys the oldest lingering connection past the bound', async () => {
    const { port, sockets, responses } = await start({ ...DEFAULT_LINGER, maxLingering: 2, lingerMs: 60_000 })
    const outcomes: Promise<Outcome>[] = []
    for (let i = 0; i < 4; i++) {
      outcomes.push(stream(port, { bytes: 16 * MiB }))
      await until(() => sockets.length === i + 1 && responses.lingering() === Math.min(i + 1, 2), `connection ${i + 1} lingering`)
    }
    expect(responses.lingering()).toBe(2)
    await until(() => sockets.filter((s) => s.destroyed).length === 2, 'the two oldest destroyed')
    expect(sockets.slice(0, 2).every((s) => s.destroyed)).toBe(true)
    expect((await Promise.all(outcomes)).map((o) => o.status)).toEqual([401, 401, 401, 401])
  })
})

// Body bytes Node's parser handed to JavaScript (its kOnBody slot), counted on every parser the
// tests' servers use (wrapped as each connection starts): a parser outlives its connection (Node
// reuses it), so each is wrapped once.
const countedParsers = new WeakSet<object>()
const handed = { bytes: 0 }
function countBodyBytes(socket: Socket) {
  const parser = (socket as unknown as { parser: Record<number, unknown> & { constructor: { kOnBody: number } } }).parser
  const slot = parser.constructor.kOnBody
  if (countedParsers.has(parser)) return parser
  countedParsers.add(parser)
  const onBody = parser[slot] as (b: Buffer) => unknown
  parser[slot] = function (this: { socket?: { server?: unknown } | null }, b: Buffer) {
    // a parser also serves clients (Node's one pool): only a server's request bodies are counted
    if (this.socket?.server) handed.bytes += b.length
    return onBody.call(this, b)
  }
  return parser
}

/** One request on `agent` (or a connection of its own); the answer's status and text. */
function send(port: number, method: string, path: string, opts: { agent?: Agent; token?: string; body?: string; type?: string } = {}) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const headers: Record<string, string | number> = {}
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.body !== undefined) {
      headers['content-type'] = opts.type ?? 'application/json'
      headers['content-length'] = Buffer.byteLength(opts.body)
    }
    const req = request({ host: '127.0.0.1', port, path, method, agent: opts.agent ?? false, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(opts.body)
  })
}

describe('a refused body of a declared length the app does not read', () => {
  // ~900 KB: a spawn listing 50,000 models, refused at the 17th while it streams
  const refusedSpawn = JSON.stringify({ models: Array.from({ length: 50_000 }, (_, i) => `cortecs/m${i}`) })
  const doc = `${Array.from({ length: 2_000 }, (_, i) => `key${i}: value ${i}`).join('\n')}\n`
  const docPath = '/brain/acme/projects/p1/documents/notes/after.yaml'

  it('is skipped by the parser, none of its rest handed to JavaScript, and the next request on the connection arrives whole', async () => {
    const { port, sockets, responses } = await start()
    const token = await tokenFor('acme', ALL)
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      handed.bytes = 0
      const refused = send(port, 'POST', '/brain/acme/projects/p1/processes', { agent, token, body: refusedSpawn })
      expect((await refused).status).toBe(400)
      // what the app read before it refused: the first pieces, never the ~900 KB
      expect(handed.bytes).toBeLessThan(2 * CHUNK)
      expect(responses.bodiesSkipped()).toBe(1)
      handed.bytes = 0
      expect((await send(port, 'PUT', docPath, { agent, token, body: doc, type: 'application/yaml' })).status).toBe(201)
      expect(handed.bytes).toBe(Buffer.byteLength(doc))
      expect((await send(port, 'GET', docPath, { agent, token })).text).toBe(doc)
      expect(sockets).toHaveLength(1)
    } finally {
      agent.destroy()
    }
  })

  it('leaves the parser whole for the next connection when its client leaves mid-body', async () => {
    const { port, sockets, parsers, responses } = await start()
    const token = await tokenFor('acme', ALL)
    const first = request({
      host: '127.0.0.1',
      port,
      path: '/brain/acme/projects/p1/processes',
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(refusedSpawn) },
    })
    first.on('error', () => {})
    const answered = new Promise<number>((r) => first.on('response', (res) => r(res.statusCode ?? 0)))
    first.write(refusedSpawn.slice(0, 4 * CHUNK))
    expect(await answered).toBe(400)
    expect(responses.bodiesSkipped()).toBe(1)
    first.destroy()
    await until(() => sockets[0].destroyed, 'the first connection closed')
    handed.bytes = 0
    const put = send(port, 'PUT', docPath, { token, body: doc, type: 'application/yaml' })
    expect((await put).status).toBe(201)
    // Node handed the same parser to the next connection: its body slot was given back
    expect(parsers[1]).toBe(parsers[0])
    expect(handed.bytes).toBe(Buffer.byteLength(doc))
    expect((await send(port, 'GET', docPath, { token })).text).toBe(doc)
  })
})
