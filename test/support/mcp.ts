/** The official MCP SDK clients — v1 (1.32.2, 2025-era) and v2 (2026-07-28) — connected the way any MCP host connects (Streamable HTTP, a bearer token). */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'

export interface McpTestClient {
  client: Client
  transport: StreamableHTTPClientTransport
  /** Every server message the test cares about, in arrival order (`list_changed`). */
  events: string[]
}

export async function connectMcp(url: string, token: string, opts: { fetch?: FetchLike; sessionId?: string } = {}): Promise<McpTestClient> {
  const client = new Client({ name: 'server-tools-test', version: '1.0.0' })
  const events: string[] = []
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    events.push('list_changed')
  })
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
  })
  await client.connect(transport)
  return { client, transport, events }
}

/**
 * The v2 SDK client (`@modelcontextprotocol/client`) pinned to MCP 2026-07-28: no initialize, no
 * session; `server/discover` at connect, `_meta` and the mirrored headers on every request.
 * `seen` records what every response looked like on the wire (status, session header, body).
 */
export async function connectMcpModern(
  url: string,
  token: string,
  opts: { fetch?: FetchLike } = {},
): Promise<{ client: ModernClient; seen: { status: number; sessionHeader: string | null; body: string; method: string }[] }> {
  const seen: { status: number; sessionHeader: string | null; body: string; method: string }[] = []
  const base: FetchLike = opts.fetch ?? ((u, init) => fetch(u, init))
  const recording: FetchLike = async (u, init) => {
    const res = await base(u, init)
    const body = await res.clone().text()
    seen.push({
      status: res.status,
      sessionHeader: res.headers.get('mcp-session-id'),
      body,
      method: new Headers(init?.headers).get('mcp-method') ?? '',
    })
    return res
  }
  const client = new ModernClient({ name: 'server-tools-test', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await client.connect(
    new ModernTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } }, fetch: recording as never }),
  )
  return { client, seen }
}
