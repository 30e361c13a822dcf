/**
 * The server-side ground of the MCP conformance suite (it needs Node ≥ 22, so it cannot run here),
 * as raw HTTP against a real server on 127.0.0.1: parse errors, unknown methods, bad params,
 * notifications, Accept, MCP-Protocol-Version, GET and DELETE, and sessions bound to a subject.
 */

import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { ALL, tokenFor } from '../support/http'

let server: ReturnType<typeof serve>
let url: string
let base: string
let token: string
let otherSubject: string
let readOnly: string
const clock = new ManualClock()

const ACCEPT = 'application/json, text/event-stream'
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
}

function post(body: unknown, headers: Record<string, string> = {}, auth = token, target = url) {
  return fetch(target, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

async function session(): Promise<string> {
  const res = await post(INIT)
  expect(res.status).toBe(200)
  const id = res.headers.get('mcp-session-id')!
  expect(id).toBeTruthy()
  expect(
    (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }))
      .status,
  ).toBe(202)
  return id
}
const inSession = (id: string, version = '2025-11-25') => ({ 'mcp-session-id': id, 'mcp-protocol-version': version })

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  otherSubject = await tokenFor('acme', ALL, 'mallory@example.test')
  readOnly = await tokenFor('acme', 'tools:read')
  server = serve({ fetch: createApp(createMemoryDeps({ clock })).fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme/projects/p1`
  url = `${base}/mcp`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('JSON-RPC faults are JSON-RPC errors', () => {
  it('answers a body that is not JSON with 400 and -32700', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ')
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } })
  })

  it('refuses a body nested deeper than 100 levels before parsing it (400, -32600)', async () => {
    const id = await session()
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}}`
    const res = await post(deep, inSession(id))
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining('nested deeper than 100 levels') } })
  })

  it('reads a body over 16 KiB as every other route does (in slices): the call answers, a deep one is -32600 at its column, a broken one -32700', async () => {
    const id = await session()
    const meta = { pad: Array.from({ length: 5_000 }, (_, i) => i) }
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: meta } }
    const res = await post(call, inSession(id))
    expect(res.status).toBe(200)
    expect(JSON.stringify(call).length).toBeGreaterThan(16 * 1024)
    expect(await res.json()).toMatchObject({ id: 7, result: { isError: false } })
    const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":${JSON.stringify(meta.pad)},"a":`
    const deep = await post(`${head}${'['.repeat(200)}${']'.repeat(200)}}}}`, inSession(id))
    expect(deep.status).toBe(400)
    // the root, params and arguments open three levels: the 98th bracket opens the 101st
    const column = head.length + 98
    expect(await deep.json()).toMatchObject({ error: { code: -32600, message: expect.stringContaining(`line 1, column ${column}`) } })
    const broken = await post(`${head}1,}}}`, inSession(id))
    expect(broken.status).toBe(400)
    expect(await broken.json()).toMatchObject({ error: { code: -32700 } })
  })

  it('answers JSON that is not a JSON-RPC message with -32700', async () => {
    const id = await session()
    const res = await post({ hello: 'world' }, inSession(id))
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700)
  })

  it('answers an unknown method with -32601 and the request id', async () => {
    const id = await session()
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'resources/teleport' }, inSession(id))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id: 7, error: { code: -32601 } })
  })

  it('answers bad params with -32602 (initialize, tools/list, tools/call)', async () => {
    const bad = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 42 } })
    expect(await bad.json()).toMatchObject({ id: 1, error: { code: -32602 } })
    expect(bad.headers.get('mcp-session-id')).toBeNull() // nothing spawned for it
    const id = await session()
    expect(await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 5 } }, inSession(id))).json()).toMatchObject({
      id: 2,
      error: { code: -32602 },
    })
    expect(
      await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'made-up' } }, inSession(id))).json(),
    ).toMatchObject({ id: 3, error: { code: -32602 } })
    const call = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { arguments: {} } }, inSession(id))
    expect(await call.text()).toMatch(/"id":4,"error":\{"code":-32602/)
  })

  it('answers a 2025-03-26 batch with one response per request, in the same answers as lone requests', async () => {
    const id = await session()
    const res = await post(
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 'x' } },
      ],
      inSession(id, '2025-03-26'),
    )
    expect(res.status).toBe(200)
    const answers = (await res.json()) as { id: number; result?: { tools?: { name: string }[] }; error?: { code: number } }[]
    const lone = (await (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))).json()) as { result: unknown }
    expect(answers.find((a) => a.id === 1)?.result).toEqual(lone.result)
    expect(answers.find((a) => a.id === 2)?.result).toEqual({})
    expect(answers.find((a) => a.id === 3)?.error?.code).toBe(-32602)
  })

  it('refuses a batch on 2025-06-18 and later, where batches no longer exist', async () => {
    const id = await session()
    for (const version of ['2025-06-18', '2025-11-25']) {
      const res = await post(
        [
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { jsonrpc: '2.0', id: 2, method: 'ping' },
        ],
        inSession(id, version),
      )
      expect(res.status).toBe(400)
      const body = (await res.json()) as { error: { code: number; message: string } }
      expect(body.error.code).toBe(-32600)
      expect(body.error.message).toContain('batches were removed in MCP 2025-06-18')
    }
  })

  it('refuses an initialize batch that asks for a revision without batches', async () => {
    const res = await post([{ ...INIT, params: { ...INIT.params, protocolVersion: '2025-06-18' } }])
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32600)
  })

  it('refuses a 2025-03-26 batch of more than ten messages, saying how many it had', async () => {
    const id = await session()
    const batch = Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }))
    const res = await post(batch, inSession(id, '2025-03-26'))
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('at most 10 messages (this one has 11)')
    expect((await post(batch.slice(0, 10), inSession(id, '2025-03-26'))).status).toBe(200)
  })

  it('words protocol errors once, without the SDK prefix a client adds again', async () => {
    const id = await session()
    for (const body of [
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { cursor: 'made-up' } },
      { jsonrpc: '2.0', id: 7, method: 'no/such' },
    ]) {
      const answer = (await (await post(body, inSession(id))).json()) as { error: { message: string } }
      expect(answer.error.message).not.toMatch(/MCP error/)
    }
  })

  it('gives every listed tool a title and marks the read-only built-ins', async () => {
    const id = await session()
    const { result } = (await (await post({ jsonrpc: '2.0', id: 8, method: 'tools/list' }, inSession(id))).json()) as {
      result: { tools: { name: string; title?: string; annotations?: { readOnlyHint?: boolean } }[] }
    }
    for (const tool of result.tools) expect(tool.title, tool.name).toMatch(/\S/)
    const byName = new Map(result.tools.map((t) => [t.name, t]))
    for (const name of ['tool_list', 'tool_description', 'whoami']) expect(byName.get(name)?.annotations?.readOnlyHint, name).toBe(true)
  })

  it('says in the 401 challenge that the token has expired', async () => {
    const expired = await tokenFor('acme', ALL, 'alice@example.test', undefined, -60)
    const res = await post(INIT, {}, expired)
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token", error_description="[^"]*expired[^"]*"/)
  })

  it('takes the allowedTools query parameter of the project URL as the session process own allow-set', async () => {
    const res = await post(INIT, {}, token, `${url}?allowedTools=whoami,ghost`)
    expect(res.status).toBe(200)
    const id = res.headers.get('mcp-session-id')!
    const { result } = (await (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))).json()) as {
      result: { tools: { name: string }[] }
    }
    expect(result.tools.map((t) => t.name)).toEqual(['tool_description', 'tool_list', 'whoami'])
    const view = (await (await fetch(`${base}/processes/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      allowedToolsOverride?: string[]
    }
    expect(view.allowedToolsOverride).toEqual(['whoami', 'ghost'])
  })

  it('ends an MCP session after 30 idle minutes, and keeps a session in use alive with one write per quarter hour at most', async () => {
    const idle = await session()
    const used = await session()
    const view = async (id: string) =>
      (await fetch(`${base}/processes/${id}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<{
        expiresAt: string
        idleTimeoutSeconds?: number
      }>
    const first = await view(used)
    expect(first.idleTimeoutSeconds).toBe(1800)
    const list = (id: string) => post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))
    clock.advance(10 * 60_000)
    expect((await list(used)).status).toBe(200)
    expect((await view(used)).expiresAt).toBe(first.expiresAt) // more than half left: no write
    clock.advance(10 * 60_000)
    expect((await list(used)).status).toBe(200)
    expect(Date.parse((await view(used)).expiresAt)).toBe(clock.now() + 30 * 60_000)
    clock.advance(25 * 60_000)
    expect((await list(used)).status).toBe(200)
    expect((await list(idle)).status).toBe(404)
  })

  it('leaves a process spawned over REST on the process lifetime, not the MCP idle limit', async () => {
    const res = await fetch(`${base}/processes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    })
    const p = (await res.json()) as { id: string; expiresAt: string; idleTimeoutSeconds?: number }
    expect(p.idleTimeoutSeconds).toBeUndefined()
    expect(Date.parse(p.expiresAt)).toBe(clock.now() + 24 * 3600_000)
    clock.advance(60 * 60_000)
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}, token, `${base}/processes/${p.id}/mcp`)).status).toBe(200)
  })

  it('answers a ping', async () => {
    const id = await session()
    expect(await (await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, inSession(id))).json()).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {},
    })
  })
})

describe('Streamable HTTP rules', () => {
  it('answers notifications (and only notifications) with 202 and no body', async () => {
    const id = await session()
    const res = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, inSession(id))
    expect(res.status).toBe(202)
    expect(await res.text()).toBe('')
  })

  it('answers 406 when Accept lacks text/event-stream or application/json', async () => {
    const id = await session()
    for (const accept of ['application/json', 'text/event-stream']) {
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...inSession(id), accept })
      expect(res.status).toBe(406)
    }
  })

  it('answers 415 to a body that is not application/json', async () => {
    const id = await session()
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...inSession(id), 'content-type': 'text/plain' })).status).toBe(
      415,
    )
  })

  it('answers 400 to an MCP-Protocol-Version it does not serve, and assumes 2025-03-26 without one', async () => {
    const id = await session()
    const unknown = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id, '1999-01-01'))
    expect(unknown.status).toBe(400)
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('2025-11-25, 2025-06-18, 2025-03-26')
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id, '2024-11-05'))).status).toBe(400)
    const missing = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-session-id': id })
    expect(missing.status).toBe(200)
  })

  it('negotiates each served revision, and answers the newest to one it does not serve', async () => {
    for (const v of ['2025-03-26', '2025-06-18', '2025-11-25']) {
      const res = await post({ ...INIT, params: { ...INIT.params, protocolVersion: v } })
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(v)
    }
    const old = await post({ ...INIT, params: { ...INIT.params, protocolVersion: '2024-11-05' } })
    expect(((await old.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-11-25')
  })

  it('answers 400 to a request without Mcp-Session-Id on the session URL (POST, GET, DELETE)', async () => {
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' })).status).toBe(400)
    const get = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } })
    expect(get.status).toBe(400)
    expect(await get.json()).toMatchObject({ error: { code: -32000, message: expect.stringContaining('Mcp-Session-Id') } })
    expect((await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } })).status).toBe(400)
  })

  it('answers a GET with a session 405: notifications ride on POST responses', async () => {
    const id = await session()
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...inSession(id) } })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST, DELETE')
  })

  it('answers 405 to other methods', async () => {
    expect((await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${token}` } })).status).toBe(405)
  })
})

