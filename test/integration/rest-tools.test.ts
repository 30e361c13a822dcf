/**
 * `rest` tools against a real HTTP server this file starts on 127.0.0.1, through the real egress
 * client (NodeConnector). Only 127.0.0.1 is allow-listed. Name resolution is an injected table
 * (localhost → loopback) and the connector is wrapped in a guard of its own that refuses any
 * address outside 127.0.0.0/8 and ::1, so no test can leave the machine even if the egress
 * guard were broken.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ToolOutcome } from '../../lib/calls/outcome'
import type { ServerToolConfig } from '../../lib/config/server-tool'
import { classifyAddress } from '../../lib/egress/address'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { type Connector, NodeConnector } from '../../lib/egress/connector'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemorySecretStore } from '../../lib/secrets/memory'
import type { FactoryEnv, InvocationContext } from '../../lib/tools/contracts'
import { type RestParameters, RestToolFactory } from '../../lib/tools/types/rest'

// ───────────── the server ─────────────

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}
const seen: Seen[] = []
const lastSeen = () => seen[seen.length - 1]

function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8')
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    const url = new URL(req.url!, 'http://127.0.0.1')
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers })
      res.end(JSON.stringify(value))
    }
    const path = url.pathname
    if (path === '/echo' || path.startsWith('/echo/')) {
      return json(200, {
        method: req.method,
        url: req.url,
        path,
        query: [...url.searchParams],
        headers: req.headers,
        body: body ? JSON.parse(body) : null,
      })
    }
    if (path === '/raw-echo') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end(
        `${req.method} ${req.url}\n${Object.entries(req.headers)
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n')}\n\n${body}`,
      )
    }
    if (path === '/text') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      return res.end('plain words')
    }
    if (path === '/no-content') {
      res.writeHead(204)
      return res.end()
    }
    if (path === '/binary') {
      res.writeHead(200, { 'content-type': 'image/png' })
      return res.end(Buffer.alloc(64, 1))
    }
    if (path === '/bad-json') {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end('{"unterminated": ')
    }
    if (path.startsWith('/status/')) {
      const code = Number(path.split('/')[2])
      res.writeHead(code, { 'content-type': 'text/plain' })
      return res.end(url.searchParams.get('body') ?? 'x'.repeat(5000))
    }
    if (path === '/slow') {
      setTimeout(() => json(200, { late: true }), 2000).unref()
      return
    }
    if (path === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end('b'.repeat(50_000))
    }
    if (path === '/user') return json(200, { id: 'not-a-number', name: 'Ada', tags: ['x', 7] })
    if (path === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to')! })
      return res.end()
    }
    if (path.startsWith('/redirect/')) {
      res.writeHead(Number(path.split('/')[2]), { location: url.searchParams.get('to')! })
      return res.end()
    }
    if (path === '/reflect') {
      // a careless server echoing a credential the ways real ones do: other case, hex, inside base64, strictly URL-encoded
      const token = String(req.headers['x-token'] ?? '')
      const strict = encodeURIComponent(token).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      res.writeHead(200, { 'content-type': 'text/plain' })
      return res.end(
        [token.toUpperCase(), Buffer.from(token).toString('hex'), Buffer.from(`id=7;${token};`).toString('base64'), strict].join('\n'),
      )
    }
    json(404, { error: 'no route' })
  })
}

let server: http.Server
let base: string
let port: number

/** A second origin (another port): what a redirect to "somewhere else" reaches. */
let other: http.Server
let otherBase: string
const otherSeen: Seen[] = []
function otherHandler(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    otherSeen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ other: true, method: req.method }))
  })
}
const nodeConnector = new NodeConnector()

/** Refuses to connect anywhere but loopback, whatever the guard decided. */
const loopbackOnly: Connector = {
  send(req) {
    const c = classifyAddress(req.address)
    if (c?.class !== 'loopback') throw new Error(`test safety net: refusing to connect to ${req.address}`)
    return nodeConnector.send(req)
  },
}
const connectAttempts: string[] = []
const recordingLoopback: Connector = {
  send(req) {
    connectAttempts.push(`${req.address}:${req.port}`)
    return loopbackOnly.send(req)
  },
}

