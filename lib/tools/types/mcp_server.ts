/**
 * `mcp_server` (a pack): every tool of a server-side MCP server as `<pack>__<tool>`,
 * `{ server, include?, exclude? }` (`*`/`?` globs on the remote names, case-insensitive; exclude
 * applies after include). Labels = pack labels ∪ `mcp`, `mcp:<pack>`; searchHint = the remote
 * description cut to 80 characters; description = the remote description. The catalog is cached
 * per container (short TTL, refreshed on `notifications/tools/list_changed`); an unreachable
 * server leaves the pack out of listings with a `problems` entry, never failing the listing.
 */

import type { ServerToolConfig } from '../../config/server-tool'
import type { McpRuntime } from '../../mcp'
import { MCP_SERVER_NAME_PATTERN } from '../../mcp/server-doc'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { LoadToolRuntimes } from './runtime-loader'

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

  constructor(
    private readonly mcp: McpRuntime,
    private readonly load: LoadToolRuntimes,
  ) {}

  /** The catalog is read and the tools built in the runtime, loaded by the first expansion (lib/tools/types/runtime). */
  async create(config: ServerToolConfig<McpServerParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    return (await this.load()).mcpServerTools(this.mcp, config, env)
  }
}
