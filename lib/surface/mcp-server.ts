/**
 * A process's surface as an MCP server (the protocol half; functions/http/routes/mcp.ts is the
 * HTTP half), on the v2 SDK (`@modelcontextprotocol/server`). Built per request: nothing lives
 * between requests — the process record is the session (2025-era) or the state a stateless
 * 2026-07-28 client's requests share (lib/surface/mcp-modern.ts) — so any container can answer any
 * request.
 *
 * The handlers check params themselves, so a malformed request is `-32602 Invalid params` (the
 * SDK answers a schema failure with `-32603 Internal error`, v2 as v1 did).
 */
import {
  type CallToolResult,
  createMcpHandler,
  type McpHttpHandler,
  ProtocolError,
  ProtocolErrorCode,
  Server,
} from '@modelcontextprotocol/server'
import type { ToolOutcome } from '../calls/outcome'
import { jsonBytes, WORK_BUDGETS } from '../config/expansion-budget'
import { JsonAsText } from '../config/json-render'
import { compile } from '../config/json-schema'
import type { ProcessSurface } from './surface'

/** The stateless revision: per-request `_meta`, no initialize, no session (lib/surface/mcp-modern.ts). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28'
/** The handshake revisions served, newest first; an initialize asking for another one is answered with the newest. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const
/** Every revision served, newest first (what an unsupported-version error lists). */
export const SERVED_PROTOCOL_VERSIONS = [MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS] as const
/** What a request without `MCP-Protocol-Version` speaks (the transport spec's rule). */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26'

export const isServedVersion = (v: string) => (SERVED_PROTOCOL_VERSIONS as readonly string[]).includes(v)
const isLegacyVersion = (v: string) => (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(v)

export interface McpServerInfo {
  name: string
  version: string
}

export { isInitializeRequest } from '@modelcontextprotocol/server'

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
const validator: NonNullable<ConstructorParameters<typeof Server>[1]>['jsonSchemaValidator'] & object = {
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

/**
 * A JSON-RPC error whose message is ours alone: v1 SDK's McpError prefixed "MCP error <code>: ",
 * and a client SDK prefixes it again when it raises the error ("MCP error -32602: MCP error -32602: …").
 */
export function protocolError(code: number, message: string, data?: unknown): ProtocolError {
  const e = new ProtocolError(code, message, data)
  e.message = message
  return e
}
const invalidParams = (message: string) => protocolError(ProtocolErrorCode.InvalidParams, message)
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * The SDK's low-level Server for one 2025-era request. `initialize` is answered by the SDK from
 * `instructions` (computed by the caller only for a body holding one) after our own check of its
 * params (initializeParamsError); tools/* reach answerToolsRequest as the fallback handler.
 */
export function mcpServer(info: McpServerInfo, session: McpSession, instructions?: string): Server {
  const server = new Server(info, {
    capabilities: { tools: { listChanged: true } },
    jsonSchemaValidator: validator,
    // the SDK answers an initialize asking for another revision with the first one listed
    supportedProtocolVersions: [...LEGACY_PROTOCOL_VERSIONS],
    ...(instructions !== undefined ? { instructions } : {}),
  })
  server.fallbackRequestHandler = async (request) => answerToolsRequest(request.method, request.params, session)
  return server
}

let modernLeg: McpHttpHandler | undefined
/**
 * The SDK's 2026-07-28 serving for the methods this server does not answer itself (everything but
 * MODERN_METHODS in lib/surface/mcp-modern.ts): it answers them as the revision says (unknown
 * method: 404 `-32601`). One per container: it holds no state of ours, only its event bus.
 */
export function sdkModernLeg(info: McpServerInfo): McpHttpHandler {
  modernLeg ??= createMcpHandler(
    () =>
      new Server(info, {
        capabilities: { tools: {} },
        jsonSchemaValidator: validator,
        supportedProtocolVersions: [MODERN_PROTOCOL_VERSION],
      }),
    { legacy: 'reject' },
  )
  return modernLeg
}

/**
 * Why an initialize's params are malformed, or undefined: checked here because the SDK answers a
 * schema failure with -32603 (an internal error) where the client sent bad params.
 */
export function initializeParamsError(message: unknown): ProtocolError | undefined {
  const params = (message as { params?: unknown }).params
  const bad = (why: string) => invalidParams(`Invalid initialize params: ${why}`)
  if (!isObject(params)) return bad('params must be an object')
  if (typeof params.protocolVersion !== 'string') return bad('protocolVersion must be a string')
  if (!isObject(params.capabilities)) return bad('capabilities must be an object')
  const info = params.clientInfo
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
    return bad('clientInfo must be an object with a string name and version')
  return undefined
}

/** The revision an initialize is answered with (the SDK's choice, stated here for the HTTP layer's checks). */
export const negotiatedVersion = (requested: string) => (isLegacyVersion(requested) ? requested : LEGACY_PROTOCOL_VERSIONS[0])

export const TOOLS_METHODS = ['tools/list', 'tools/call']

/**
 * tools/list and tools/call, checked by hand (no zod on the hot path; the SDK would answer a
 * schema failure with -32603). The SDK Server reaches it as its fallback handler; the HTTP layer
 * calls it directly for a lone, well-formed request (measured: the SDK's transport and
 * per-request dispatch cost more than the work itself), so both answer alike.
 */
export async function answerToolsRequest(
  method: string,
  rawParams: unknown,
  session: McpSession,
  result: typeof textResult = textResult,
): Promise<Record<string, unknown>> {
  const need = (): ProcessSurface => {
    if (!session.surface) throw protocolError(ProtocolErrorCode.InvalidRequest, 'No MCP session: send initialize first')
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
        return result(true, {
          message: `Tool '${name}' is one of your own client tools: run it yourself; this server only lists and runs its own tools.`,
        })
      }
      const { outcome, changed } = await surface.callChangingTools(() => session.call(name, args ?? {}))
      if (changed) session.toolsChanged()
      const structured = !outcome.isError && isObject(outcome.content) && (await repeatsStructured(surface, name, outcome.content))
      return result(outcome.isError, outcome.content, structured)
    }
    default:
      throw protocolError(ProtocolErrorCode.MethodNotFound, 'Method not found')
  }
}

