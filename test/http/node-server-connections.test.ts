/**
 * Slow and idle connections on the node server (`npm start`): the timeouts functions/local.ts
 * passes to it cut a client that trickles its headers or its body, and a body the client abandons
 * is the client's error (a 4xx), not a logged 500. Asserted on what the server answers and logs,
 * over real sockets on 127.0.0.1; the timeouts are shortened so the test waits under 2 s each.
 */

import type { AddressInfo } from 'node:net'
import { connect, type Socket } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { DEFAULT_NODE_SERVER_TIMEOUTS, nodeServerOptions } from '../../functions/settings'
import { MemoryLogger } from '../../lib/runtime/logger'
import { ALL, tokenFor } from '../support/http'

const log = new MemoryLogger()
let server: ReturnType<typeof serve>
let port: number
let token: string

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  const timeouts = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 300, connectionsCheckingIntervalMs: 100 }
  server = serve({
    fetch: createApp(createMemoryDeps({ log })).fetch,
    port: 0,
    hostname: '127.0.0.1',
    serverOptions: nodeServerOptions(timeouts),
  })
  await new Promise<void>((r) => server.once('listening', () => r()))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

/** Opens a socket, writes `first`, keeps it open; resolves with everything the server sent once it closes. */
function hold(first: string, closeAfterMs?: number): Promise<{ answer: string; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (d) => (answer += d))
    socket.on('error', () => {})
    socket.on('close', () => resolve({ answer, socket }))
    socket.write(first)
    if (closeAfterMs !== undefined) setTimeout(() => socket.destroy(), closeAfterMs)
  })
}

describe('slow and idle connections on the node server', () => {
  it('defaults to 10 s for headers and 30 s for a whole request, far under Node’s 60 s and 300 s', () => {
    expect(DEFAULT_NODE_SERVER_TIMEOUTS).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 })
  })

  it('answers 408 and closes a connection whose headers never finish', async () => {
    const { answer } = await hold(`GET /brain/acme/projects/p1/server-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `)
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
  })

  it('answers 408 and closes a connection whose body trickles past the request timeout', async () => {
    const { answer } = await hold(
      `PUT /brain/acme/projects/p1/server-tools/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        'Content-Type: application/yaml\r\nContent-Length: 100000\r\n\r\ntype: doc_lookup\n',
    )
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
  })

  it('closes an idle keep-alive connection after a request was answered', async () => {
    const { answer } = await hold(
      `GET /brain/acme/projects/p1/server-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1)
  })

  it('logs no error when a client abandons its body half-way', async () => {
    const before = log.lines.filter((l) => l.level === 'error').length
    await hold(
      `PUT /brain/acme/projects/p1/server-tools/gone HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        'Content-Type: application/yaml\r\nContent-Length: 5000\r\n\r\ntype: doc_lookup\n',
      100,
    )
    // the handler's failure surfaces after the socket closed: give it the checking interval
    await new Promise((r) => setTimeout(r, 300))
    expect(log.lines.filter((l) => l.level === 'error').slice(before)).toEqual([])
  })
})
