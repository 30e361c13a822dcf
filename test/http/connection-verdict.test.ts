/**
 * A kept-alive connection remembers the verdict on its last Authorization header
 * (functions/http/auth.ts), so an agent backend's calls skip the token digest and parse. What
 * the memo must never do: vouch for another header, or outlive the verdict's expiry. Real
 * sockets on 127.0.0.1, one connection per test (`reusedSocket` proves the requests shared it).
 */
import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { signHs256 } from '../../functions/http/hs256'
import { ALL, TEST_SECRET, tokenFor } from '../support/http'

const servers: ReturnType<typeof serve>[] = []
const agents: Agent[] = []
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy()
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))))
})

async function oneConnection() {
  const server = serve({ fetch: createApp(createMemoryDeps()).fetch, port: 0, hostname: '127.0.0.1' })
  servers.push(server)
  await new Promise<void>((r) => server.once('listening', () => r()))
  const port = (server.address() as AddressInfo).port
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  agents.push(agent)
  return (authorization: string) =>
    new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/brain/acme/projects/p1/server-tools', headers: { authorization }, agent },
        (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }))
        },
      )
      req.on('error', reject)
      req.end()
    })
}

describe('the verdict a kept-alive connection remembers', () => {
  it('verifies a different Authorization header on the same connection again', async () => {
    const get = await oneConnection()
    const good = await tokenFor('acme', ALL)
    const [header, payload] = good.split('.')
    const forged = `${header}.${payload}.${'A'.repeat(43)}`
    expect(await get(`Bearer ${good}`)).toEqual({ status: 200, reused: false })
    expect(await get(`Bearer ${forged}`)).toEqual({ status: 401, reused: true })
    // another tenant's genuine token: its own verdict, not the first one's
    expect(await get(`Bearer ${await tokenFor('other', ALL)}`)).toEqual({ status: 403, reused: true })
    expect(await get(`Bearer ${good}`)).toEqual({ status: 200, reused: true })
  })

  it('refuses the same header on the same connection once its token has expired', async () => {
    const get = await oneConnection()
    const now = Math.floor(Date.now() / 1000)
    const token = signHs256({ tenant: 'acme', sub: 'alice', scope: ALL, iat: now, exp: now + 1 }, TEST_SECRET)
    expect(await get(`Bearer ${token}`)).toEqual({ status: 200, reused: false })
    // past `exp` (whole seconds): the remembered verdict has ended with it
    await new Promise((r) => setTimeout(r, (now + 1) * 1000 - Date.now() + 50))
    expect(await get(`Bearer ${token}`)).toEqual({ status: 401, reused: true })
  })
})
