/**
 * MCP 2026-07-28 (the stateless revision) as raw HTTP against a real server on 127.0.0.1: every
 * request carries its revision in `_meta` and the headers, there is no initialize and no session
 * id, and the process is named by the URL or derived per request from (token subject, query).
 * Every response body is held to the revision's published JSON schema (test/fixtures/mcp).
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { statelessProcessId } from '../../lib/surface/mcp-modern'
import { ALL, tokenFor } from '../support/http'
import { expectSchema } from '../support/mcp-schema'

let server: ReturnType<typeof serve>
let base: string
let url: string
let token: string
let otherSubject: string
let readOnly: string
const clock = new ManualClock()
const ACCEPT = 'application/json, text/event-stream'
const V = '2026-07-28'
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
let nextId = 1

/** A request as a conforming client sends it: `_meta` in the body, the revision, method and name mirrored into headers. */
function rpc(
  method: string,
  params: Record<string, unknown> = {},
  opts: { headers?: Record<string, string>; auth?: string; target?: string } = {},
) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${opts.auth ?? token}`,
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-protocol-version': V,
    'mcp-method': method,
    ...(method === 'tools/call' ? { 'mcp-name': String(params.name) } : {}),
    ...opts.headers,
  }
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k]
  return fetch(opts.target ?? url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { _meta: META, ...params } }),
  })
}
async function result(res: Response, definition: string): Promise<any> {
  expect(res.status).toBe(200)
  expect(res.headers.get('mcp-session-id')).toBeNull()
  const body = (await res.json()) as any
  expectSchema(definition, body)
  return body.result
}
const names = (r: { tools: { name: string }[] }) => r.tools.map((t) => t.name)
const whoami = async (opts: Parameters<typeof rpc>[2] = {}) =>
  (await result(await rpc('tools/call', { name: 'whoami', arguments: {} }, opts), 'CallToolResultResponse')).structuredContent

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  otherSubject = await tokenFor('acme', ALL, 'mallory@example.test')
  readOnly = await tokenFor('acme', 'tools:read', 'reader@example.test')
  server = serve({ fetch: createApp(createMemoryDeps({ clock })).fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme/projects/p1`
  url = `${base}/mcp`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('MCP 2026-07-28 on the project URL', () => {
  it('answers server/discover with the revision, tools without listChanged, the serverInfo and the discovery block as instructions', async () => {
    const r = await result(await rpc('server/discover', {}, { target: `${url}?recipe=default` }), 'DiscoverResultResponse')
    expect(r).toMatchObject({
      resultType: 'complete',
      supportedVersions: [V],
      capabilities: { tools: {} },
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'server-tools' } },
    })
    expect(r.capabilities.tools.listChanged).toBeUndefined()
    expect(r.instructions).toContain('tool_description')
  })

  it('keeps discovery and activation across requests without a session id: describe a tool, and the next list has it', async () => {
    const target = `${url}?allowedTools=whoami,doc_errors,doc_read`
    const first = await result(await rpc('tools/list', {}, { target }), 'ListToolsResultResponse')
    expect(first).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
    expect(names(first)).not.toContain('doc_errors')
    const described = await rpc('tools/call', { name: 'tool_description', arguments: { names: ['doc_errors'] } }, { target })
    // this revision sends list changes on subscriptions/listen streams only: the call answers plain JSON
    expect(described.headers.get('content-type')).toContain('application/json')
    expect((await result(described, 'CallToolResultResponse')).isError).toBe(false)
    expect(names(await result(await rpc('tools/list', {}, { target }), 'ListToolsResultResponse'))).toContain('doc_errors')
    const called = await result(await rpc('tools/call', { name: 'doc_errors', arguments: {} }, { target }), 'CallToolResultResponse')
    expect(called.isError).toBe(false)
    const a = await whoami({ target })
    const b = await whoami({ target })
    expect(a.processId).toMatch(/^mcp-[0-9a-f]{40}$/)
    expect(b.processId).toBe(a.processId)
  })

  it('gives each subject and each query its own process', async () => {
    const mine = (await whoami()).processId
    expect((await whoami({ auth: otherSubject })).processId).not.toBe(mine)
    expect((await whoami({ target: `${url}?reserve=4` })).processId).not.toBe(mine)
    expect((await whoami({ target: `${url}?reserve=4` })).processId).toBe((await whoami({ target: `${url}?reserve=4` })).processId)
  })

  it('lands concurrent first requests of one client on one process (one conditional create wins, the others read it)', async () => {
    const target = `${url}?reserve=7`
    const ids = await Promise.all(Array.from({ length: 6 }, () => whoami({ target })))
    expect(new Set(ids.map((w) => w.processId)).size).toBe(1)
  })

  it('lets a tools:read token discover and list without spawning anything, and refuses its tools/call', async () => {
    expect(names(await result(await rpc('tools/list', {}, { auth: readOnly }), 'ListToolsResultResponse'))).toContain('tool_list')
    await result(await rpc('server/discover', {}, { auth: readOnly }), 'DiscoverResultResponse')
    const wouldBe = statelessProcessId('acme', 'p1', 'reader@example.test', {})
    expect((await fetch(`${base}/processes/${wouldBe}`, { headers: { authorization: `Bearer ${readOnly}` } })).status).toBe(404)
    expect((await rpc('tools/call', { name: 'whoami', arguments: {} }, { auth: readOnly })).status).toBe(403)
  })

  it('ends an idle process like an MCP session, and the same client starts afresh on a new one under the same id', async () => {
    const target = `${url}?allowedTools=whoami,doc_errors,doc_read&recipe=default`
    await result(
      await rpc('tools/call', { name: 'tool_description', arguments: { names: ['doc_errors'] } }, { target }),
      'CallToolResultResponse',
    )
    const before = (await whoami({ target })).processId
    clock.advance(31 * 60_000)
    expect(names(await result(await rpc('tools/list', {}, { target }), 'ListToolsResultResponse'))).not.toContain('doc_errors')
    expect((await whoami({ target })).processId).toBe(before)
  })

  it('answers subscriptions/listen with an empty acknowledgment and a graceful end: it honours no notification type', async () => {
    const res = await rpc('subscriptions/listen', { notifications: { toolsListChanged: true } })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
    expect(events[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: {} } })
    expectSchema('SubscriptionsAcknowledgedNotification', events[0])
    expectSchema('SubscriptionsListenResultResponse', events[1])
  })
})

