/**
 * The expanding and calling half of `mcp` and `mcp_server` (lib/tools/types/mcp.ts and
 * mcp_server.ts hold their definitions): a server's catalog turned into tools whose calls go
 * through the container's MCP connections.
 */

import type { ServerToolConfig } from '../../../config/server-tool'
import { type McpRuntime, remoteCatalog } from '../../../mcp'
import { cut, failureOf, globMatcher, inputSchemaOf, localNameOf, outcomeOf, shortAlias } from '../../../mcp/results'
import { SecretScrubber } from '../../../secrets/scrubber'
import type { FactoryEnv, ToolSpec } from '../../contracts'
import type { McpToolParameters } from '../mcp'
import type { McpServerParameters } from '../mcp_server'

/** The one tool of an `mcp` configuration, or none (the reason goes to the listing's problems). */
export async function mcpTool(mcp: McpRuntime, config: ServerToolConfig<McpToolParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
  const { server, toolName } = config.parameters
  const catalog = await remoteCatalog(mcp, env, server)
  if (!catalog) return []
  const ref = catalog.ref
  const remote = catalog.tools.find((t) => t.name === toolName)
  if (!remote) {
    env.problem(`left out: MCP server '${server}' has no tool '${toolName}'`)
    return []
  }
  const { schema, problem } = inputSchemaOf(remote)
  if (problem) {
    env.problem(`left out: MCP tool '${toolName}' on server '${server}': ${problem}`)
    return []
  }
  const hint = config.searchHint === undefined ? cut(remote.description ?? remote.title) : undefined
  const connections = mcp.connections
  return [
    {
      inputSchema: schema,
      extraLabels: ['mcp'],
      ...(hint ? { searchHint: hint } : {}),
      invoke: remoteInvoke(connections, ref, server, toolName),
    },
  ]
}

/** The sub-tools of an `mcp_server` pack, or none (the reason goes to the listing's problems). */
export async function mcpServerTools(mcp: McpRuntime, config: ServerToolConfig<McpServerParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
  const { server, include, exclude } = config.parameters
  const catalog = await remoteCatalog(mcp, env, server)
  if (!catalog) return []
  const { ref, tools: remote } = catalog
  const included = include?.length ? globMatcher(include) : () => true
  const excluded = exclude?.length ? globMatcher(exclude) : () => false
  const connections = mcp.connections
  const labels = ['mcp', `mcp:${config.name}`]
  const specs: ToolSpec[] = []
  const taken = new Map<string, string>()
  for (const tool of remote) {
    if (!included(tool.name) || excluded(tool.name)) continue
    const localName = localNameOf(tool.name)
    const clash = taken.get(localName)
    if (clash !== undefined) {
      env.problem(`left out MCP tool '${tool.name}': its name becomes '${localName}', like '${clash}'`)
      continue
    }
    const { schema, problem } = inputSchemaOf(tool)
    if (problem) {
      env.problem(`left out MCP tool '${tool.name}': ${problem}`)
      continue
    }
    taken.set(localName, tool.name)
    const remoteName = tool.name
    const hint = cut(tool.description ?? tool.title)
    const alias = shortAlias(config.name, localName)
    specs.push({
      localName,
      description: tool.description?.trim() || tool.title || `Tool '${remoteName}' of MCP server '${server}'.`,
      inputSchema: schema,
      extraLabels: labels,
      ...(hint ? { searchHint: hint } : {}),
      ...(alias ? { aliases: [alias] } : {}),
      invoke: remoteInvoke(connections, ref, server, remoteName),
    })
  }
  return specs
}

/** A tool's call on the remote server, its result or failure mapped and scrubbed of the secrets the connection used. */
function remoteInvoke(
  connections: McpRuntime['connections'],
  ref: Parameters<McpRuntime['connections']['call']>[0],
  server: string,
  remoteName: string,
): ToolSpec['invoke'] {
  return async (params, ctx) => {
    let scrubber = new SecretScrubber()
    try {
      const { result, scrubber: s } = await connections.call(ref, remoteName, params, ctx.signal)
      scrubber = s
      return outcomeOf(server, remoteName, result, scrubber)
    } catch (e) {
      return failureOf(server, remoteName, e, scrubber)
    }
  }
}
