/**
 * A process's surface as an MCP server (the protocol half; functions/http/routes/mcp.ts is the
 * HTTP half). Built per request on the SDK's low-level `Server`: nothing lives between requests —
 * the process record is the session — so any container can answer any request.
 *
 * The handlers check params themselves, so a malformed request is `-32602 Invalid params` (the
 * SDK would answer a schema failure with `-32603 Internal error`).
 * A stateless revision (no initialize, `server/discover`, per-request `_meta`) adds a handler and
 * a version here; nothing below depends on a handshake having happened.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { type CallToolResult, ErrorCode, InitializeRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import { z } from 'zod'
import type { ToolOutcome } from '../calls/outcome'
import { compile } from '../config/json-schema'
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
  /**
   * A tools/call changed the tool list: the HTTP layer puts notifications/tools/list_changed
   * before the response (on an event stream), so the client re-lists before its next turn.
   */
  toolsChanged(): void
}

/** ajv from lib/config (compiled once per schema) instead of a new Ajv per Server, which the SDK's default would build. */
const validator: jsonSchemaValidator = {
  getValidator<T>(schema: object) {
    return (input: unknown) => {
      const fn = compile(schema as Record<string, unknown>)
      return fn(input)
        ? { valid: true as const, data: input as T, errorMessage: undefined }
        : {
            valid: false as const,
            data: undefined,
            errorMessage: (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; '),
          }
    }
  },
}

const INITIALIZE = z.object({ method: z.literal('initialize'), params: z.unknown().optional() }).passthrough()

/**
 * A JSON-RPC error whose message is ours alone: the SDK's McpError prefixes "MCP error <code>: ",
 * and a client SDK prefixes it again when it raises the error ("MCP error -32602: MCP error -32602: …").
 */
export function protocolError(code: number, message: string, data?: unknown): McpError {
  const e = new McpError(code, message, data)
  e.message = message
  return e
}
const invalidParams = (message: string) => protocolError(ErrorCode.InvalidParams, message)
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

export function mcpServer(info: McpServerInfo, session: McpSession): Server {
  const need = (): ProcessSurface => {
    if (!session.surface) throw protocolError(ErrorCode.InvalidRequest, 'No MCP session: send initialize first')
    return session.surface
  }
  const server = new Server(info, { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: validator })
  // A loose shape, checked here: the SDK answers its own schema failures with -32603.
  server.removeRequestHandler('initialize')
  server.setRequestHandler(INITIALIZE, async (request) => {
    const parsed = InitializeRequestSchema.safeParse(request)
    if (!parsed.success) throw invalidParams(`Invalid initialize params: ${parsed.error.message}`)
    const requested = parsed.data.params.protocolVersion
    return {
      protocolVersion: isServedVersion(requested) ? requested : SERVED_PROTOCOL_VERSIONS[0],
      capabilities: { tools: { listChanged: true } },
      serverInfo: info,
      instructions: await instructionsOf(need()),
    }
  })
  // tools/list and tools/call: the same answers as the HTTP layer's direct path (answerToolsRequest).
  server.fallbackRequestHandler = async (request) => answerToolsRequest(request.method, request.params, session)
  return server
}

export const TOOLS_METHODS = ['tools/list', 'tools/call']

/**
 * tools/list and tools/call, checked by hand (no zod on the hot path; the SDK would answer a
 * schema failure with -32603). The SDK Server reaches it as its fallback handler; the HTTP layer
 * calls it directly for a lone, well-formed request (measured: the SDK's transport and
 * per-request dispatch cost more than the work itself), so both answer alike.
 */
export async function answerToolsRequest(method: string, rawParams: unknown, session: McpSession): Promise<Record<string, unknown>> {
  const need = (): ProcessSurface => {
    if (!session.surface) throw protocolError(ErrorCode.InvalidRequest, 'No MCP session: send initialize first')
    return session.surface
  }
  if (rawParams !== undefined && !isObject(rawParams)) throw invalidParams(`Invalid ${method} params: params must be an object`)
  const params = rawParams ?? {}
  switch (method) {
    case 'tools/list':
      return JSON.parse(await listToolsJson(params, need())) as Record<string, unknown>
    case 'tools/call': {
      const { name, arguments: args } = params as { name?: unknown; arguments?: unknown }
      if (typeof name !== 'string' || !name) throw invalidParams('Invalid tools/call params: name must be a non-empty string')
      if (args !== undefined && !isObject(args)) throw invalidParams('Invalid tools/call params: arguments must be an object')
      const surface = need()
      if (await surface.isClientToolName(name)) {
        return textResult(true, {
          message: `Tool '${name}' is one of your own client tools: run it yourself; this server only lists and runs its own tools.`,
        })
      }
      const { outcome, changed } = await surface.callChangingTools(() => session.call(name, args ?? {}))
      if (changed) session.toolsChanged()
      return textResult(outcome.isError, outcome.content)
    }
    default:
      throw protocolError(ErrorCode.MethodNotFound, 'Method not found')
  }
}

/** answerToolsRequest's result as JSON text; a tools/list is the surface's cached text, never rebuilt per request. */
export async function answerToolsRequestJson(method: string, rawParams: unknown, session: McpSession): Promise<string> {
  if (method !== 'tools/list') return JSON.stringify(await answerToolsRequest(method, rawParams, session))
  if (rawParams !== undefined && !isObject(rawParams)) throw invalidParams('Invalid tools/list params: params must be an object')
  if (!session.surface) throw protocolError(ErrorCode.InvalidRequest, 'No MCP session: send initialize first')
  return listToolsJson(rawParams ?? {}, session.surface)
}

async function listToolsJson(params: Record<string, unknown>, surface: ProcessSurface): Promise<string> {
  // One page: the list is budget-fitted, so it is never long; a cursor can only be made up.
  if (params.cursor !== undefined)
    throw invalidParams(
      `Invalid tools/list params: ${typeof params.cursor === 'string' ? 'unknown cursor (the tool list has one page)' : 'cursor must be a string'}`,
    )
  return `{"tools":${await surface.serverToolsJson()}}`
}

/** A JSON-RPC error response for what answerToolsRequest threw (an McpError; anything else is internal). */
export function errorResponse(id: string | number, e: unknown): Record<string, unknown> {
  const code = e instanceof McpError ? e.code : ErrorCode.InternalError
  // as the SDK's path answers it, without the SDK's "MCP error <code>: " prefix (clients add their own)
  const message = (e instanceof Error ? e.message : String(e)).replace(/^MCP error -?\d+: /, '')
  return { jsonrpc: '2.0', id, error: { code, message, ...(e instanceof McpError && e.data !== undefined ? { data: e.data } : {}) } }
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
export function textResult(isError: boolean, content: unknown): CallToolResult & Record<string, unknown> {
  if (isError) {
    const { message, ...rest } = (content && typeof content === 'object' ? content : { message: String(content) }) as {
      message?: unknown
      [k: string]: unknown
    }
    const blocks: CallToolResult['content'] = [{ type: 'text', text: typeof message === 'string' ? message : JSON.stringify(content) }]
    if (Object.keys(rest).length) blocks.push({ type: 'text', text: JSON.stringify(rest) })
    return { content: blocks, isError: true }
  }
  const text = typeof content === 'string' ? content : (JSON.stringify(content) ?? 'null')
  const structured = content !== null && typeof content === 'object' && !Array.isArray(content)
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: content as Record<string, unknown> } : {}),
    isError: false,
  }
}
