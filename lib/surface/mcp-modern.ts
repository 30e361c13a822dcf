/**
 * MCP 2026-07-28, the stateless revision: no `initialize`, no session; every request carries its
 * revision, client info and capabilities in `params._meta` and mirrors the revision, the method
 * and (for tools/call) the tool name into headers. This module is the protocol half of that path:
 * telling a modern request from a 2025-era one, the header–body checks the revision requires,
 * and the answers to `server/discover`, `tools/list`, `tools/call` and `subscriptions/listen`.
 * functions/http/routes/mcp.ts finds the process the request works on.
 *
 * Our own checks, not the SDK's (`createMcpHandler`): the SDK's modern leg builds a Server and a
 * per-request transport for every request and answers through zod-parsed messages; the fast path
 * answers a lone request directly, like the 2025-era one. The SDK serves what is left (methods we
 * do not implement, which it answers per the revision).
 */
import { sha256 } from '../runtime/hash'
import {
  answerToolsCall,
  answerToolsRequestJson,
  errorResponse,
  instructionsOf,
  type McpServerInfo,
  type McpSession,
  MODERN_PROTOCOL_VERSION,
  SERVED_PROTOCOL_VERSIONS,
} from './mcp-server'

export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion'
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo'
/** JSON-RPC codes the revision defines. */
export const HEADER_MISMATCH = -32020
export const UNSUPPORTED_PROTOCOL_VERSION = -32022
/** The methods this server answers itself on the modern path; anything else goes to the SDK. */
export const MODERN_METHODS = ['server/discover', 'tools/list', 'tools/call', 'subscriptions/listen']
/** Methods that need a process (the others answer without one). */
export const PROCESS_METHODS = ['server/discover', 'tools/list', 'tools/call']

type Header = (name: string) => string | undefined
interface Message {
  jsonrpc?: unknown
  id?: unknown
  method?: unknown
  params?: unknown
}
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The revision a body's `_meta` names, or undefined (a 2025-era message names none). */
export function metaVersion(message: unknown): unknown {
  const params = isObject(message) ? message.params : undefined
  const meta = isObject(params) ? params._meta : undefined
  return isObject(meta) ? meta[PROTOCOL_VERSION_META] : undefined
}

/**
 * Whether a request speaks the stateless revision (or a later one): a body whose `_meta` names a
 * revision, or an `MCP-Protocol-Version` header from 2026-07-28 on (dates compare as strings).
 * Such a request gets the revision's answers, its errors included, and never a 2025-era one.
 */
export function isModernRequest(header: Header, message: unknown): boolean {
  if (metaVersion(message) !== undefined) return true
  const v = header('mcp-protocol-version')
  return v !== undefined && v >= MODERN_PROTOCOL_VERSION
}

/** An HTTP answer: status and JSON-RPC body. */
export interface ModernAnswer {
  status: number
  body: string
  contentType?: string
  /** Where present, the body as a value to render (in slices when long) instead of `body`. */
  json?: unknown
}

const rpcError = (status: number, id: unknown, code: number, message: string, data?: unknown): ModernAnswer => ({
  status,
  body: JSON.stringify({
    jsonrpc: '2.0',
    ...(typeof id === 'string' || typeof id === 'number' ? { id } : {}),
    error: { code, message, ...(data !== undefined ? { data } : {}) },
  }),
})

/** Decodes the revision's `=?base64?…?=` sentinel form of a header value. */
function headerValue(raw: string): string | undefined {
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(raw)
  if (!m) return raw
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(m[1], 'base64'))
  } catch {
    return undefined
  }
}

/**
 * The revision's rules for a request, in its order: a well-formed request; `MCP-Protocol-Version`
 * present and equal to `_meta`'s revision, `Mcp-Method` equal to the method, `Mcp-Name` equal to a
 * tools/call's tool name (400 `-32020` HeaderMismatch otherwise); a revision we serve (400 `-32022`
 * naming the ones we do). undefined = the request may be answered.
 */
