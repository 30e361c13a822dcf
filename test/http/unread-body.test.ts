/**
 * An answer given before its request's body has arrived (functions/http/request.ts
 * `closeIfUnread`): past 64 KiB unread, the connection is closed rather than drained, so the rest
 * of a refused body is never read. Real sockets on 127.0.0.1; counted, not timed: the bytes the
 * server's socket read.
 */
import type { AddressInfo, Socket } from 'node:net'
import { connect } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ALL, tokenFor } from '../support/http'

const servers: ReturnType<typeof serve>[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))))
})

/** The app on 127.0.0.1, with the server side of every connection kept to read its counts. */
async function listen() {
  const app = createApp(createMemoryDeps())
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  servers.push(server)
  const accepted: Socket[] = []
  server.on('connection', (s: Socket) => accepted.push(s))
  await new Promise<void>((r) => server.once('listening', () => r()))
  return { port: (server.address() as AddressInfo).port, accepted }
}

/** Writes the request's headers and `sent` of its body, then reads until the server closes or `ms` pass. */
async function sendPart(port: number, head: string, sent: string, ms: number) {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (d: string) => (text += d))
  const ended = new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true))
    setTimeout(() => resolve(false), ms)
  })
  socket.write(head + sent)
  const closedByServer = await ended
  socket.destroy()
  return { text, closedByServer }
}

const models = (n: number) => Array.from({ length: n }, (_, i) => `"cortecs/m${i}"`).join(',')

describe('an answer given before the body arrived', () => {
  it('closes the connection when more than 64 KiB of the body are unread, and the rest is never read', async () => {
    const { port, accepted } = await listen()
    const token = await tokenFor('acme', ALL)
    const declared = 400_000
    // a spawn listing more models than a chain may hold: refused from its first bytes
    const sent = `{"models": [${models(2_000)},`
    const head = `POST /brain/acme/projects/p1/processes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`
    const { text, closedByServer } = await sendPart(port, head, sent, 5_000)
    expect(text).toMatch(/^HTTP\/1\.1 400 /)
    expect(text.toLowerCase()).toContain('connection: close')
    expect(closedByServer).toBe(true)
    expect(accepted).toHaveLength(1)
    expect(accepted[0].bytesRead).toBeLessThanOrEqual(Buffer.byteLength(head + sent))
  })

  it('keeps the connection when the unread rest is small, and drains it', async () => {
    const { port } = await listen()
    const token = await tokenFor('acme', ALL)
    const body = `{"models": [${models(200)}]}`
    const head = `POST /brain/acme/projects/p1/processes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
    const { text, closedByServer } = await sendPart(port, head, body, 300)
    expect(text).toMatch(/^HTTP\/1\.1 400 /)
    expect(text.toLowerCase()).not.toContain('connection: close')
    expect(closedByServer).toBe(false)
  })
})
