/** Bodies over real HTTP on @hono/node-server (what `npm start` runs): read directly, capped while read. */

import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ALL, tokenFor } from '../support/http'

let server: ReturnType<typeof serve>
let port: number
let token: string

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  server = serve({ fetch: createApp(createMemoryDeps()).fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

function send(path: string, chunks: string[], headers: Record<string, string | number> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/yaml', ...headers },
      },
      (res) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
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
})
