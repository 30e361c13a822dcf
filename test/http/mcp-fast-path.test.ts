/**
 * The MCP endpoint's hot path: a lone, well-formed tools/list or tools/call is answered by the HTTP
 * layer itself, never by the SDK's per-request Server and transport (they cost more than the work;
 * bench/mcp.ts measures it). The SDK's constructors are counted through the protocol module the
 * composition hands the app, so a change that routes the hot path through the SDK again fails here.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import type { McpProtocol } from '../../functions/http/app-deps'
import { ALL, tokenFor } from '../support/http'

const ACCEPT = 'application/json, text/event-stream'
const constructed = { servers: 0, transports: 0, modernLeg: 0 }
let app: ReturnType<typeof createApp>
let token: string
let session: string

function countingProtocol(load: () => Promise<McpProtocol>): () => Promise<McpProtocol> {
  return async () => {
    const p = await load()
    const Transport = p.WebStandardStreamableHTTPServerTransport
    return {
      ...p,
      mcpServer: (...args: Parameters<McpProtocol['mcpServer']>) => {
        constructed.servers++
        return p.mcpServer(...args)
      },
      sdkModernLeg: (...args: Parameters<McpProtocol['sdkModernLeg']>) => {
        constructed.modernLeg++
        return p.sdkModernLeg(...args)
      },
      WebStandardStreamableHTTPServerTransport: class extends Transport {
        constructor(...args: ConstructorParameters<typeof Transport>) {
          super(...args)
          constructed.transports++
        }
      },
    }
  }
}

const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.request('/brain/acme/projects/p1/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: JSON.stringify(body),
  })
const inSession = () => ({ 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' })

beforeAll(async () => {
  const deps = createMemoryDeps()
  deps.modules = { ...deps.modules, mcpProtocol: countingProtocol(deps.modules.mcpProtocol) }
  app = createApp(deps)
  token = await tokenFor('acme', ALL)
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fast-path', version: '1' } },
  })
  expect(init.status).toBe(200)
  session = init.headers.get('mcp-session-id')!
})

describe('the MCP fast path', () => {
  it('answers a lone tools/list without constructing the SDK server or transport', async () => {
    const before = { ...constructed }
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, inSession())
    expect(res.status).toBe(200)
    expect(((await res.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toContain('whoami')
    expect(constructed).toEqual(before)
  })

  it('answers a lone tools/call without constructing the SDK server or transport', async () => {
    const before = { ...constructed }
    const res = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, inSession())
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('"isError":false')
    expect(constructed).toEqual(before)
  })

  it('still sends other methods through the SDK, so the counters above can see it', async () => {
    const before = { ...constructed }
    const res = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, inSession())
    expect(res.status).toBe(200)
    expect(constructed).toEqual({ ...before, servers: before.servers + 1, transports: before.transports + 1 })
  })

  it('answers 2026-07-28 server/discover, tools/list and tools/call without the SDK, and only other methods with it', async () => {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'fast-path', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    }
    const modern = (id: number, method: string, params: Record<string, unknown> = {}) =>
      post(
        { jsonrpc: '2.0', id, method, params: { _meta: meta, ...params } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(params.name ? { 'mcp-name': String(params.name) } : {}) },
      )
    const before = { ...constructed }
    for (const [i, [method, params]] of (
      [
        ['server/discover', {}],
        ['tools/list', {}],
        ['tools/call', { name: 'whoami', arguments: {} }],
      ] as const
    ).entries())
      expect((await modern(10 + i, method, params)).status).toBe(200)
    expect(constructed).toEqual(before)
    expect((await modern(20, 'prompts/list')).status).toBe(404)
    expect(constructed).toEqual({ ...before, modernLeg: before.modernLeg + 1 })
  })

  it('imports each lazily loaded module once, not per request', () => {
    const deps = createMemoryDeps()
    expect(deps.modules.mcpProtocol()).toBe(deps.modules.mcpProtocol())
    expect(deps.modules.openapi()).toBe(deps.modules.openapi())
    expect(deps.modules.consolePages()).toBe(deps.modules.consolePages())
  })
})