const egress = new EgressClient({
  allow: AllowList.of({ hosts: ['127.0.0.1'] }),
  resolver: {
    resolve: async (h) =>
      h === 'localhost'
        ? [
            { address: '127.0.0.1', family: 4 },
            { address: '::1', family: 6 },
          ]
        : Promise.reject(new Error('no DNS in tests')),
  },
  connector: recordingLoopback,
})
const secrets = new MemorySecretStore()
const factory = new RestToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
const log = new MemoryLogger()

beforeAll(async () => {
  server = http.createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
  await secrets.put('acme', 'API_TOKEN', 'tok-SECRET-1234')
  await secrets.put('acme', 'API_KEY', 'key/with spaces&=')
  await secrets.put('acme', 'QUOTED', "it's a s3cret (really)")
  other = http.createServer(otherHandler)
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
})

afterAll(async () => {
  nodeConnector.close()
  for (const s of [server, other]) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

// ───────────── helpers ─────────────

const env: FactoryEnv = {
  tenant: 'acme',
  project: 'p1',
  documents: { read: async () => undefined },
  log,
  clock: new ManualClock(),
  problem: () => {},
}
const ctx = { tenant: 'acme', project: 'p1', subject: 'tester', depth: 0, tools: {} } as unknown as InvocationContext

function config(parameters: RestParameters, name = 'rest_tool'): ServerToolConfig<RestParameters> {
  return {
    name,
    type: 'rest',
    description: 'test',
    enabled: true,
    primary: false,
    labels: [],
    disabledSubTools: [],
    defaultDeferred: false,
    parameters,
  }
}

async function call(parameters: RestParameters, args: Record<string, unknown> = {}): Promise<ToolOutcome & { content: any }> {
  expect(factory.check(parameters)).toEqual([])
  const [spec] = await factory.create(config(parameters), env)
  return (await spec.invoke(args, ctx)) as ToolOutcome & { content: any }
}

// ───────────── tests ─────────────

describe('rest tool templating', () => {
  it('URL-encodes path placeholders and leaves literal text alone', async () => {
    const out = await call(
      {
        url: `${base}/echo/{id}/items/{name}`,
        inputs: [
          { name: 'id', type: 'string' },
          { name: 'name', type: 'string' },
        ],
      },
      { id: 'a/b?c#d', name: 'ä ö & x' },
    )
    expect(out.isError).toBe(false)
    expect(out.content.status).toBe(200)
    expect(lastSeen().url).toBe('/echo/a%2Fb%3Fc%23d/items/%C3%A4%20%C3%B6%20%26%20x')
  })

  it('builds query parameters, repeats arrays and leaves out missing optional inputs', async () => {
    const out = await call(
      {
        url: `${base}/echo?fixed=1`,
        query: { q: '{q}', tag: '{tags}', limit: '{limit}', label: 'pre-{q}', absent: '{maybe}' },
        inputs: [
          { name: 'q', type: 'string' },
          { name: 'tags', type: 'array' },
          { name: 'limit', type: 'integer' },
          { name: 'maybe', type: 'string', required: false },
        ],
      },
      { q: 'a b&c=d', tags: ['x', 'y z'], limit: 5 },
    )
    expect(out.content.body.query).toEqual([
      ['fixed', '1'],
      ['q', 'a b&c=d'],
      ['tag', 'x'],
      ['tag', 'y z'],
      ['limit', '5'],
      ['label', 'pre-a b&c=d'],
    ])
  })

  it('substitutes typed values into the body: numbers, booleans, objects and arrays stay typed', async () => {
    const out = await call(
      {
        url: `${base}/echo`,
        method: 'POST',
        bodyTemplate: {
          name: '{name}',
          age: '{age}',
          admin: '{admin}',
          profile: '{profile}',
          tags: ['{first}', 'fixed'],
          greeting: 'Hello {name}, you are {age}',
          optional: '{opt}',
          literal: '{{name}}',
        },
        inputs: [
          { name: 'name', type: 'string' },
          { name: 'age', type: 'integer' },
          { name: 'admin', type: 'boolean' },
          { name: 'profile', type: 'object' },
          { name: 'first', type: 'string' },
          { name: 'opt', type: 'string', required: false },
        ],
      },
      { name: 'Ada "the" Countess\n', age: 36, admin: false, profile: { langs: ['en', 'fr'], n: null }, first: '"},{"evil":true' },
    )
    expect(out.isError).toBe(false)
    expect(lastSeen().headers['content-type']).toBe('application/json')
    expect(JSON.parse(lastSeen().body)).toEqual({
      name: 'Ada "the" Countess\n',
      age: 36,
      admin: false,
      profile: { langs: ['en', 'fr'], n: null },
      tags: ['"},{"evil":true', 'fixed'],
      greeting: 'Hello Ada "the" Countess\n, you are 36',
      literal: '{name}',
    })
  })

  it('accepts a bodyTemplate written as JSON text and still substitutes by type', async () => {
    await call(
      {
        url: `${base}/echo`,
        method: 'PUT',
        bodyTemplate: '{"count": "{n}", "items": "{items}"}',
        inputs: [
          { name: 'n', type: 'number' },
          { name: 'items', type: 'array' },
        ],
      },
      { n: 2.5, items: [1, { a: 2 }] },
    )
    expect(JSON.parse(lastSeen().body)).toEqual({ count: 2.5, items: [1, { a: 2 }] })
  })

  it('sends a text body as it is when the content type is not JSON', async () => {
    await call(
      {
        url: `${base}/raw-echo`,
        method: 'POST',
        headers: { 'Content-Type': 'text/plain' },
        bodyTemplate: 'Dear {name},\n{{braces}}',
        inputs: [{ name: 'name', type: 'string' }],
      },
      { name: 'Ada' },
    )
    expect(lastSeen().body).toBe('Dear Ada,\n{braces}')
  })

  it('renders header templates and drops a header whose only input is missing', async () => {
    await call(
      {
        url: `${base}/echo`,
        headers: { 'X-Trace': 'trace-{id}', 'X-Opt': '{opt}' },
        inputs: [
          { name: 'id', type: 'integer' },
          { name: 'opt', type: 'string', required: false },
        ],
      },
      { id: 42 },
    )
    expect(lastSeen().headers['x-trace']).toBe('trace-42')
    expect(lastSeen().headers['x-opt']).toBeUndefined()
  })

  it('refuses a header value with a line break without calling', async () => {
    const before = seen.length
    const out = await call(
      { url: `${base}/echo`, headers: { 'X-Name': '{name}' }, inputs: [{ name: 'name', type: 'string' }] },
      { name: 'a\r\nX-Injected: 1' },
    )
    expect(out.isError).toBe(true)
    expect(out.content.message).toContain('line break')
    expect(seen.length).toBe(before)
  })

  it('rejects arguments that do not match the inputs', async () => {
    const out = await call({ url: `${base}/echo/{id}`, inputs: [{ name: 'id', type: 'integer' }] }, { id: 'seven' })
    expect(out.isError).toBe(true)
    expect(out.content.errors[0]).toMatchObject({ pointer: '/id' })
  })

  it('labels GET tools read-only and POST tools as writes with side effects', async () => {
    const [get] = await factory.create(config({ url: `${base}/echo` }), env)
    const [post] = await factory.create(config({ url: `${base}/echo`, method: 'POST' }), env)
    expect(get.extraLabels).toEqual(['rest', 'read-only'])
    expect(post.extraLabels).toEqual(['rest', 'write', 'side-effect'])
    expect(get.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false })
  })
})

describe('rest tool responses', () => {
  it('returns JSON as a value and text as a string', async () => {
    const json = await call({ url: `${base}/echo` })
    expect(json.content.body.method).toBe('GET')
    const text = await call({ url: `${base}/text` })
    expect(text.content).toEqual({ status: 200, body: 'plain words' })
  })

  it('returns null for an empty body and a note for binary content', async () => {
    expect((await call({ url: `${base}/no-content`, method: 'DELETE' })).content).toEqual({ status: 204, body: null })
    expect((await call({ url: `${base}/binary` })).content.body).toBe('[64 bytes of image/png not shown]')
  })

  it('turns a non-2xx answer into a tool error with the status and a trimmed body', async () => {
    const out = await call({ url: `${base}/status/503` })
    expect(out.isError).toBe(true)
    expect(out.content.message).toBe(`GET ${base}/status/503 answered 503 Service Unavailable.`)
    expect(out.content.status).toBe(503)
    expect(out.content.body.length).toBeLessThan(2100)
    expect(out.content.body).toMatch(/… \(3000 more characters\)$/)
    const notFound = await call({ url: `${base}/status/404?body=gone` })
    expect(notFound.content).toMatchObject({ status: 404, body: 'gone' })
  })

  it('reports JSON that does not parse', async () => {
    const out = await call({ url: `${base}/bad-json` })
    expect(out.isError).toBe(true)
    expect(out.content.message).toContain('not valid JSON')
  })

  it('names the pointer when the response does not match responseSchema', async () => {
    const out = await call({
      url: `${base}/user`,
      responseSchema: {
        type: 'object',
        required: ['id', 'email'],
        properties: { id: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
      },
    })
    expect(out.isError).toBe(true)
    expect(out.content.message).toContain('/id: id must be an integer, got string')
    expect(out.content.message).toContain('/email: email is required')
    expect(out.content.message).toContain('/tags/1: tags[1] must be a string, got number')
    expect(out.content.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/email', '/id', '/tags/1'])
  })

  it('passes a response that matches responseSchema, whatever dialect the schema declares', async () => {
    const out = await call({
      url: `${base}/user`,
      responseSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'https://example.test/user',
        type: 'object',
        required: ['name'],
      },
    })
    expect(out).toEqual({ isError: false, content: { status: 200, body: { id: 'not-a-number', name: 'Ada', tags: ['x', 7] } } })
  })

  it('times out a slow server', async () => {
    const out = await call({ url: `${base}/slow`, timeoutMs: 100 })
    expect(out.isError).toBe(true)
    expect(out.content).toMatchObject({ reason: 'timeout', timeoutMs: 100 })
    expect(out.content.message).toContain('did not answer within 100 ms')
  })

  it('stops reading a response larger than maxResponseBytes', async () => {
    const out = await call({ url: `${base}/big`, maxResponseBytes: 10_000 })
    expect(out.isError).toBe(true)
    expect(out.content).toMatchObject({ reason: 'too-large', maxBytes: 10_000 })
  })

  it('reports a refused connection', async () => {
    const spare = http.createServer()
    await new Promise<void>((r) => spare.listen(0, '127.0.0.1', r))
    const closedPort = (spare.address() as AddressInfo).port
    await new Promise((r) => spare.close(r))
    const out = await call({ url: `http://127.0.0.1:${closedPort}/x` })
    expect(out.isError).toBe(true)
    expect(out.content).toMatchObject({ reason: 'network' })
    expect(out.content.message).toContain('ECONNREFUSED')
  })
})

describe('rest tool egress', () => {
  it('refuses 127.0.0.2, which is loopback but not allow-listed, without connecting', async () => {
    connectAttempts.length = 0
    const out = await call({ url: `http://127.0.0.2:${port}/echo` })
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    expect(out.content.message).toContain('not allowed')
    expect(connectAttempts).toEqual([])
  })

  it('refuses localhost even though it resolves to the allowed address', async () => {
    connectAttempts.length = 0
    const out = await call({ url: `http://localhost:${port}/echo` })
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    expect(connectAttempts).toEqual([])
  })

  it('refuses a redirect from the allowed server to 127.0.0.2', async () => {
    connectAttempts.length = 0
    const before = seen.length
    const out = await call({ url: `${base}/redirect?to=${encodeURIComponent(`http://127.0.0.2:${port}/echo`)}` })
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    expect(connectAttempts).toEqual([`127.0.0.1:${port}`])
    expect(seen.length).toBe(before + 1)
  })

  it('follows a redirect that stays on the allowed server', async () => {
    const out = await call({ url: `${base}/redirect?to=/echo/after` })
    expect(out.content.body.path).toBe('/echo/after')
  })

  it('guards hosts chosen by the model through a placeholder in the URL', async () => {
    connectAttempts.length = 0
    const params: RestParameters = { url: `http://{host}:${port}/echo`, inputs: [{ name: 'host', type: 'string' }] }
    for (const host of ['127.0.0.2', 'localhost', '169.254.169.254', '2130706434']) {
      const out = await call(params, { host })
      expect(out.isError, host).toBe(true)
      expect(out.content.reason, host).toBe('denied')
    }
    expect(connectAttempts).toEqual([])
    expect((await call(params, { host: '127.0.0.1' })).isError).toBe(false)
  })
})

describe('rest tool secrets', () => {
  it('substitutes secrets into url, query, headers and body and scrubs every echo of them from the result', async () => {
    const out = await call(
      {
        url: `${base}/echo/\${secret:API_KEY}`,
        method: 'POST',
        query: { key: '${secret:API_KEY}' },
        headers: { Authorization: 'Bearer ${secret:API_TOKEN}' },
        bodyTemplate: { token: '${secret:API_TOKEN}', text: 'token=${secret:API_TOKEN}' },
      },
      {},
    )
    // the server received the real values …
    const got = lastSeen()
    expect(got.headers.authorization).toBe('Bearer tok-SECRET-1234')
    expect(got.url).toBe(`/echo/${encodeURIComponent('key/with spaces&=')}?key=key%2Fwith+spaces%26%3D`)
    expect(JSON.parse(got.body)).toEqual({ token: 'tok-SECRET-1234', text: 'token=tok-SECRET-1234' })
    // … and the result, which echoes all of them, carries none
    const text = JSON.stringify(out)
    expect(out.isError).toBe(false)
    expect(text).not.toContain('tok-SECRET-1234')
    expect(text).not.toContain('key/with spaces&=')
    expect(text).not.toContain(encodeURIComponent('key/with spaces&='))
    expect(text).not.toContain('key%2Fwith+spaces%26%3D')
    expect(out.content.body.headers.authorization).toBe('Bearer [redacted secret:API_TOKEN]')
    expect(out.content.body.body.token).toBe('[redacted secret:API_TOKEN]')
  })

  it('scrubs secrets from a plain-text echo and from error bodies', async () => {
    const echo = await call({ url: `${base}/raw-echo`, headers: { 'X-Api-Key': '${secret:API_TOKEN}' } })
    expect(echo.content.body).toContain('x-api-key: [redacted secret:API_TOKEN]')
    const err = await call({ url: `${base}/status/401?body=bad+token+\${secret:API_TOKEN}` })
    expect(err.isError).toBe(true)
    expect(JSON.stringify(err)).not.toContain('tok-SECRET-1234')
    expect(err.content.body).toBe('bad token [redacted secret:API_TOKEN]')
  })

  it('answers with the names of missing secrets and makes no call', async () => {
    const before = seen.length
    const out = await call({ url: `${base}/echo`, headers: { A: '${secret:NOPE}', B: '${secret:ALSO_NOPE}' } })
    expect(out.isError).toBe(true)
    expect(out.content.missingSecrets).toEqual(['NOPE', 'ALSO_NOPE'])
    expect(out.content.message).toContain("'NOPE', 'ALSO_NOPE'")
    expect(seen.length).toBe(before)
  })

  it('does not follow a 307 or 308 to another origin when the body carries a secret, and says why', async () => {
    for (const code of [307, 308]) {
      otherSeen.length = 0
      const out = await call({
        url: `${base}/redirect/${code}?to=${encodeURIComponent(`${otherBase}/collect`)}`,
        method: 'POST',
        bodyTemplate: { client_secret: '${secret:API_TOKEN}' },
      })
      expect(out.isError, String(code)).toBe(true)
      expect(out.content.reason).toBe('unsafe-redirect')
      expect(out.content.message).toContain(`redirected (${code}) to another origin`)
      expect(out.content.message).toContain('carries a secret')
      expect(otherSeen).toEqual([])
    }
  })

  it('still follows a 307 to another origin when the body carries no secret, and a 303 that drops the body', async () => {
    otherSeen.length = 0
    const plain = await call({
      url: `${base}/redirect/307?to=${encodeURIComponent(`${otherBase}/plain`)}`,
      method: 'POST',
      bodyTemplate: { hello: 'world' },
    })
    expect(plain.content.body).toEqual({ other: true, method: 'POST' })
    const seeOther = await call({
      url: `${base}/redirect/303?to=${encodeURIComponent(`${otherBase}/see`)}`,
      method: 'POST',
      bodyTemplate: { client_secret: '${secret:API_TOKEN}' },
    })
    expect(seeOther.content.body).toEqual({ other: true, method: 'GET' })
    expect(otherSeen.map((s) => [s.method, s.body])).toEqual([
      ['POST', '{"hello":"world"}'],
      ['GET', ''],
    ])
  })

  it('follows a 307 that stays on the same origin with the secret-bearing body', async () => {
    const out = await call({
      url: `${base}/redirect/307?to=/echo/moved`,
      method: 'POST',
      bodyTemplate: { client_secret: '${secret:API_TOKEN}' },
    })
    expect(out.content.body.path).toBe('/echo/moved')
    expect(lastSeen().body).toBe('{"client_secret":"tok-SECRET-1234"}')
  })

  it('scrubs an error body before cutting it, so no prefix of a secret survives the cut', async () => {
    for (const at of [1990, 1995, 1999]) {
      const body = `${'x'.repeat(at)}\${secret:API_TOKEN}${'y'.repeat(3000)}`
      const out = await call({ url: `${base}/status/500?body=${body}` })
      expect(out.isError).toBe(true)
      // the cut now falls inside the redaction marker, never inside the secret
      expect(out.content.body.slice(at, 2000), String(at)).toBe('[redacted secret:API_TOKEN]'.slice(0, 2000 - at))
      expect(JSON.stringify(out)).not.toMatch(/tok-S/i)
    }
  })

  it('scrubs echoes in another case, in hex, inside base64 and strictly URL-encoded', async () => {
    const out = await call({ url: `${base}/reflect`, headers: { 'X-Token': '${secret:QUOTED}' } })
    expect(lastSeen().headers['x-token']).toBe("it's a s3cret (really)")
    expect(out.content.body.split('\n')).toEqual([
      '[redacted secret:QUOTED]',
      '[redacted secret:QUOTED]',
      expect.stringContaining('[redacted secret:QUOTED]'),
      '[redacted secret:QUOTED]',
    ])
    expect(out.content.body).not.toMatch(/s3cret|%27s/i)
  })

  it('refuses a secret in the URL host when the configuration is written, and when a stored one is called', async () => {
    for (const url of [
      'https://${secret:API_TOKEN}.example.com/x',
      'https://api.example.com${secret:API_TOKEN}/x',
      '${secret:API_TOKEN}/x',
      'https:///${secret:API_TOKEN}/x',
      'http://127.0.0.1:${secret:API_TOKEN}/',
    ]) {
      const problems = factory.check({ url })
      expect(problems, url).toContainEqual({
        pointer: '/url',
        message: expect.stringContaining("a secret cannot be part of the URL's scheme, host or port (${secret:API_TOKEN})"),
      })
    }
    expect(factory.check({ url: 'https://api.example.com/${secret:API_TOKEN}?k=${secret:API_TOKEN}#${secret:API_TOKEN}' })).toEqual([])
    // a configuration stored before the check existed: refused at call time, with no connection and no secret in the answer
    connectAttempts.length = 0
    const [spec] = await factory.create(config({ url: `http://\${secret:API_TOKEN}.localhost:${port}/echo` }), env)
    const out = (await spec.invoke({}, ctx)) as ToolOutcome & { content: any }
    expect(out.isError).toBe(true)
    expect(out.content.message).toContain("a secret cannot be part of the URL's scheme, host or port")
    expect(JSON.stringify(out)).not.toMatch(/tok-secret/i)
    expect(connectAttempts).toEqual([])
  })

  it('keeps secret values out of the logs', () => {
    expect(JSON.stringify(log.lines)).not.toContain('tok-SECRET-1234')
  })
})

describe('rest tool configuration checks', () => {
  const problems = (p: RestParameters) => factory.check(p)

  it('accepts a complete, valid configuration', () => {
    expect(
      problems({
        url: 'https://api.example.com/u/{id}',
        method: 'POST',
        headers: { Authorization: 'Bearer ${secret:T}' },
        query: { tags: '{tags}' },
        bodyTemplate: { id: '{id}', meta: '{meta}' },
        inputs: [
          { name: 'id', type: 'string' },
          { name: 'tags', type: 'array' },
          { name: 'meta', type: 'object' },
        ],
        responseSchema: { type: 'object' },
      }),
    ).toEqual([])
  })

  it('names every problem with its pointer', () => {
    const out = problems({
      url: 'https://api.example.com/u/{nope}/{obj}',
      method: 'GET',
      headers: { 'Bad Header': 'x', Host: 'y', 'X-A': '${secret:}' },
      query: { q: 'x{list}y' },
      bodyTemplate: '{"a": {id}}',
      inputs: [
        { name: 'obj', type: 'object' },
        { name: 'list', type: 'array' },
        { name: 'id', type: 'string' },
        { name: 'id', type: 'string' },
      ],
      responseSchema: { type: 'nonsense' },
    })
    const byPointer = (p: string) => out.filter((x) => x.pointer === p).map((x) => x.message)
    expect(byPointer('/inputs/3/name')).toEqual(["input name 'id' is declared twice"])
    expect(byPointer('/url')).toEqual([
      'placeholder {nope} does not name a declared input (declare it in inputs, or write {{nope}} for literal braces)',
      "input 'obj' is an object and cannot be placed in the url",
    ])
    expect(byPointer('/headers/Bad Header')).toEqual(["'Bad Header' is not a valid header name"])
    expect(byPointer('/headers/Host')[0]).toContain('set by the HTTP client')
    expect(byPointer('/headers/X-A')[0]).toContain('is not a valid secret reference')
    expect(byPointer('/query/q')[0]).toContain("input 'list' is an array and cannot be placed in the query unless it is the whole value")
    expect(byPointer('/bodyTemplate')).toEqual([
      'a GET request has no body; remove bodyTemplate or change method',
      expect.stringContaining('looks like JSON text but does not parse'),
    ])
    expect(byPointer('/responseSchema')[0]).toContain('not a usable JSON Schema')
  })

  it('refuses URLs that are not absolute http(s) or that carry credentials', () => {
    expect(problems({ url: '/relative' })[0].message).toBe('url must be an absolute http or https URL')
    expect(problems({ url: 'ftp://x/y' })[0].message).toBe('url must use http or https, not ftp')
    expect(problems({ url: 'https://u:p@x/' })[0].message).toContain('credentials')
  })
})
