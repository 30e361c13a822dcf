/**
 * The manifest route answers with its memoised body's UTF-8 bytes (not a string): both transports
 * must carry them as the same JSON text — @hono/node-server (what `npm start` runs) with a byte
 * content-length, and the Lambda response-streaming adapter (functions/http/lambda-streaming.ts) as
 * the same bytes. A non-ASCII description tells bytes from characters.
 */

import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { lambdaRuntime, streamingLambdaHandler } from '../../functions/http/lambda-streaming'
import { installLambdaRuntime } from '../../scripts/lambda-streaming-runtime.mjs'
import { bufferedInvoker, type LambdaResult, lambdaFetch } from '../support/aws'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const DESCRIPTION = 'Température et météo — ☀ par ville'

let app: ReturnType<typeof createApp>
let token: string
let path: string
let expected: string
let server: ReturnType<typeof serve>
let port: number

beforeAll(async () => {
  app = createApp(createMemoryDeps())
  token = await tokenFor('acme')
  const api = client(app, token)
  const put = await api.put(
    `${base}/server-tools/weather`,
    `type: doc_lookup\ndescription: ${DESCRIPTION}\nprimary: true\nparameters:\n  path: documents/getting-started.md\n`,
  )
  expect(put.status).toBe(201)
  const spawned = await api.post(`${base}/processes`, {})
  expect(spawned.status).toBe(201)
  path = `${base}/processes/${(await spawned.json()).id}/manifest?format=openai`
  expected = await (await api.get(path)).text()
  expect(expected).toContain(DESCRIPTION)
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('the manifest over each transport', () => {
  it('arrives over the node server as the same JSON text, its content-length counting bytes', async () => {
    for (let i = 0; i < 2; i++) {
      // the second answer is the memoised body
      const res = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` } }, (r) => {
          const chunks: Buffer[] = []
          r.on('data', (d: Buffer) => chunks.push(d))
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(chunks) }))
        })
        req.on('error', reject)
        req.end()
      })
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(expected))
      expect(res.body.toString('utf8')).toBe(expected)
    }
  })

  it('arrives through the Lambda streaming adapter as the same JSON text, its bytes unencoded', async () => {
    installLambdaRuntime()
    const h = bufferedInvoker(streamingLambdaHandler(app, lambdaRuntime(), async () => {}))
    const results: LambdaResult[] = []
    const fetchLambda = lambdaFetch([
      async (event, context) => {
        const result = await h(event, context)
        results.push(result)
        return result
      },
    ])
    for (let i = 0; i < 2; i++) {
      const res = await fetchLambda(`https://abc123.lambda-url.us-east-1.on.aws${path}`, { headers: { authorization: `Bearer ${token}` } })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(await res.text()).toBe(expected)
    }
    expect(results.map((r) => r.body === expected)).toEqual([true, true])
  })
})
