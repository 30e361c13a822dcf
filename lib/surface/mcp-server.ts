/**
 * A process's surface as an MCP server (the protocol half; functions/http/routes/mcp.ts is the
 * HTTP half). Built per request on the SDK's low-level `Server`: nothing lives between requests —
 * the process record is the session — so any container can answer any request.
 *
 * The handlers take loose request shapes and check params themselves, so a malformed request is
 * `-32602 Invalid params` (the SDK would answer a schema failure with `-32603 Internal error`).
 * A stateless revision (no initialize, `server/discover`, per-request `_meta`) adds a handler and
 * a version here; nothing below depends on a handshake having happened.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { type CallToolResult, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { compile } from '../config/json-schema'
import type { ToolOutcome } from '../calls/outcome'
import { mcpToolObject } from './formats'
import type { ProcessSurface } from './surface'

/** The revisions served, newest first; a client asking for another one is answered with the newest. */
export const SERVED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const
/** What a request without `MCP-Protocol-Version` speaks (the transport spec's rule). */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26'

export const isServedVersion = (v: string) => (SERVED_PROTOCOL_VERSIONS as readonly string[]).includes(v)

export interface McpServerInfo {
  name: string
  version: string
}

export { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'

export interface McpSession {
  /** Absent only while a session-less request that is not a well-formed initialize is answered with an error. */
  surface?: ProcessSurface
  /** A tool call through the process's gate, exactly like `POST …/tool-calls`. */
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>
}

/** ajv from lib/config (compiled once per schema) instead of a new Ajv per Server, which the SDK's default would build. */
const validator: jsonSchemaValidator = {
  getValidator<T>(schema: object) {
    return (input: unknown) => {
      const fn = compile(schema as Record<string, unknown>)
      return fn(input) ? { valid: true as const, data: input as T, errorMessage: undefined } : { valid: false as const, data: undefined, errorMessage: (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ') }
    }
  },
}

const loose = (method: string) => z.object({ method: z.literal(method), params: z.unknown().optional() }).passthrough()
const INITIALIZE = loose('initialize')
const LIST_TOOLS = loose('tools/list')
const CALL_TOOL = loose('tools/call')

const invalidParams = (method: string, error: { message: string }) => new McpError(ErrorCode.InvalidParams, `Invalid ${method} params: ${error.message}`)

export function mcpServer(info: McpServerInfo, session: McpSession): Server {
  const need = (): ProcessSurface => {
    if (!session.surface) throw new McpError(ErrorCode.InvalidRequest, 'No MCP session: send initialize first')
    return session.surface
  }
  const server = new Server(info, { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: validator })
  server.removeRequestHandler('initialize')
  server.setRequestHandler(INITIALIZE, async (request) => {
    const parsed = InitializeRequestSchema.safeParse(request)
    if (!parsed.success) throw invalidParams('initialize', parsed.error)
    const requested = parsed.data.params.protocolVersion
    return {
      protocolVersion: isServedVersion(requested) ? requested : SERVED_PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: true } },
      serverInfo: info,
      instructions: await instructionsOf(need()),
    }
  })
  server.setRequestHandler(LIST_TOOLS, async (request) => {
    const parsed = ListToolsRequestSchema.safeParse(request)
    if (!parsed.success) throw invalidParams('tools/list', parsed.error)
    // One page: the list is budget-fitted, so it is never long; a cursor can only be made up.
    if (parsed.data.params?.cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/list params: unknown cursor (the tool list has one page)')
    return { tools: (await need().serverTools()).map(mcpToolObject) } as { tools: [] }
  })
  // The SDK checks tools/call params itself (CallToolRequestSchema → -32602) and the result's shape.
  server.setRequestHandler(CALL_TOOL, async (request, extra) => {
    const { name, arguments: args } = request.params as { name: string; arguments?: Record<string, unknown> }
    const surface = need()
    if (await surface.isClientToolName(name)) {
      return textResult(true, { message: `Tool '${name}' is one of your own client tools: run it yourself; this server only lists and runs its own tools.` })
    }
    const { outcome, changed } = await surface.callChangingTools(() => session.call(name, args ?? {}))
    // On the request's own stream, before the result: the client re-lists before its next turn.
    if (changed) await extra.sendNotification({ method: 'notifications/tools/list_changed' })
    return textResult(outcome.isError, outcome.content)
  })
  return server
}

/** `initialize.instructions`: the system-prompt material of spec §13. */
export async function instructionsOf(surface: ProcessSurface): Promise<string> {
  const m = await surface.promptMaterial()
  const parts = [m.discoveryBlock.trim(), m.demotedDiscoveryBlock.trim()]
  if (m.promptHints.length) parts.push(['## Notes on your tools', '', ...m.promptHints.map((h) => `- ${h}`)].join('\n'))
  return parts.filter(Boolean).join('\n\n')
}

/**
 * A tool outcome as an MCP result: failures keep the model-actionable message as the text (other
 * fields follow as JSON); an object result is also `structuredContent` (what `outputSchema` describes).
 */
export function textResult(isError: boolean, content: unknown): CallToolResult {
  if (isError) {
    const { message, ...rest } = (content && typeof content === 'object' ? content : { message: String(content) }) as { message?: unknown; [k: string]: unknown }
    const blocks: CallToolResult['content'] = [{ type: 'text', text: typeof message === 'string' ? message : JSON.stringify(content) }]
    if (Object.keys(rest).length) blocks.push({ type: 'text', text: JSON.stringify(rest) })
    return { content: blocks, isError: true }
  }
  const text = typeof content === 'string' ? content : (JSON.stringify(content) ?? 'null')
  const structured = content !== null && typeof content === 'object' && !Array.isArray(content)
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: content as Record<string, unknown> } : {}), isError: false }
}