/**
 * A tools/call's result as a value for a streamed JSON answer (functions/http `jsonBody`): its
 * JSON is exactly answerToolsRequest's, but the text block is a JsonAsText of the content, so a
 * 1 MiB tool_description is rendered from the tools' kept bytes in slices instead of stringified
 * twice in one stretch (issue 21 D2 through MCP). The SDK's path keeps textResult (it checks
 * that a text block is a string).
 */
export function answerToolsCall(rawParams: unknown, session: McpSession): Promise<Record<string, unknown>> {
  return answerToolsRequest('tools/call', rawParams, session, streamedResult)
}

function streamedResult(isError: boolean, content: unknown, structured = true): CallToolResult & Record<string, unknown> {
  if (isError || !isObject(content)) return textResult(isError, content, structured)
  return {
    content: [{ type: 'text', text: new JsonAsText(content) as unknown as string }],
    ...(structured ? { structuredContent: content } : {}),
    isError: false,
  }
}

/** How large an object result may render and still be repeated as `structuredContent` by a tool that declares no outputSchema. */
export const STRUCTURED_COPY_BYTES = WORK_BUDGETS.jsonRenderSlice.limit

/**
 * Whether an object result is repeated as `structuredContent` beside its text block: always when
 * the tool declares an outputSchema (the spec requires structured results then), otherwise while
 * it renders within one slice. The text block is what every client reads (and what the spec asks
 * for); repeating a 1 MiB tool_description as structuredContent doubled the bytes rendered,
 * written and parsed by both ends (issue 21 D2 through MCP: 2.1 MB against REST's 1.05 MB).
 */
async function repeatsStructured(surface: ProcessSurface, name: string, content: object): Promise<boolean> {
  if (jsonBytes(content, STRUCTURED_COPY_BYTES) <= STRUCTURED_COPY_BYTES) return true
  return (await surface.visible()).byName.get(name)?.outputSchema !== undefined
}

/** answerToolsRequest's result as JSON text; a tools/list is the surface's cached text, never rebuilt per request. */
export async function answerToolsRequestJson(method: string, rawParams: unknown, session: McpSession): Promise<string> {
  if (method !== 'tools/list') return JSON.stringify(await answerToolsRequest(method, rawParams, session))
  if (rawParams !== undefined && !isObject(rawParams)) throw invalidParams('Invalid tools/list params: params must be an object')
  if (!session.surface) throw protocolError(ProtocolErrorCode.InvalidRequest, 'No MCP session: send initialize first')
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

/** A JSON-RPC error response for what answerToolsRequest threw (a ProtocolError; anything else is internal). */
export function errorResponse(id: string | number, e: unknown): Record<string, unknown> {
  const code = e instanceof ProtocolError ? e.code : ProtocolErrorCode.InternalError
  // as the SDK's path answers it, without the SDK's "MCP error <code>: " prefix (clients add their own)
  const message = (e instanceof Error ? e.message : String(e)).replace(/^MCP error -?\d+: /, '')
  return { jsonrpc: '2.0', id, error: { code, message, ...(e instanceof ProtocolError && e.data !== undefined ? { data: e.data } : {}) } }
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
 * fields follow as JSON); an object result is also `structuredContent` (what `outputSchema`
 * describes) unless `structured` is false (repeatsStructured).
 */
export function textResult(isError: boolean, content: unknown, structured = true): CallToolResult & Record<string, unknown> {
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
  return {
    content: [{ type: 'text', text }],
    ...(structured && isObject(content) ? { structuredContent: content } : {}),
    isError: false,
  }
}
