/**
 * The MCP endpoint's protocol half — the JSON-RPC server (lib/surface/mcp-server.ts) and the SDK's
 * web-standard transport — loaded with the first MCP request; its import of ./shared is explained there.
 */
import './shared'

export { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
export * from '../../lib/surface/mcp-server'
