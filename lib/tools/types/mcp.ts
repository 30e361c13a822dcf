/**
 * `mcp` (spec §3): one tool of a server-side MCP server, `{ server, toolName }`. The input schema
 * comes from the server's `tools/list` (cached per container); the configured description is
 * used (the document requires one), the remote one becomes the searchHint unless one is set.
 * An unreachable server leaves the tool out of listings with a `problems` entry.
 */

import type { ServerToolConfig } from '../../config/server-tool'
import type { McpRuntime } from '../../mcp'
import { MCP_SERVER_NAME_PATTERN } from '../../mcp/server-doc'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { LoadToolRuntimes } from './runtime-loader'

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
      toolName: { type: 'string', minLength: 1, maxLength: 128, description: "Name of the tool in the server's tools/list" },
    },
  }

  constructor(
    private readonly mcp: McpRuntime,
    private readonly load: LoadToolRuntimes,
  ) {}

  /** The catalog is read and the tools built in the runtime, loaded by the first expansion (lib/tools/types/runtime). */
  async create(config: ServerToolConfig<McpToolParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    return (await this.load()).mcpTool(this.mcp, config, env)
  }
}
