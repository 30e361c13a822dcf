/**
 * functions/http/lambda-streaming.ts under a stand-in for the Lambda runtime's response streaming
 * (scripts/lambda-streaming-runtime.mjs): what reaches the client, and when the work after the
 * response runs.
 */
import { Hono } from 'hono'
import { beforeAll, describe, expect, it } from 'vitest'
import { lambdaRuntime, streamingLambdaHandler } from '../../functions/http/lambda-streaming'
import { rawBody } from '../../functions/http/request'
import { installLambdaRuntime, invokeStreaming } from '../../scripts/lambda-streaming-runtime.mjs'

beforeAll(() => installLambdaRuntime())

function event(method: string, path: string, extra: Record<string, unknown> = {}) {
  return {
    version: '2.0',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'abc.lambda-url.us-east-1.on.aws' },
    requestContext: { domainName: 'abc.lambda-url.us-east-1.on.aws', http: { method, path } },
    isBase64Encoded: false,
    ...extra,
  }
}

const handlerFor = (app: Hono, after: () => Promise<unknown> = async () => {}) => streamingLambdaHandler(app, lambdaRuntime(), after)

describe('the Lambda response-streaming adapter', () => {
  it('sends the status, headers and every cookie in the prelude and the body bytes unchanged', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
    const app = new Hono().get('/bin', (c) => {
      c.header('set-cookie', 'a=1; Path=/', { append: true })
      c.header('set-cookie', 'b=2; Path=/', { append: true })
      c.header('x-kind', 'bytes')
      return c.body(bytes, 201, { 'content-type': 'application/octet-stream' })
    })
    const { response, done } = invokeStreaming(handlerFor(app), event('GET', '/bin'))
    const res = await response
    await done
    expect(res.statusCode).toBe(201)
    expect(res.headers).toMatchObject({ 'x-kind': 'bytes', 'content-type': 'application/octet-stream' })
    expect(res.headers['set-cookie']).toBeUndefined()
    expect(res.cookies).toEqual(['a=1; Path=/', 'b=2; Path=/'])
    expect([...res.body]).toEqual([...bytes])
  })

  it('sends the prelude for an answer without a body', async () => {
    const app = new Hono().delete('/x', (c) => c.body(null, 204))
    const { response } = invokeStreaming(handlerFor(app), event('DELETE', '/x'))
    const res = await response
    expect(res.statusCode).toBe(204)
    expect(res.body.length).toBe(0)
  })

  it('gives the app the query, the cookies, a decoded base64 body and percent-encoded non-ASCII header values', async () => {
    const app = new Hono().post('/echo', async (c) =>
      c.json({ q: c.req.query('q'), cookie: c.req.header('cookie'), body: await c.req.text(), who: c.req.header('x-who'), url: c.req.url }),
    )
    const ev = event('POST', '/echo', {
      rawQueryString: 'q=1',
      cookies: ['s=1', 't=2'],
      headers: { host: 'abc.lambda-url.us-east-1.on.aws', 'x-who': 'Zoë' },
      body: Buffer.from('héllo').toString('base64'),
      isBase64Encoded: true,
    })
    const res = await invokeStreaming(handlerFor(app), ev).response
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({
      q: '1',
      cookie: 's=1; t=2',
      body: 'héllo',
      who: 'Zo%C3%AB',
      url: 'https://abc.lambda-url.us-east-1.on.aws/echo?q=1',
    })
  })

  it('takes the URL host from the Host header, as Headers.get answers it, when the event names no domain', async () => {
    const app = new Hono().get('/where', (c) => c.text(c.req.url))
    const ev = event('GET', '/where', {
      headers: { Host: ' api.example.test\t' },
      requestContext: { http: { method: 'GET', path: '/where' } },
    })
    const res = await invokeStreaming(handlerFor(app), ev).response
    expect(res.body.toString('utf8')).toBe('https://api.example.test/where')
  })

  it('hands a route reading the body the event body as its bytes, the same the Request holds, for text, base64 and empty bodies', async () => {
    const app = new Hono().post('/read', async (c) => {
      const direct = await rawBody(c)
      // read without the Request's body stream, which stays unread for whoever wants it
      const streamUnread = !c.req.raw.bodyUsed
      return c.json({
        direct: [...direct],
        viaRequest: [...new Uint8Array(await c.req.arrayBuffer())],
        own: direct.byteOffset === 0 && direct.buffer.byteLength === direct.byteLength,
        streamUnread,
      })
    })
    const binary = Uint8Array.from([0, 255, 1, 128, 10])
    for (const [body, isBase64Encoded, bytes] of [
      ['{"a":"é€😀"}', false, [...Buffer.from('{"a":"é€😀"}', 'utf8')]],
      [Buffer.from(binary).toString('base64'), true, [...binary]],
      ['', false, []],
    ] as const) {
      const res = await invokeStreaming(handlerFor(app), event('POST', '/read', { body, isBase64Encoded })).response
      expect(JSON.parse(res.body.toString('utf8'))).toEqual({ direct: bytes, viaRequest: bytes, own: true, streamUnread: true })
    }
  })

  it('runs the work after the response once the stream has ended, and ends the invocation only when it is done', async () => {
    const order: string[] = []
    let release!: () => void
    const after = () => {
      order.push('after started')
      return new Promise<void>((resolve) => (release = resolve)).then(() => order.push('after finished'))
    }
    const app = new Hono().get('/x', (c) => c.text('ok'))
    const { response, done } = invokeStreaming(handlerFor(app, after), event('GET', '/x'))
    void done.then(() => order.push('invocation ended'))
    const res = await response
    order.push('response delivered')
    expect(res.body.toString()).toBe('ok')
    await new Promise((r) => setImmediate(r))
    expect(order).toEqual(['response delivered', 'after started'])
    release()
    await done
    expect(order).toEqual(['response delivered', 'after started', 'after finished', 'invocation ended'])
  })

  it('carries a body of many chunks intact through the stream', async () => {
    const chunk = new Uint8Array(64 * 1024).fill(7)
    const app = new Hono().get('/big', () => {
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 80) controller.enqueue(chunk)
          else controller.close()
        },
      })
      return new Response(body, { headers: { 'content-type': 'application/octet-stream' } })
    })
    const res = await invokeStreaming(handlerFor(app), event('GET', '/big')).response
    expect(res.body.length).toBe(80 * chunk.length)
    expect(res.body.every((b) => b === 7)).toBe(true)
  })

  it('fails the invocation, not ends it cleanly, when the body breaks halfway; the work after the response still runs', async () => {
    let afterRan = false
    const app = new Hono().get('/broken', () => {
      let n = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (n++ === 0) controller.enqueue(new TextEncoder().encode('{"partial":'))
          else controller.error(new Error('source went away'))
        },
      })
      return new Response(body)
    })
    const { response, done } = invokeStreaming(
      handlerFor(app, async () => (afterRan = true)),
      event('GET', '/broken'),
    )
    await expect(done).rejects.toThrow('source went away')
    await expect(response).rejects.toThrow('source went away')
    expect(afterRan).toBe(true)
  })
})
