/**
 * `mcp_server` (a pack): every tool of a server-side MCP server as `<pack>__<tool>`,
 * `{ server, include?, exclude? }` (`*`/`?` globs on the remote names, case-insensitive; exclude
 * applies after include). Labels = pack labels ∪ `mcp`, `mcp:<pack>`; searchHint = the remote
 * description cut to 80 characters; description = the remote description. The catalog is cached
 * per container (short TTL, refreshed on `notifications/tools/list_changed`); an unreachable
 * server leaves the pack out of listings with a `problems` entry, never failing the listing.
 */
import { type McpRuntime, remoteCatalog } from '../../mcp'
import { cut, failureOf, globMatcher, inputSchemaOf, localNameOf, outcomeOf, shortAlias } from '../../mcp/results'
import { MCP_SERVER_NAME_PATTERN } from '../../mcp/server-doc'
import { SecretScrubber } from '../../secrets/scrubber'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { ServerToolConfig } from '../../config/server-tool'

export interface McpServerParameters {
  server: string
  include?: string[]
  exclude?: string[]
}

const globList = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 500 }

export class McpServerToolFactory implements ToolFactory<McpServerParameters> {
  readonly typeId = 'mcp_server'
  readonly kind = 'pack' as const
  readonly dynamic = true
  readonly parametersSchema = {
    type: 'object',
    required: ['server'],
    additionalProperties: false,
    properties: {
      server: { type: 'string', pattern: MCP_SERVER_NAME_PATTERN, description: 'Name of the server document mcp-servers/<server>.yaml' },
      include: { ...globList, description: 'Remote tool names to offer (globs with * and ?); all when absent' },
      exclude: { ...globList, description: 'Remote tool names to leave out (globs), applied after include' },
    },
  }

  constructor(private readonly mcp: McpRuntime) {}

  async create(config: ServerToolConfig<McpServerParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const { server, include, exclude } = config.parameters
    const catalog = await remoteCatalog(this.mcp, env, server)
    if (!catalog) return []
    const { ref, tools: remote } = catalog
    const included = include?.length ? globMatcher(include) : () => true
    const excluded = exclude?.length ? globMatcher(exclude) : () => false
    const connections = this.mcp.connections
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
        async invoke(params, ctx) {
          let scrubber = new SecretScrubber()
          try {
            const { result, scrubber: s } = await connections.call(ref, remoteName, params, ctx.signal)
            scrubber = s
            return outcomeOf(server, remoteName, result, scrubber)
          } catch (e) {
            return failureOf(server, remoteName, e, scrubber)
          }
        },
      })
    }
    return specs
  }
}