export function modernRequestError(header: Header, message: unknown): ModernAnswer | undefined {
  const m = (isObject(message) ? message : {}) as Message
  const id = m.id
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string')
    return rpcError(400, id, -32600, 'Invalid Request: not a JSON-RPC 2.0 request or notification')
  if (id !== undefined && !((typeof id === 'string' && id) || (typeof id === 'number' && Number.isFinite(id))))
    return rpcError(400, undefined, -32600, 'Invalid Request: the id must be a non-empty string or a number')
  const version = metaVersion(message)
  const sent = header('mcp-protocol-version')
  const mismatch = (what: string) => rpcError(400, id, HEADER_MISMATCH, `Header mismatch: ${what}`)
  if (typeof version !== 'string')
    return mismatch(`MCP-Protocol-Version is '${(sent ?? '').slice(0, 40)}' but params._meta carries no '${PROTOCOL_VERSION_META}'`)
  if (sent === undefined) return mismatch('the MCP-Protocol-Version header is required')
  if (sent !== version)
    return mismatch(`MCP-Protocol-Version header value '${sent.slice(0, 40)}' does not match body value '${version.slice(0, 40)}'`)
  const method = header('mcp-method')
  if (method === undefined) return mismatch('the Mcp-Method header is required')
  if (method !== m.method)
    return mismatch(`Mcp-Method header value '${method.slice(0, 80)}' does not match body value '${m.method.slice(0, 80)}'`)
  if (m.method === 'tools/call') {
    const raw = header('mcp-name')
    const name = isObject(m.params) ? m.params.name : undefined
    if (raw === undefined) return mismatch('the Mcp-Name header is required for tools/call')
    const decoded = headerValue(raw)
    if (decoded === undefined) return mismatch('the Mcp-Name header is not valid base64 UTF-8')
    if (decoded !== name)
      return mismatch(`Mcp-Name header value '${decoded.slice(0, 80)}' does not match body value '${String(name).slice(0, 80)}'`)
  }
  if (version !== MODERN_PROTOCOL_VERSION)
    return rpcError(400, id, UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', {
      supported: [...SERVED_PROTOCOL_VERSIONS],
      requested: version,
    })
  return undefined
}

/**
 * The answer to a well-formed request for one of PROCESS_METHODS on `session`'s process (or a
 * JSON-RPC error for its params). Cache hints: `ttlMs: 0` and `cacheScope: private` on the
 * discovery and the list — both change when a call activates a tool, and both are the caller's own.
 */
export async function answerModern(message: Message, session: McpSession, info: McpServerInfo): Promise<ModernAnswer> {
  const id = message.id as string | number
  const method = message.method as string
  const meta = `"_meta":{"${SERVER_INFO_META}":${JSON.stringify(info)}}`
  try {
    if (method === 'server/discover') {
      const result = {
        resultType: 'complete',
        supportedVersions: [MODERN_PROTOCOL_VERSION],
        capabilities: { tools: {} },
        instructions: await instructionsOf(session.surface!),
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { [SERVER_INFO_META]: info },
      }
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id, result }) }
    }
    const params = isObject(message.params) ? withoutMeta(message.params) : message.params
    if (method === 'tools/call') {
      // a value the route streams in slices (a result may be megabytes): the same bytes as the text below would be
      const result = await answerToolsCall(params, session)
      return { status: 200, body: '', json: { jsonrpc: '2.0', id, result: { resultType: 'complete', ...result } } }
    }
    const json = await answerToolsRequestJson(method, params, session)
    // every result of this revision names its type; list and discovery say how long they stay fresh
    const extra = method === 'tools/list' ? `"resultType":"complete","ttlMs":0,"cacheScope":"private",${meta}` : `"resultType":"complete"`
    return { status: 200, body: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{${extra},${json.slice(1)}}` }
  } catch (e) {
    return { status: 200, body: JSON.stringify(errorResponse(id, e)) }
  }
}

/** params without `_meta` (the tools handlers check params and know nothing of it). */
function withoutMeta(params: Record<string, unknown>): Record<string, unknown> {
  if (!('_meta' in params)) return params
  const { _meta, ...rest } = params
  return rest
}

/**
 * `subscriptions/listen`: this server declares no `listChanged` on this revision (a Lambda holds
 * no stream open between requests, and the tool list changes in whichever container answers the
 * call that changed it), so it honours no notification type. It acknowledges with an empty filter
 * and closes the subscription gracefully at once, as the revision lets a server end one.
 */
export function listenAnswer(id: string | number): ModernAnswer {
  const sub = { 'io.modelcontextprotocol/subscriptionId': id }
  const events = [
    { jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { _meta: sub, notifications: {} } },
    { jsonrpc: '2.0', id, result: { resultType: 'complete', _meta: sub } },
  ]
  return {
    status: 200,
    contentType: 'text/event-stream',
    body: events.map((e) => `event: message\ndata: ${JSON.stringify(e)}\n\n`).join(''),
  }
}

/**
 * The process a stateless client works on at the project URL: derived from who asks (tenant,
 * project, token subject) and for what (the spawn the URL's query describes: recipe, model,
 * reserve, allowedTools), so every request of one client — in any container — names the same
 * process, and its discovery and activations persist without a session id. A digest: ids stay
 * short and well-formed whatever the query holds; the subject is in it, so two subjects never
 * share one (and ProcessService.get refuses another subject's process anyway).
 */
export function statelessProcessId(tenant: string, project: string, subject: string, spawn: Record<string, unknown>): string {
  const canonical = Object.keys(spawn)
    .sort()
    .map((k) => [k, spawn[k]])
  return `mcp-${sha256(JSON.stringify([tenant, project, subject, canonical])).slice(0, 40)}`
}
