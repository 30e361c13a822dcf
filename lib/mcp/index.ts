/** Server-side MCP: server documents, egress-guarded connections with catalog caches, result mapping. */
import type { CascadeReader } from '../documents/cascade'
import { McpConnections, type McpConnectionsOptions, type RemoteTool } from './connections'
import { type McpServerRef, McpServerDocuments } from './server-doc'

export * from './connections'
export * from './fetch'
export * from './results'
export * from './server-doc'

/** What the `mcp` and `mcp_server` types share in one container: connections and parsed server documents. */
export interface McpRuntime {
  connections: McpConnections
  servers: McpServerDocuments
}

/** Where a catalog is expanded: whose documents, and where a reason for leaving tools out goes. */
export interface McpExpansionScope {
  tenant: string
  project: string
  documents: CascadeReader
  problem(message: string): void
}

export function createMcpRuntime(opts: McpConnectionsOptions): McpRuntime {
  return { connections: new McpConnections(opts), servers: new McpServerDocuments() }
}

/**
 * The server document and remote catalog a factory expands from, or undefined when either is
 * unavailable — then the reason is reported as a listing problem and the tools are left out.
 */
export async function remoteCatalog(mcp: McpRuntime, env: McpExpansionScope, server: string): Promise<{ ref: McpServerRef; tools: RemoteTool[] } | undefined> {
  const lookup = await mcp.servers.resolve(env.tenant, env.project, env.documents, server)
  if (!lookup.ok) {
    env.problem(lookup.message)
    return undefined
  }
  try {
    return { ref: lookup.server, tools: await mcp.connections.tools(lookup.server) }
  } catch (e) {
    env.problem(`left out: ${(e as Error).message}`)
    return undefined
  }
}
