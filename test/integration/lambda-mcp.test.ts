/**
 * MCP on Lambda: two cold-started instances of functions/api.ts (two containers) sharing this
 * run's dynalite + s3rver, the official SDK client sending each request to the other one. A
 * session started on one continues on the other: nothing of it lives in a container's memory.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { coldStartLambda, type LambdaHandler, lambdaFetch, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'
import { connectMcp, connectMcpModern } from '../support/mcp'
import { expectSchema } from '../support/mcp-schema'

const SECRET = `lambda-mcp-test-${uniqueSuffix()}`
const URL_BASE = 'https://abc123.lambda-url.us-east-1.on.aws/brain/acme/projects/p1'

let containers: LambdaHandler[]
let token: string
let otherSubject: string

beforeAll(async () => {
  const links = await provisionLambdaLinks('lambda-mcp')
  token = await tokenFor('acme', 'tools:read tools:invoke', 'agent@example.test', SECRET)
  // Each cold start evaluates the module graph again: its own caches, its own memory. Each serves
  // one request before the next cold start resets the module registry, so the modules it loads on
  // first use come from its own graph (as in a real container, where there is only one).
  containers = []
  for (let i = 0; i < 2; i++) {
    const container = await coldStartLambda<LambdaHandler>(links, SECRET)
    await lambdaFetch([container])(`${URL_BASE}/processes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    })
    await lambdaFetch([container])(`${URL_BASE}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    containers.push(container)
  }
  expect(containers[0]).not.toBe(containers[1])
  otherSubject = await tokenFor('acme', 'tools:read tools:invoke', 'mallory@example.test', SECRET)
})

afterAll(() => {
  vi.unstubAllEnvs()
})

describe('MCP sessions across Lambda containers', () => {
  it('continues a session started on one container on the other: list, discover, list_changed, call', async () => {
    const served: number[] = []
    const { client, transport, events } = await connectMcp(`${URL_BASE}/mcp`, token, {
      fetch: lambdaFetch(containers, (i) => served.push(i)),
    })
    const session = transport.sessionId
    expect(session).toBeTruthy()
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('doc_errors')
    const described = await client.callTool({ name: 'tool_description', arguments: { names: ['doc_errors'] } })
    expect(described.isError).toBe(false)
    expect(events).toEqual(['list_changed'])
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_errors')
    const who = await client.callTool({ name: 'whoami', arguments: {} })
    expect(who.structuredContent).toEqual({ tenant: 'acme', project: 'p1', subject: 'agent@example.test', processId: session })
    expect(new Set(served)).toEqual(new Set([0, 1]))
    await client.close()
  })

  it('serves the v2 client on MCP 2026-07-28 across both containers: discover, list, describe, list again, call — no session id', async () => {
    const served: number[] = []
    const { client, seen } = await connectMcpModern(`${URL_BASE}/mcp?recipe=default`, token, {
      fetch: lambdaFetch(containers, (i) => served.push(i)),
    })
    expect(client.getProtocolEra()).toBe('modern')
    expect(client.getInstructions()).toContain('tool_description')
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('doc_errors')
    const described = await client.callTool({ name: 'tool_description', arguments: { names: ['doc_errors'] } })
    expect(described.isError).toBe(false)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_errors')
    expect((await client.callTool({ name: 'doc_errors', arguments: {} })).isError).toBe(false)
    const who = await client.callTool({ name: 'whoami', arguments: {} })
    expect(who.structuredContent).toMatchObject({ tenant: 'acme', project: 'p1', subject: 'agent@example.test' })
    expect(new Set(served)).toEqual(new Set([0, 1]))
    // on the wire: no session id ever, and every answer as the revision's schema describes it
    const responseOf: Record<string, string> = {
      'server/discover': 'DiscoverResultResponse',
      'tools/list': 'ListToolsResultResponse',
      'tools/call': 'CallToolResultResponse',
    }
    expect(seen.map((s) => s.method)).toEqual(['server/discover', 'tools/list', 'tools/call', 'tools/list', 'tools/call', 'tools/call'])
    for (const s of seen) {
      expect(s.status).toBe(200)
      expect(s.sessionHeader).toBeNull()
      expectSchema(responseOf[s.method], JSON.parse(s.body))
    }
    await client.close()
  })

  it('ends a session on one container; the other answers 404 for it', async () => {
    const { transport } = await connectMcp(`${URL_BASE}/mcp`, token, { fetch: lambdaFetch(containers) })
    const id = transport.sessionId!
    const [a, b] = [lambdaFetch([containers[0]]), lambdaFetch([containers[1]])]
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }
    expect((await a(`${URL_BASE}/mcp`, { method: 'DELETE', headers })).status).toBe(200)
    const after = await b(`${URL_BASE}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(after.status).toBe(404)
  })

  it('answers 404 on the other container to another subject’s token for the session', async () => {
    const { transport } = await connectMcp(`${URL_BASE}/mcp`, token, { fetch: lambdaFetch([containers[0]]) })
    const b = lambdaFetch([containers[1]])
    const res = await b(`${URL_BASE}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${otherSubject}`,
        'mcp-session-id': transport.sessionId!,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    })
    expect(res.status).toBe(404)
  })
})
