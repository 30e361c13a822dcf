/**
 * functions/http/light-fetch.ts against Node's own classes: the same operations on a stand-in and
 * on the real `Headers`, `Response` or `Request` answer the same, and refuse the same inputs.
 * (This file does not install the stand-ins: the globals here are Node's.)
 */
import { describe, expect, it } from 'vitest'
import { LightHeaders, LightRequest, LightResponse } from '../../functions/http/light-fetch'

type Op = ['append' | 'set', string, string] | ['delete', string]

function both(ops: Op[]) {
  const light = new LightHeaders()
  const real = new Headers()
  for (const op of ops)
    for (const h of [light, real] as Headers[])
      if (op[0] === 'delete') h.delete(op[1])
      else h[op[0]](op[1], op[2])
  return { light: light as unknown as Headers, real }
}

const view = (h: Headers, names: string[]) => ({
  entries: [...h],
  keys: [...h.keys()],
  values: [...h.values()],
  forEach: (() => {
    const seen: string[][] = []
    h.forEach((v, k) => seen.push([k, v]))
    return seen
  })(),
  get: names.map((n) => h.get(n)),
  has: names.map((n) => h.has(n)),
  cookies: h.getSetCookie(),
})

describe('the light Headers', () => {
  it('answers get, has, iteration and getSetCookie as Headers does after the same appends, sets and deletes', () => {
    const ops: Op[] = [
      ['append', 'X-B', 'one'],
      ['append', 'x-b', 'two'],
      ['set', 'Content-Type', 'application/json'],
      ['append', 'Set-Cookie', 'a=1; Path=/'],
      ['append', 'set-cookie', 'b=2, c=3'],
      ['append', 'a-first', '  padded\t'],
      ['set', 'x-gone', 'soon'],
      ['delete', 'X-GONE'],
      ['set', 'x-empty', ''],
      ['append', 'x-latin1', 'caf\u00e9'],
    ]
    const { light, real } = both(ops)
    const names = ['x-b', 'X-B', 'content-type', 'set-cookie', 'a-first', 'x-gone', 'x-empty', 'x-latin1', 'missing']
    expect(view(light, names)).toEqual(view(real, names))
  })

  it('refuses with a TypeError every header name and value Headers refuses, and takes every one it takes', () => {
    const names = ['', 'a b', 'x:y', 'caf\u00e9', '(x)', 'ok-Name_1', "!#$%&'*+-.^_`|~"]
    const values = ['a\r\nb', 'a\0b', 'emoji \u{1f600}', 'caf\u00e9', ' trimmed ', 'a\tb', '']
    const refusal = (f: () => unknown) => {
      try {
        f()
        return 'taken'
      } catch (e) {
        return (e as Error).constructor.name
      }
    }
    for (const name of names)
      expect(
        refusal(() => new LightHeaders().append(name, 'v')),
        name,
      ).toBe(refusal(() => new Headers().append(name, 'v')))
    for (const value of values) {
      let real: string | null | 'refused'
      try {
        const h = new Headers()
        h.set('x', value)
        real = h.get('x')
      } catch (e) {
        expect(e).toBeInstanceOf(TypeError)
        real = 'refused'
      }
      if (real === 'refused') expect(() => new LightHeaders().set('x', value), JSON.stringify(value)).toThrow(TypeError)
      else expect(new LightHeaders([['x', value]]).get('x')).toBe(real)
    }
  })

  it('builds from a record, a list of pairs and the other class alike, both ways', () => {
    const record = { 'Content-Type': 'text/plain', 'X-A': '1' }
    const pairs: [string, string][] = [
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['x-a', '1'],
      ['X-A', '2'],
    ]
    for (const init of [record, pairs]) expect([...new LightHeaders(init)]).toEqual([...new Headers(init)])
    const real = new Headers(pairs)
    expect([...new LightHeaders(real)]).toEqual([...real])
    const light = new LightHeaders(pairs)
    expect([...new Headers(light as unknown as Headers)]).toEqual([...real])
    expect(() => new LightHeaders([['only-name']] as unknown as [string, string][])).toThrow(TypeError)
  })
})

