/**
 * The Lambda edge with the light Headers and Response installed (functions/http/light-fetch.ts, as
 * functions/api.ts installs them) answers every kind of route as it does with Node's own classes:
 * the same routes are invoked first with Node's globals, then with the stand-ins, in one process.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Hono } from 'hono'
import { streamSSE } from 'hono/streaming'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lambdaRuntime, streamingLambdaHandler } from '../../functions/http/lambda-streaming'
import { installLightFetch, LightHeaders, LightResponse } from '../../functions/http/light-fetch'
import { installLambdaRuntime, invokeStreaming } from '../../scripts/lambda-streaming-runtime.mjs'

let upstream: Server
let upstreamUrl = ''

beforeAll(async () => {
  installLambdaRuntime()
  upstream = createServer((req, res) => {
    res.setHeader('set-cookie', ['u=1', 'v=2'])
    res.setHeader('content-type', 'text/plain')
    res.end(`upstream saw ${req.method} ${req.url}`)
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())))

function app() {
  return (
    new Hono()
      // a middleware that sets a header before and another after the route (the finalized response)
      .use(async (c, next) => {
        c.header('x-before', 'b')
        await next()
        c.res.headers.set('x-after', 'a')
      })
      .get('/json', (c) => c.json({ ok: true, n: [1, 2] }, 201))
      .get('/text', (c) => c.text('plain text'))
      .get('/bytes', (c) => c.body(Uint8Array.from([0, 1, 254, 255]), 200, { 'content-type': 'application/octet-stream' }))
      .get('/redirect', (c) => c.redirect('/json', 303))
      .get('/cookies', (c) => {
        c.header('set-cookie', 'a=1', { append: true })
        c.header('set-cookie', 'b=2', { append: true })
        return c.body(null, 204)
      })
      .get('/sse', (c) =>
        streamSSE(c, async (s) => {
          await s.writeSSE({ data: 'one', event: 'message' })
          await s.writeSSE({ data: 'two', event: 'message' })
        }),
      )
      .get('/stream', () => {
        const body = new ReadableStream({
          start(ctl) {
            ctl.enqueue(new TextEncoder().encode('chunk one, '))
            ctl.enqueue(new TextEncoder().encode('chunk two'))
            ctl.close()
          },
        })
        return new Response(body, { status: 202, headers: { 'x-stream': 'yes' } })
      })
      .get('/upstream', async () => {
        const res = await fetch(`${upstreamUrl}/from-lambda`)
        // a real Response from fetch passes the checks written against the global
        if (!(res instanceof Response)) throw new Error('fetch result is not a Response')
        return new Response(await res.text(), {
          status: res.status,
          headers: { 'x-upstream-cookies': res.headers.getSetCookie().join(' | ') },
        })
      })
      .post('/json-body', async (c) => c.json({ got: await c.req.json(), type: c.req.header('content-type') }))
      .post('/form', async (c) => c.json(await c.req.parseBody()))
      .post('/echo-raw', async (c) => c.text(`${c.req.method} ${new URL(c.req.url).pathname} ${await c.req.raw.clone().text()}`))
      .get('/headers', (c) => c.json({ all: c.req.header(), one: c.req.header('X-One') }))
      .onError((_e, c) => c.text('failed', 500))
      .get('/error', () => {
        throw new Error('boom')
      })
  )
}

const requests: [string, string, Record<string, unknown>?][] = [
  ['GET', '/json'],
  ['HEAD', '/json'],
  ['GET', '/text'],
  ['GET', '/bytes'],
  ['GET', '/redirect'],
  ['GET', '/cookies'],
  ['GET', '/sse'],
  ['GET', '/stream'],
  ['GET', '/upstream'],
  ['GET', '/missing'],
  ['GET', '/error'],
  ['GET', '/headers', { headers: { host: 'h.test', 'x-one': ' 1 ', 'X-Two': '2' } }],
  ['POST', '/json-body', { body: '{"a":"é"}', headers: { host: 'h.test', 'content-type': 'application/json' } }],
  ['POST', '/form', { body: 'a=1&b=two+words', headers: { host: 'h.test', 'content-type': 'application/x-www-form-urlencoded' } }],
  ['POST', '/echo-raw', { body: Buffer.from('raw bytes').toString('base64'), isBase64Encoded: true }],
  ['GET', '/bad header', { headers: { host: 'h.test', 'bad name': 'x' } }],
]

async function answers() {
  const handler = streamingLambdaHandler(app(), lambdaRuntime(), async () => {})
  const out = []
  for (const [method, path, extra] of requests) {
    const event = {
      version: '2.0',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'h.test' },
      requestContext: { domainName: 'h.test', http: { method, path } },
      isBase64Encoded: false,
      ...extra,
    }
    const { response, done } = invokeStreaming(handler, event)
    const res = await response
    await done
    // an SSE body's chunks may be cut differently; its text is what a client reads
    out.push({
      request: `${method} ${path}`,
      status: res.statusCode,
      headers: res.headers,
      cookies: res.cookies,
      body: res.body.toString('latin1'),
    })
  }
  return out
}

describe('the Lambda edge with the light Headers and Response', () => {
  it("answers JSON, text, bytes, HEAD, redirects, cookies, SSE, stream bodies, fetch, bodies read every way, 404, 500 and a bad header as with Node's classes", async () => {
    const withNode = await answers()
    installLightFetch()
    expect(globalThis.Response).toBe(LightResponse)
    expect(globalThis.Headers).toBe(LightHeaders)
    const withStandIns = await answers()
    expect(withStandIns).toEqual(withNode)
    // and they are the answers meant, not two identical failures
    expect(withNode.map((a) => `${a.request} ${a.status}`)).toEqual([
      'GET /json 201',
      'HEAD /json 201',
      'GET /text 200',
      'GET /bytes 200',
      'GET /redirect 303',
      'GET /cookies 204',
      'GET /sse 200',
      'GET /stream 202',
      'GET /upstream 200',
      'GET /missing 404',
      'GET /error 500',
      'GET /headers 200',
      'POST /json-body 200',
      'POST /form 200',
      'POST /echo-raw 200',
      'GET /bad header 400',
    ])
    expect(withStandIns.find((a) => a.request === 'GET /upstream')?.body).toBe('upstream saw GET /from-lambda')
  })
})
