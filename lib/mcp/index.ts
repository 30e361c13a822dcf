/** Server-side MCP: server documents, egress-guarded connections with catalog caches, result mapping. */
import type { CascadeReader } from '../documents/cascade'
import { noopTracer, type Tracer } from '../runtime/tracer'
import type { McpConnections, McpConnectionsOptions, RemoteTool } from './connections'
import { McpServerDocuments, type McpServerRef } from './server-doc'

// Types only: ./connections holds the MCP SDK (and zod), which loads when a pack first connects.
export type { McpConnectionsOptions, RemoteTool } from './connections'
// Not ./fetch nor ./results: only the connections and the tool runtimes use them, and a re-export
// here would put them (and the egress connector) in the cold start; they are imported directly.
export * from './server-doc'

/** What the `mcp` and `mcp_server` types share in one container: connections and parsed server documents. */
export interface McpRuntime {
  connections: Pick<McpConnections, 'tools' | 'call'>
  servers: McpServerDocuments
}

/** Where a catalog is expanded: whose documents, and where a reason for leaving tools out goes. */
export interface McpExpansionScope {
  tenant: string
  project: string
  documents: CascadeReader
  problem(message: string): void
}

/**
 * The connections are created on first use: the MCP SDK and zod (~250 KiB) are imported only when
 * a project actually has an MCP tool to expand or call, never at cold start.
 */
export function createMcpRuntime(
  opts: McpConnectionsOptions & { load: () => Promise<typeof import('./connections')>; tracer?: Tracer },
): McpRuntime {
  let loaded: Promise<McpConnections> | undefined
  // the composition root owns the dynamic import, and so where the bundle's chunks are cut
  const connections = () => (loaded ??= opts.load().then((m) => new m.McpConnections(opts)))
  const tracer = opts.tracer ?? noopTracer
  // one client span per MCP method (the MCP semantic conventions' `{method} {target}`); its HTTP
  // requests are children of it, and carry its trace on to the server (lib/egress/traced.ts)
  const mcpSpan = <T>(method: string, ref: McpServerRef, target: string | undefined, fn: () => Promise<T>) =>
    tracer.span(
      target ? `${method} ${target}` : method,
      {
        kind: 'client',
        attributes: {
          'mcp.method.name': method,
          'gen_ai.tool.name': target,
          'server_tools.tenant': ref.tenant,
          'server_tools.mcp_server': ref.name,
        },
      },
      fn,
    )
  return {
    connections: {
      tools: (ref, signal) => mcpSpan('tools/list', ref, undefined, async () => (await connections()).tools(ref, signal)),
      call: (ref, name, ...rest) => mcpSpan('tools/call', ref, name, async () => (await connections()).call(ref, name, ...rest)),
    },
    servers: new McpServerDocuments(),
  }
}

/**
 * The server document and remote catalog a factory expands from, or undefined when either is
 * unavailable — then the reason is reported as a listing problem and the tools are left out.
 */
export async function remoteCatalog(
  mcp: McpRuntime,
  env: McpExpansionScope,
  server: string,
): Promise<{ ref: McpServerRef; tools: RemoteTool[] } | undefined> {
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