const bodies: [string, ConstructorParameters<typeof Response>[0], ResponseInit | undefined][] = [
  ['text', '{"a":1}', { status: 201, headers: { 'content-type': 'application/json' } }],
  ['text without a content type', 'héllo', undefined],
  ['bytes', Uint8Array.from([0, 1, 2, 255]), { headers: [['x-kind', 'bytes']] }],
  ['an ArrayBuffer', Uint8Array.from([9, 8]).buffer, { statusText: 'Fine' }],
  ['no body', null, { status: 204 }],
  ['an undefined body', undefined, { status: 404, statusText: 'Not Found' }],
  ['a fractional status', 'x', { status: 201.7 }],
]

async function responseView(r: Response) {
  return {
    status: r.status,
    statusText: r.statusText,
    ok: r.ok,
    type: r.type,
    url: r.url,
    redirected: r.redirected,
    headers: [...r.headers],
    bodyIsNull: r.body === null,
    bytes: [...new Uint8Array(await r.clone().arrayBuffer())],
    text: await r.text(),
    bodyUsed: r.bodyUsed,
  }
}

describe('the light Response', () => {
  it('answers status, headers and the body as Response does, for text, bytes and empty bodies', async () => {
    for (const [what, body, init] of bodies) {
      const light = new LightResponse(body, init) as unknown as Response
      expect(await responseView(light), what).toEqual(await responseView(new Response(body, init)))
    }
  })

  it('reads its body once, by any reader, as Response does', async () => {
    const light = new LightResponse('{"a":[1]}') as unknown as Response
    expect(await light.json()).toEqual({ a: [1] })
    expect(light.bodyUsed).toBe(true)
    await expect(light.text()).rejects.toThrow(TypeError)
    expect(() => light.clone()).toThrow(TypeError)
    const bytes = new LightResponse(Uint8Array.from([104, 105])) as unknown as Response
    expect(await (await bytes.blob()).text()).toBe('hi')
    await expect(bytes.arrayBuffer()).rejects.toThrow(TypeError)
  })

  it('hands its body out as a stream, through a real Response made from it', async () => {
    const light = new LightResponse('streamed', { headers: { 'x-a': '1' } }) as unknown as Response
    const reader = (light.body as ReadableStream<Uint8Array>).getReader()
    const chunks: number[] = []
    for (let c = await reader.read(); !c.done; c = await reader.read()) chunks.push(...c.value)
    expect(Buffer.from(chunks).toString()).toBe('streamed')
    expect(light.bodyUsed).toBe(true)
    expect(light.headers.get('x-a')).toBe('1')
  })

  it('is the real Response for a body it does not keep (a stream), and instanceof holds for both kinds', async () => {
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('from a stream'))
        c.close()
      },
    })
    const light = new LightResponse(stream, { status: 202, headers: { 'x-b': '2' } }) as unknown as Response
    expect(LightResponse.wholeBody(light)).toBeUndefined()
    expect([light.status, light.headers.get('x-b'), await light.text()]).toEqual([202, '2', 'from a stream'])
    expect(light).toBeInstanceOf(LightResponse)
    expect(new Response('real')).toBeInstanceOf(LightResponse)
    expect({ status: 200 }).not.toBeInstanceOf(LightResponse)
    expect(new LightHeaders()).toBeInstanceOf(LightHeaders)
    expect(new Headers()).toBeInstanceOf(LightHeaders)
  })

  it('refuses what Response refuses: a status outside 200–599, a body with a null-body status', () => {
    for (const [body, init] of [
      ['x', { status: 199 }],
      ['x', { status: 600 }],
      ['x', { status: 204 }],
      ['x', { status: 304 }],
      [null, { status: 100 }],
    ] as [string | null, ResponseInit][]) {
      const real = (() => {
        try {
          new Response(body, init)
        } catch (e) {
          return (e as Error).constructor
        }
      })()
      expect(real, JSON.stringify(init)).toBeDefined()
      expect(() => new LightResponse(body, init), JSON.stringify(init)).toThrow(real as ErrorConstructor)
    }
  })

  it('makes Response.json, a copy from another response (init) and a clone as Response does', async () => {
    const data = { a: 'b', n: [1, 2] }
    const init = { status: 422, headers: { 'x-c': '3' } }
    expect(await responseView(LightResponse.json(data, init) as unknown as Response)).toEqual(await responseView(Response.json(data, init)))
    const source = new LightResponse('body', { status: 418, statusText: 'Teapot', headers: { 'x-d': '4' } })
    const copied = new LightResponse(null, source) as unknown as Response
    const real = new Response(null, new Response('body', { status: 418, statusText: 'Teapot', headers: { 'x-d': '4' } }))
    expect(await responseView(copied)).toEqual(await responseView(real))
    const clone = (source as unknown as Response).clone()
    expect(await responseView(clone)).toEqual(await responseView(source as unknown as Response))
  })

  it('gives the edge its bytes once, and nothing for a response whose body was read', async () => {
    const light = new LightResponse('abc')
    expect(LightResponse.wholeBody(light)?.bytes).toEqual(new TextEncoder().encode('abc'))
    expect(LightResponse.wholeBody(light)).toBeUndefined()
    expect(LightResponse.wholeBody(new LightResponse(null))).toEqual({ bytes: null })
    expect(LightResponse.wholeBody(new Response('x'))).toBeUndefined()
  })
})

