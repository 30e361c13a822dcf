/**
 * The fair-share gate gives a request's place back when its answer is written and its body
 * received (functions/http/fair-share.ts `afterBoth`). A body answered before it arrived (a
 * refusal while it streams) and then cut off by its client is neither ended nor destroyed by Node
 * — the server let go of the request with its answer — so only the socket's close says it is
 * over. Real sockets on 127.0.0.1; counted, not timed: the tenant's requests in flight.
 */
import type { AddressInfo } from 'node:net'
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

/** Waits (polling, bounded) until `cond` holds: a count the server reached, never a duration asserted. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 300 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!cond()) throw new Error(`never: ${what}`)
}

const models = (n: number) => Array.from({ length: n }, (_, i) => `"cortecs/m${i}"`).join(',')

describe('a request answered before its body arrived, then cut off by its client', () => {
  it('gives its tenant’s place in the fair share back when the connection closes', async () => {
    const deps = createMemoryDeps({ fairShare: { busyFloor: 1e-9 } })
    const server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
    servers.push(server)
    await new Promise<void>((r) => server.once('listening', () => r()))
    const port = (server.address() as AddressInfo).port
    const inFlight = () => deps.fairShare?.view().find((v) => v.tenant === 'acme')?.inFlight
    const token = await tokenFor('acme', ALL)

    // a spawn listing more models than a chain may hold, refused from its first chunk; the rest
    // of its declared 60,000 bytes never comes
    const sent = `{"models": [${models(1_500)},`
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    let text = ''
    socket.setEncoding('utf8')
    socket.on('data', (d: string) => (text += d))
    socket.write(
      `POST /brain/acme/projects/p1/processes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n${sent}`,
    )
    await until(() => /\r\n\r\n/.test(text), 'the answer')
    expect(text).toMatch(/^HTTP\/1\.1 400 /)
    // answered, the body still owed: the place is held while the body may yet arrive
    expect(inFlight()).toBe(1)
    socket.destroy()
    await until(() => inFlight() === 0, 'the place given back')
    expect(inFlight()).toBe(0)
  })
})
