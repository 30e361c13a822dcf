/**
 * Bodies and headers over real HTTP on @hono/node-server (what `npm start` runs): bodies read
 * directly from the Node request, capped while read; headers read from its raw header list.
 */

import { Agent, request } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { headerOf } from '../../functions/http/headers'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemoryAuditStore } from '../../lib/stores/memory/audit-store'
import { ALL, tokenFor } from '../support/http'

let server: ReturnType<typeof serve>
let port: number
let token: string
const log = new MemoryLogger()
const audit = new MemoryAuditStore()
const deps = createMemoryDeps({ log, auditStore: audit, auditFlushDelayMs: 0 })

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** Writes `text` on a fresh connection to `port`, ends the write side when `end`, and collects what comes back until the server closes. */
function raw(to: number, text: string, opts: { end?: boolean; destroyAfterMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1', () => {
      socket.write(text)
      if (opts.end) socket.end()
      if (opts.destroyAfterMs !== undefined) setTimeout(() => socket.destroy(), opts.destroyAfterMs)
    })
    let got = ''
    socket.on('data', (d) => (got += d))
    socket.on('close', () => resolve(got))
    socket.on('error', reject)
  })
}

function send(
  path: string,
  chunks: string[],
  headers: Record<string, string | number> = {},
  agent: Agent | false = false,
): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'PUT',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/yaml', ...headers },
      },
      (res) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }))
      },
    )
    req.on('error', (e) =>
      (e as NodeJS.ErrnoException).code === 'EPIPE' || (e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e),
    )
    for (const c of chunks) req.write(c)
    req.end()
  })
}

describe('request bodies on the node server', () => {
  it('reads a chunked YAML body and stores it', async () => {
    const res = await send('/brain/acme/projects/p1/server-tools/chunked', [
      'type: doc_lookup\n',
      'description: Sent in chunks\n',
      'parameters:\n  path: a.md\n',
    ])
    expect(res.status).toBe(201)
    expect(JSON.parse(res.body)).toMatchObject({ name: 'chunked', description: 'Sent in chunks' })
  })

  it('refuses a chunked body over 1 MiB with 413', async () => {
    const chunk = `${'#'.repeat(64 * 1024)}\n`
    const res = await send(
      '/brain/acme/projects/p1/documents/big.md',
      Array.from({ length: 20 }, () => chunk),
      { 'content-type': 'text/markdown' },
    )
    expect(res.status).toBe(413)
  })

  it('closes a kept-alive connection after a 413, so the next request on the same agent is answered', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const chunk = `${'#'.repeat(64 * 1024)}\n`
      const streamed = await send(
        '/brain/acme/projects/p1/documents/big.md',
        Array.from({ length: 20 }, () => chunk),
        { 'content-type': 'text/markdown' },
        agent,
      )
      expect(streamed).toMatchObject({ status: 413, connection: 'close' })
      const declared = await send(
        '/brain/acme/projects/p1/documents/big.md',
        [chunk],
        { 'content-type': 'text/markdown', 'content-length': 2 * 1024 * 1024 },
        agent,
      ).catch((e: Error) => ({ status: 0, body: e.message, connection: undefined }))
      expect(declared).toMatchObject({ status: 413, connection: 'close' })
      const next = await send(
        '/brain/acme/projects/p1/server-tools/after-413',
        ['type: doc_lookup\ndescription: After a 413\nparameters:\n  path: a.md\n'],
        {},
        agent,
      )
      expect(next.status).toBe(201)
    } finally {
      agent.destroy()
    }
  })

  it('answers an empty tool-call body as a call without a tool name', async () => {
    const spawned = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/brain/acme/projects/p1/processes',
          method: 'POST',
          agent: false,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        },
        (res) => {
          let body = ''
          res.on('data', (d) => (body += d))
          res.on('end', () => resolve(JSON.parse(body).id))
        },
      )
      req.on('error', reject)
      req.end(JSON.stringify({ allowedTools: ['whoami'] }))
    })
    const answer = await raw(
      port,
      `POST /brain/acme/projects/p1/processes/${spawned}/tool-calls HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 200/)
    expect(answer).toContain('A tool call needs a tool name')
  })

  it('treats a client that leaves mid-body as its own error: nothing logged as a failure, the next request answered', async () => {
    const before = log.lines.filter((l) => l.level === 'error').length
    await raw(
      port,
      `PUT /brain/acme/projects/p1/documents/half.md HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: text/markdown\r\nContent-Length: 1000\r\n\r\n# only half`,
      { destroyAfterMs: 50 },
    )
    const res = await send('/brain/acme/projects/p1/documents/whole.md', ['# whole'], { 'content-type': 'text/markdown' })
    expect(res.status).toBe(201)
    // the abandoned write was answered (a 400 nobody reads), not left waiting for bytes that never come
    await expect
      .poll(async () => {
        await deps.audit.recorder.flush()
        const { entries } = await audit.query('acme', {}, { limit: 50 }, Math.floor(Date.now() / 1000))
        return entries.find((e) => e.target.endsWith('half.md'))
      })
      .toMatchObject({ outcome: 'failed', status: 400, reason: 'INVALID_INPUT' })
    expect(log.lines.filter((l) => l.level === 'error').slice(before)).toEqual([])
  })
})

describe('request headers on the node server', () => {
  it('read as the web Headers of the same request read them: any case, repeated fields joined, absent ones undefined', async () => {
    const names = ['authorization', 'X-Repeated', 'x-mixed-case', 'x-empty', 'x-spaced', 'content-type', 'x-absent', 'host']
    const app = new Hono().get('/h', (c) =>
      c.json(Object.fromEntries(names.map((n) => [n, { ours: headerOf(c, n) ?? null, web: c.req.raw.headers.get(n) }]))),
    )
    const echo = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((r) => echo.once('listening', () => r()))
    try {
      const answer = await raw(
        (echo.address() as AddressInfo).port,
        [
          'GET /h HTTP/1.1',
          'Host: example.test',
          'Authorization: Bearer one',
          'authorization: Bearer two',
          'x-repeated: a',
          'X-REPEATED: b',
          'X-Repeated: c',
          'X-Mixed-Case: Value Kept',
          'x-empty:',
          'x-spaced:   padded   ',
          'Connection: close',
          '',
          '',
        ].join('\r\n'),
      )
      const read = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, { ours: string | null; web: string | null }>
      for (const n of names) expect(read[n].ours, n).toBe(read[n].web)
      expect(read['X-Repeated'].ours).toBe('a, b, c')
      expect(read.authorization.ours).toBe('Bearer one, Bearer two')
    } finally {
      await new Promise<void>((r) => echo.close(() => r()))
    }
  })
})
