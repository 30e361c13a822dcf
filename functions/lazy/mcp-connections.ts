/** The lazily loaded code of lib/mcp/connections.ts; its import of ./shared is explained there. */
import './shared'

export * from '../../lib/mcp/connections'
