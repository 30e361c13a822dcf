/** Server-side MCP: server documents, egress-guarded connections with catalog caches, result mapping. */
import { McpConnections, type McpConnectionsOptions } from './connections'
import { McpServerDocuments } from './server-doc'

export * from './connections'
export * from './fetch'
export * from './results'
export * from './server-doc'

/** What the `mcp` and `mcp_server` types share in one container: connections and parsed server documents. */
export interface McpRuntime {
  connections: McpConnections
  servers: McpServerDocuments
}

export function createMcpRuntime(opts: McpConnectionsOptions): McpRuntime {
  return { connections: new McpConnections(opts), servers: new McpServerDocuments() }
}