describe('the revision’s header rules', () => {
  const mismatch = async (res: Response, words: string) => {
    expect(res.status).toBe(400)
    const body = (await res.json()) as any
    expectSchema('HeaderMismatchError', body)
    expect(body.error.message).toContain(words)
  }

  it('refuses a missing or different MCP-Protocol-Version, Mcp-Method or Mcp-Name with 400 -32020', async () => {
    await mismatch(await rpc('tools/list', {}, { headers: { 'mcp-protocol-version': '' } }), 'MCP-Protocol-Version header is required')
    await mismatch(await rpc('tools/list', {}, { headers: { 'mcp-method': '' } }), 'Mcp-Method header is required')
    await mismatch(await rpc('tools/list', {}, { headers: { 'mcp-method': 'tools/call' } }), "Mcp-Method header value 'tools/call'")
    await mismatch(await rpc('tools/call', { name: 'whoami' }, { headers: { 'mcp-name': '' } }), 'Mcp-Name header is required')
    await mismatch(
      await rpc('tools/call', { name: 'whoami' }, { headers: { 'mcp-name': 'tool_list' } }),
      "Mcp-Name header value 'tool_list'",
    )
  })

  it('refuses a 2026 header over a body without _meta, and _meta over a 2025 header', async () => {
    const bare = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-protocol-version': V,
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    await mismatch(bare, "carries no 'io.modelcontextprotocol/protocolVersion'")
    await mismatch(
      await rpc('tools/list', {}, { headers: { 'mcp-protocol-version': '2025-11-25' } }),
      "header value '2025-11-25' does not match",
    )
  })

  it('decodes a base64 Mcp-Name before comparing it', async () => {
    const encoded = `=?base64?${Buffer.from('whoami').toString('base64')}?=`
    await result(await rpc('tools/call', { name: 'whoami', arguments: {} }, { headers: { 'mcp-name': encoded } }), 'CallToolResultResponse')
  })

  it('answers a revision it does not serve with 400 -32022 naming the ones it does', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: ACCEPT,
        'mcp-protocol-version': '2027-01-01',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' } },
      }),
    })
    expect(res.status).toBe(400)
    const body = (await res.json()) as any
    expectSchema('UnsupportedProtocolVersionError', body)
    expect(body.error.data).toEqual({ supported: [V, '2025-11-25', '2025-06-18', '2025-03-26'], requested: '2027-01-01' })
  })

  it('answers an unknown method 404 -32601, bad params -32602, and GET or DELETE 405', async () => {
    const unknown = await rpc('resources/list')
    expect(unknown.status).toBe(404)
    const body = (await unknown.json()) as any
    expectSchema('JSONRPCErrorResponse', body)
    expectSchema('MethodNotFoundError', body.error)
    const bad = await rpc('tools/call', { name: 'whoami', arguments: [1] })
    const badBody = (await bad.json()) as any
    expectSchema('JSONRPCErrorResponse', badBody)
    expectSchema('InvalidParamsError', badBody.error)
    expect(badBody.error.message).toBe('Invalid tools/call params: arguments must be an object')
    for (const method of ['GET', 'DELETE'])
      expect((await fetch(url, { method, headers: { authorization: `Bearer ${token}`, 'mcp-protocol-version': V } })).status).toBe(405)
  })
})

describe('MCP 2026-07-28 on the process URL', () => {
  it('works on a process spawned over REST, with no session header, and 404s once it is gone', async () => {
    const spawned = await fetch(`${base}/processes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ allowedTools: ['whoami', 'doc_errors'] }),
    })
    const process = (await spawned.json()) as { id: string }
    const target = `${base}/processes/${process.id}/mcp`
    await rpc('tools/call', { name: 'tool_description', arguments: { names: ['doc_errors'] } }, { target })
    expect(names(await result(await rpc('tools/list', {}, { target }), 'ListToolsResultResponse'))).toContain('doc_errors')
    expect((await whoami({ target })).processId).toBe(process.id)
    const foreign = await rpc('tools/list', {}, { target, auth: otherSubject })
    expect(foreign.status).toBe(404)
    expectSchema('JSONRPCErrorResponse', await foreign.json())
  })
})
