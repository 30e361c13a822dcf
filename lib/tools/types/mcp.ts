/**
 * `mcp` (spec §3): one tool of a server-side MCP server, `{ server, toolName }`. The input schema
 * comes from the server's `tools/list` (cached per container); the configured description is
 * used (the document requires one), the remote one becomes the searchHint unless one is set.
 * An unreachable server leaves the tool out of listings with a `problems` entry.
 */
import { type McpRuntime, remoteCatalog } from '../../mcp'
import { MCP_SERVER_NAME_PATTERN } from '../../mcp/server-doc'
import { cut, failureOf, inputSchemaOf, outcomeOf } from '../../mcp/results'
import { SecretScrubber } from '../../secrets/scrubber'
import type { ServerToolConfig } from '../../config/server-tool'
import type { ToolFactory, ToolSpec, FactoryEnv } from '../contracts'

export interface McpToolParameters {
  server: string
  toolName: string
}

export class McpToolFactory implements ToolFactory<McpToolParameters> {
  readonly typeId = 'mcp'
  readonly kind = 'single' as const
  readonly dynamic = true
  readonly parametersSchema = {
    type: 'object',
    required: ['server', 'toolName'],
    additionalProperties: false,
    properties: {
      server: { type: 'string', pattern: MCP_SERVER_NAME_PATTERN, description: 'Name of the server document mcp-servers/<server>.yaml' },
      toolName: { type: 'string', minLength: 1, maxLength: 128, description: 'Name of the tool in the server\'s tools/list' },
    },
  }

  constructor(private readonly mcp: McpRuntime) {}

  async create(config: ServerToolConfig<McpToolParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const { server, toolName } = config.parameters
    const catalog = await remoteCatalog(this.mcp, env, server)
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
    const connections = this.mcp.connections
    return [
      {
        inputSchema: schema,
        extraLabels: ['mcp'],
        ...(hint ? { searchHint: hint } : {}),
        async invoke(params, ctx) {
          let scrubber = new SecretScrubber()
          try {
            const { result, scrubber: s } = await connections.call(ref, toolName, params, ctx.signal)
            scrubber = s
            return outcomeOf(server, toolName, result, scrubber)
          } catch (e) {
            return failureOf(server, toolName, e, scrubber)
          }
        },
      },
    ]
  }
}
