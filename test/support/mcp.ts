/** The official MCP SDK client, connected the way any MCP host connects (Streamable HTTP, a bearer token). */
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