describe('sessions', () => {
  it('ends a session on DELETE; the next request is 404 and the process is gone', async () => {
    const id = await session()
    const del = await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, ...inSession(id) } })
    expect(del.status).toBe(200)
    const after = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))
    expect(after.status).toBe(404)
    expect(await after.json()).toMatchObject({ error: { code: -32001 } })
    expect((await fetch(`${base}/processes/${id}`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404)
    expect((await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, ...inSession(id) } })).status).toBe(404)
  })

  it('answers 404 to an unknown or malformed session id', async () => {
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession('00000000-0000-0000-0000-000000000000'))).status).toBe(
      404,
    )
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession('../../etc'))).status).toBe(404)
  })

  it('answers 404 to another subject’s token, even in the same tenant, and lets it do nothing', async () => {
    const id = await session()
    expect(
      (await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, inSession(id), otherSubject))
        .status,
    ).toBe(404)
    expect((await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${otherSubject}`, ...inSession(id) } })).status).toBe(
      404,
    )
    expect(
      (
        await fetch(`${base}/processes/${id}/mcp`, {
          method: 'POST',
          headers: { authorization: `Bearer ${otherSubject}`, 'content-type': 'application/json', accept: ACCEPT },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        })
      ).status,
    ).toBe(404)
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))).status).toBe(200)
  })

  it('answers 404 once the process expired, so the client initializes again', async () => {
    const id = await session()
    clock.advance(25 * 3600_000)
    expect((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(id))).status).toBe(404)
    expect((await post(INIT)).status).toBe(200)
  })

  it('answers 404 on the process URL when Mcp-Session-Id names another process', async () => {
    const id = await session()
    const other = await session()
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession(other), token, `${base}/processes/${id}/mcp`)
    expect(res.status).toBe(404)
  })

  it('needs tools:invoke to start a session or call a tool; tools:read may list', async () => {
    const id = await session()
    expect((await post(INIT, {}, readOnly)).status).toBe(403)
    expect(
      (await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, inSession(id), readOnly))
        .status,
    ).toBe(403)
  })

  it('answers 401 without a token', async () => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT },
      body: JSON.stringify(INIT),
    })
    expect(res.status).toBe(401)
  })

  it('refuses bad spawn parameters in the query with the spawn’s own problems', async () => {
    const unknownRecipe = await post(INIT, {}, token, `${url}?recipe=nope`)
    expect(unknownRecipe.status).toBe(422)
    expect(await unknownRecipe.json()).toMatchObject({ errors: [{ pointer: '/recipe' }] })
    const badReserve = await post(INIT, {}, token, `${url}?reserve=lots`)
    expect(badReserve.status).toBe(400)
    expect(await badReserve.json()).toMatchObject({ errors: [{ pointer: '/reserve' }] })
    const badModel = await post(INIT, {}, token, `${url}?model=gpt`)
    expect(badModel.status).toBe(400)
    expect(await badModel.json()).toMatchObject({ errors: [{ pointer: '/models/0' }] })
  })
})