describe('the light Request', () => {
  const headers = () =>
    new LightHeaders([
      ['content-type', 'application/json'],
      ['x-e', '5'],
    ])
  const body = () => new TextEncoder().encode('{"p":1}')

  it('answers URL, method, headers and its body as Request does', async () => {
    const url = 'https://h.example/a/../b?q=1#frag'
    const light = new LightRequest(url, 'POST', headers(), body()) as unknown as Request
    const real = new Request(url, { method: 'POST', headers: headers() as unknown as Headers, body: body() })
    expect([light.url, light.method, [...light.headers], light.bodyUsed]).toEqual([real.url, real.method, [...real.headers], real.bodyUsed])
    expect(await light.json()).toEqual(await real.json())
    expect(light.bodyUsed).toBe(true)
    await expect(light.text()).rejects.toThrow(TypeError)
    expect(light.signal.aborted).toBe(false)
  })

  it('refuses the URLs the Request constructor refuses (unparsable, with credentials), with a TypeError', () => {
    expect(() => new LightRequest('https://exa mple.test/x', 'GET', new LightHeaders(), undefined)).toThrow(TypeError)
    expect(() => new Request('https://exa mple.test/x')).toThrow(TypeError)
    expect(() => new LightRequest('https://user:pw@example.test/x', 'GET', new LightHeaders(), undefined)).toThrow(TypeError)
    expect(() => new Request('https://user:pw@example.test/x')).toThrow(TypeError)
  })

  it('becomes a real Request for a stream, a clone or the fetch options, with the same method, URL, headers and body', async () => {
    const light = new LightRequest('https://h.example/x', 'PUT', headers(), body()) as unknown as Request
    const clone = light.clone()
    expect(clone).toBeInstanceOf(Request)
    expect([clone.method, clone.url, [...clone.headers], await clone.text()]).toEqual([
      'PUT',
      'https://h.example/x',
      [...headers()],
      '{"p":1}',
    ])
    expect(light.mode).toBe(new Request('https://h.example/x').mode)
    expect(new Response(light.body).text()).resolves.toBe('{"p":1}')
    const empty = new LightRequest('https://h.example/x', 'GET', new LightHeaders(), undefined) as unknown as Request
    expect(empty.body).toBeNull()
    expect(await empty.text()).toBe('')
  })
})
