/**
 * The MCP endpoint's protocol half — the JSON-RPC server (lib/surface/mcp-server.ts, mcp-modern.ts) and the v2 SDK's
 * web-standard transport — loaded with the first MCP request; its import of ./shared is explained there.
 */
import './shared'

export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
export * from '../../lib/surface/mcp-modern'
export * from '../../lib/surface/mcp-server'
