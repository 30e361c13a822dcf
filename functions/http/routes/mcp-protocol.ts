/** The MCP protocol code (lib/surface/mcp-server.ts), loaded with the first MCP request; see ../lazy-shared.ts. */
import '../lazy-shared'

export * from '../../../lib/surface/mcp-server'
