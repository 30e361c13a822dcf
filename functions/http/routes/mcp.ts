/**
 * MCP over Streamable HTTP: `/projects/{p}/mcp` and `/projects/{p}/processes/{id}/mcp`.
 * - 2025-era (03-26, 06-18, 11-25): on the project URL initialize spawns a process and its id is
 *   the `Mcp-Session-Id`; on the process URL the process in the path is the session.
 * - 2026-07-28 (stateless, per-request `_meta`): no session; the process URL names the process,
 *   and on the project URL every request resolves the same process from (tenant, project, token
 *   subject, the query's spawn) — statelessProcessId — created on first use, idle-expiring.
 * No session state in memory: every request loads the process, so any container (any Lambda)
 * answers any request.
 *
 * This half does HTTP: the body, the session, the protocol-version header, the scopes; the v2 SDK
 * (`@modelcontextprotocol/server`: its web-standard transport for the 2025 era, `createMcpHandler`
 * for the 2026 methods we do not answer) and lib/surface/mcp-server.ts / mcp-modern.ts do JSON-RPC.
 * The SDK is loaded with the first MCP request (AppDeps.modules), never at cold start.
 */
import type { Context } from 'hono'
import { CHUNK_CHARS, parseJsonInSlices } from '../../../lib/config/json-slices'
import { jsonTooDeep, MAX_NESTING_DEPTH } from '../../../lib/config/nesting'
import { ServerToolsError } from '../../../lib/errors'
import type { ProcessKey } from '../../../lib/recipes/ports'
import type { CallSignal } from '../../../lib/runtime/deferred-signal'
import type { ProcessSurface } from '../../../lib/surface/surface'
import type { AppDeps, McpProtocol } from '../app-deps'
import type { AuthEnv } from '../auth'
import { assertScope, principalOf } from '../auth'
import { headerOf } from '../headers'
import { Hono } from '../hono'
import { jsonBody } from '../json-answer'
import { projectParam, rawBody, requestSignal, tenantParam } from '../request'

const SERVER_INFO = { name: 'server-tools', version: '0.1.0' }
/** A JSON-RPC body is at most this large (a tools/call's arguments included). */
const MAX_MCP_BODY_BYTES = 1024 * 1024
/** Stateless between calls (never asked to `stream`), so one decoder serves every request. */
const UTF8 = new TextDecoder('utf-8', { fatal: true })
const UTF8_OUT = new TextEncoder()

/**
 * JSON-RPC batches: removed from MCP in 2025-06-18, so only a 2025-03-26 conversation may send
 * one, and then at most this many messages (each goes through the SDK's slower path: a batch of
 * 100 tools/list made every other tenant wait).
 */
const MAX_BATCH_MESSAGES = 10
const FIRST_VERSION_WITHOUT_BATCHES = '2025-06-18'

/** A JSON-RPC error answered by this layer (no request id: it never reached the protocol). */
function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}) {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
}
const PROCESS_GONE = 'Process not found: it does not exist, has expired or was ended, or belongs to another subject'
/** A 2026-07-28 client's GET or DELETE: the revision has neither (no standalone stream, no session to end). */
const modernVersionHeader = (c: Context) => (headerOf(c, 'mcp-protocol-version') ?? '') >= '2026-07-28'
const modernNotAllowed = () =>
  rpcError(405, -32000, 'Method Not Allowed: MCP 2026-07-28 has no session to end and no standalone stream', { allow: 'POST' })
const modernResponse = (a: { status: number; body: string; contentType?: string; json?: unknown }) =>
  new Response(a.json !== undefined ? jsonBody(a.json) : a.body, {
    status: a.status,
    headers: { 'content-type': a.contentType ?? 'application/json', ...(a.contentType ? { 'cache-control': 'no-cache' } : {}) },
  })
const sessionNotFound = () =>
  rpcError(
    404,
    -32001,
    'Session not found: the process does not exist, has expired or was ended, or belongs to another subject; initialize a new session',
  )

interface JsonRpcMessage {
  method?: unknown
  id?: unknown
}

export function mcpRoutes(deps: AppDeps) {
  const loadProtocol = deps.modules.mcpProtocol
  /** The process behind a session, or undefined (absent, expired, ended, another subject's: all look the same). */
  async function openSession(c: Context<AuthEnv>, key: ProcessKey): Promise<ProcessSurface | undefined> {
    try {
      return await deps.surface.open({ ...key, subject: principalOf(c).subject })
    } catch (e) {
      if (e instanceof ServerToolsError && (e.code === 'NOT_FOUND' || e.code === 'INVALID_INPUT')) return undefined
      throw e
    }
  }

  /** `MCP-Protocol-Version`: absent = 2025-03-26 (transport spec); one we do not serve = 400. */
  async function versionError(c: Context): Promise<Response | undefined> {
    const v = headerOf(c, 'mcp-protocol-version')
    const { isServedVersion, SERVED_PROTOCOL_VERSIONS } = await loadProtocol()
    if (v === undefined || isServedVersion(v)) return undefined
    return rpcError(
      400,
      -32000,
      `Bad Request: unsupported MCP-Protocol-Version '${v.slice(0, 40)}' (this server speaks ${SERVED_PROTOCOL_VERSIONS.join(', ')})`,
    )
  }

  async function post(c: Context<AuthEnv>, pathId: string | undefined): Promise<Response> {
    const tenant = tenantParam(c)
    const project = projectParam(c)
    const bytes = await rawBody(c)
    if (bytes.byteLength > MAX_MCP_BODY_BYTES) return rpcError(413, -32000, `the request body may be at most ${MAX_MCP_BODY_BYTES} bytes`)
    let body: unknown
    let text: string
    try {
      text = UTF8.decode(bytes)
    } catch {
      return rpcError(400, -32700, 'Parse error: the body is not JSON')
    }
    const tooDeep = (message: string) =>
      rpcError(400, -32600, `Invalid Request: the body is nested deeper than ${MAX_NESTING_DEPTH} levels (${message})`)
    if (text.length > CHUNK_CHARS) {
      // As every other route's JSON body (objectBody): a tools/call of 530 KB was one JSON.parse of
      // it on the shared thread, 4-10 ms at once (issue 21 N8 through MCP); in slices, none is.
      const parsed = await parseJsonInSlices(text)
      if (!parsed.ok)
        return 'tooDeep' in parsed && parsed.tooDeep
          ? tooDeep(parsed.issue.message)
          : rpcError(400, -32700, 'Parse error: the body is not JSON')
      body = parsed.value
    } else {
      // The same linear scan every JSON body gets, before any parser: arguments reach validators and tools.
      const deep = jsonTooDeep(text)
      if (deep) return tooDeep(deep.message)
      try {
        body = JSON.parse(text)
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not JSON')
      }
    }
    const messages = (Array.isArray(body) ? body : [body]) as JsonRpcMessage[]
    if (Array.isArray(body)) {
      const refused = batchRefusal(c, messages)
      if (refused) return refused
    }
    const methods = messages.map((m) => (m && typeof m === 'object' ? m.method : undefined))
    const initializing = methods.includes('initialize')
    // Reading needs tools:read; calling a tool, or starting a session (it spawns a process), tools:invoke
    // (on 2026-07-28 too, where a tools/call may spawn the caller's process). Checked before anything loads.
    assertScope(c, initializing || methods.includes('tools/call') ? 'tools:invoke' : 'tools:read')
    const p = await loadProtocol()
    if (!Array.isArray(body) && p.isModernRequest((h) => headerOf(c, h), body)) return modernPost(c, pathId, body, p)

    if (!initializing) {
      const bad = await versionError(c)
      if (bad) return bad
    }
    const header = headerOf(c, 'mcp-session-id')
    let surface: ProcessSurface | undefined
    if (pathId !== undefined) {
      if (header !== undefined && header !== pathId) return sessionNotFound()
      surface = await openSession(c, { tenant, project, id: pathId })
      if (!surface) return sessionNotFound()
    } else if (initializing) {
      // Spawn only for a well-formed initialize alone in its body; anything else gets the protocol's own answer.
      const init = messages.length === 1 ? p.isInitializeRequest(messages[0]) : false
      // our own check of its params first: the SDK answers malformed ones with -32603, and no process is spawned for them
      const badInit = messages.length === 1 && messages[0]?.method === 'initialize' ? p.initializeParamsError(messages[0]) : undefined
      if (badInit) return Response.json(p.errorResponse(messages[0].id as string | number, badInit))
      if (init) {
        const { process } = await deps.processes.spawn(tenant, project, principalOf(c).subject, spawnQuery(c), { idle: true })
        surface = await deps.surface.open({ tenant, project, id: process.id, subject: principalOf(c).subject })
      }
    } else {
      if (header === undefined) return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first)')
      surface = await openSession(c, { tenant, project, id: header })
      if (!surface) return sessionNotFound()
    }

    let toolsChanged = false
    let signal: CallSignal | undefined
    const session = {
      ...(surface ? { surface } : {}),
      // the request's signal ends the call tree when the client goes away (as on the other call routes)
      call: (name: string, args: Record<string, unknown>) =>
        deps.surface.callOn(deps.dispatcher, surface!, principalOf(c).subject, name, args, { signal: (signal ??= requestSignal(c)) }),
      toolsChanged: () => (toolsChanged = true),
    }
    let res: Response
    const direct = surface && messages.length === 1 && !Array.isArray(body) ? directRequest(c, messages[0], p.TOOLS_METHODS) : undefined
    if (direct) {
      // The hot path: a lone tools/list or tools/call, answered without the SDK's per-request machinery.
      let answer: string | ReadableStream<Uint8Array>
      try {
        // a call's result may be megabytes: a value streamed in slices; a list is the surface's cached text
        answer =
          direct.method === 'tools/call'
            ? jsonBody({ jsonrpc: '2.0', id: direct.id, result: await p.answerToolsCall(direct.params, session) })
            : `{"jsonrpc":"2.0","id":${JSON.stringify(direct.id)},"result":${await p.answerToolsRequestJson(direct.method, direct.params, session)}}`
      } catch (e) {
        answer = JSON.stringify(p.errorResponse(direct.id, e))
      }
      // only a call that changed the tool list answers on an event stream, its answer still streamed
      res = toolsChanged
        ? listChangedBefore(answer)
        : new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } })
    } else {
      // Everything else through the SDK: its stateless transport (one per request) and Server.
      const transport = new p.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      // instructions cost a surface build: only a body that initializes needs them
      const server = p.mcpServer(SERVER_INFO, session, initializing && surface ? await p.instructionsOf(surface) : undefined)
      await server.connect(transport)
      res = await transport.handleRequest(transportRequest(c), { parsedBody: body })
      // JSON answers; only a call that changed the tool list answers on an event stream
      if (toolsChanged && res.status === 200) res = listChangedFirst(await res.text())
    }
    if (surface) res.headers.set('mcp-session-id', surface.record.id)
    return res
  }

  /**
   * A 2026-07-28 request: the revision's header checks, then the process — named by the path, or
   * on the project URL resolved from who asks for what (statelessProcessId) — then the answer.
   * No session id is read, minted or echoed.
   */
  async function modernPost(c: Context<AuthEnv>, pathId: string | undefined, message: unknown, p: McpProtocol): Promise<Response> {
    const m = message as JsonRpcMessage
    const bad = p.modernRequestError((h) => headerOf(c, h), message)
    if (bad) return modernResponse(bad)
    // no client notification is defined on this transport: accepted, nothing to do
    if (m.id === undefined) return new Response(null, { status: 202 })
    const id = m.id as string | number
    if (m.method === 'subscriptions/listen') return modernResponse(p.listenAnswer(id))
    if (!p.PROCESS_METHODS.includes(m.method as string))
      return p.sdkModernLeg(SERVER_INFO).fetch(sdkRequest(c, message), { parsedBody: message })
    const surface = await statelessSurface(c, pathId, p)
    if (!surface)
      return modernResponse({ status: 404, body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32001, message: PROCESS_GONE } }) })
    let signal: CallSignal | undefined
    const session = {
      surface,
      call: (name: string, args: Record<string, unknown>) =>
        deps.surface.callOn(deps.dispatcher, surface, principalOf(c).subject, name, args, { signal: (signal ??= requestSignal(c)) }),
      // this revision carries list changes on subscriptions/listen streams only, never on a call's response
      toolsChanged: () => {},
    }
    return modernResponse(await p.answerModern(m, session, SERVER_INFO))
  }

  /**
   * The process a 2026-07-28 request works on. On the project URL: the caller's process for this
   * query (statelessProcessId), spawned on first use with that id — one conditional create, so two
   * containers racing both end on the one that landed — and idle-expiring like an MCP session. A
   * token without tools:invoke spawns nothing: it sees the surface such a process would start
   * with (a draft, stored nowhere).
   */
  async function statelessSurface(c: Context<AuthEnv>, pathId: string | undefined, p: McpProtocol): Promise<ProcessSurface | undefined> {
    const tenant = tenantParam(c)
    const project = projectParam(c)
    if (pathId !== undefined) return openSession(c, { tenant, project, id: pathId })
    const subject = principalOf(c).subject
    const spawn = spawnQuery(c)
    const id = p.statelessProcessId(tenant, project, subject, spawn)
    const open = await openSession(c, { tenant, project, id })
    if (open) return open
    if (!c.get('principal')?.scopes.has('tools:invoke')) return deps.surface.drafted(tenant, project, subject, spawn)
    try {
      await deps.processes.spawn(tenant, project, subject, spawn, { idle: true, id })
    } catch (e) {
      if (!(e instanceof ServerToolsError && e.code === 'CONFLICT')) throw e
    }
    return openSession(c, { tenant, project, id })
  }

  async function get(c: Context<AuthEnv>, pathId: string | undefined): Promise<Response> {
    assertScope(c, 'tools:read')
    if (modernVersionHeader(c)) return modernNotAllowed()
    const header = headerOf(c, 'mcp-session-id')
    if (pathId === undefined && header === undefined) return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    if (pathId !== undefined && header !== undefined && header !== pathId) return sessionNotFound()
    const bad = await versionError(c)
    if (bad) return bad
    if (!(await openSession(c, { tenant: tenantParam(c), project: projectParam(c), id: pathId ?? header! }))) return sessionNotFound()
    // No standalone stream: notifications ride on the POST that caused them (and Lambda cannot hold a stream open).
    return rpcError(
      405,
      -32000,
      'Method Not Allowed: this server sends no server-initiated stream; notifications arrive on POST responses',
      { allow: 'POST, DELETE' },
    )
  }

  async function del(c: Context<AuthEnv>, pathId: string | undefined): Promise<Response> {
    assertScope(c, 'tools:invoke')
    if (modernVersionHeader(c)) return modernNotAllowed()
    const header = headerOf(c, 'mcp-session-id')
    if (pathId === undefined && header === undefined) return rpcError(400, -32000, 'Bad Request: Mcp-Session-Id header is required')
    if (pathId !== undefined && header !== undefined && header !== pathId) return sessionNotFound()
    const bad = await versionError(c)
    if (bad) return bad
    const key = { tenant: tenantParam(c), project: projectParam(c), id: pathId ?? header! }
    if (!(await openSession(c, key))) return sessionNotFound()
    try {
      await deps.processes.end({ ...key, subject: principalOf(c).subject })
    } catch (e) {
      if (e instanceof ServerToolsError && e.code === 'NOT_FOUND') return sessionNotFound()
      throw e
    }
    return new Response(null, { status: 200 })
  }

  const notAllowed = () => rpcError(405, -32000, 'Method Not Allowed', { allow: 'GET, POST, DELETE' })
  const sessionUrl = '/projects/:project/mcp'
  const processUrl = '/projects/:project/processes/:id/mcp'
  const id = (c: Context) => c.req.param('id') ?? ''
  return new Hono<AuthEnv>()
    .post(sessionUrl, (c) => post(c, undefined))
    .get(sessionUrl, (c) => get(c, undefined))
    .delete(sessionUrl, (c) => del(c, undefined))
    .all(sessionUrl, notAllowed)
    .post(processUrl, (c) => post(c, id(c)))
    .get(processUrl, (c) => get(c, id(c)))
    .delete(processUrl, (c) => del(c, id(c)))
    .all(processUrl, notAllowed)
}

/** Why a batch is not served, or undefined when it is (a 2025-03-26 conversation, a short batch). */
function batchRefusal(c: Context, messages: JsonRpcMessage[]): Response | undefined {
  const init = messages.find((m) => m && typeof m === 'object' && m.method === 'initialize') as { params?: { protocolVersion?: unknown } }
  const asked = init?.params?.protocolVersion
  const version = headerOf(c, 'mcp-protocol-version') ?? (typeof asked === 'string' ? asked : undefined)
  if (version !== undefined && version >= FIRST_VERSION_WITHOUT_BATCHES)
    return rpcError(
      400,
      -32600,
      `Invalid Request: JSON-RPC batches were removed in MCP ${FIRST_VERSION_WITHOUT_BATCHES}; this conversation speaks ${version.slice(0, 40)}: send one message per request`,
    )
  if (messages.length > MAX_BATCH_MESSAGES)
    return rpcError(
      400,
      -32600,
      `Invalid Request: a batch may hold at most ${MAX_BATCH_MESSAGES} messages (this one has ${messages.length})`,
    )
  return undefined
}

/** `?recipe=`, `?model=instance/model`, `?reserve=N`, `?allowedTools=` → a spawn body (checked by the spawn like a REST one). */
function spawnQuery(c: Context): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  const recipe = c.req.query('recipe')
  const model = c.req.query('model')
  const reserve = c.req.query('reserve')
  // ?allowedTools=a,b,@label (or the parameter repeated): the process's own allow-set
  const allowed = c.req.queries('allowedTools')
  if (allowed !== undefined) body.allowedTools = allowed.flatMap((v) => v.split(',')).filter((v) => v.trim())
  if (recipe !== undefined) body.recipe = recipe
  if (model !== undefined) body.models = [model]
  if (reserve !== undefined) body.reserve = /^\d{1,3}$/.test(reserve) ? Number(reserve) : reserve
  return body
}

/**
 * A lone JSON-RPC request for one of `methods` that the SDK's transport would accept (Accept lists
 * both types, the body is JSON, the message well-formed), else undefined.
 */
function directRequest(
  c: Context,
  message: JsonRpcMessage,
  methods: readonly string[],
): { id: string | number; method: string; params: unknown } | undefined {
  const m = message as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }
  if (m === null || typeof m !== 'object' || m.jsonrpc !== '2.0' || typeof m.method !== 'string' || !methods.includes(m.method))
    return undefined
  if (!((typeof m.id === 'string' && m.id) || (typeof m.id === 'number' && Number.isFinite(m.id)))) return undefined
  const accept = headerOf(c, 'accept') ?? ''
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined
  if ((headerOf(c, 'content-type') ?? '').split(';')[0].trim().toLowerCase() !== 'application/json') return undefined
  return { id: m.id as string | number, method: m.method, params: m.params }
}

/** One JSON-RPC message as an event of the stream (JSON text holds no newline, so one `data:` line). */
const event = (json: string) => `event: message\ndata: ${json}\n\n`
const LIST_CHANGED = event(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }))
const EVENT_STREAM = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }

/**
 * The SDK's responses (a batch's, answered whole by its transport) as an event stream with
 * `notifications/tools/list_changed` first — the one case where a response needs more than one message.
 */
function listChangedFirst(json: string): Response {
  const responses = json.startsWith('[') ? (JSON.parse(json) as unknown[]).map((r) => JSON.stringify(r)) : [json]
  return new Response(LIST_CHANGED + responses.map(event).join(''), { status: 200, headers: EVENT_STREAM })
}

/**
 * The hot path's answer after `notifications/tools/list_changed`, on an event stream. A streamed
 * answer is passed through piece by piece, framed as one event (JSON text holds no newline): it
 * was read back whole, decoded, joined into one string and written at once — one stretch of the
 * shared thread that grew with the answer (issue 21 D2 through MCP: ~100 ms for 2 MB under load).
 */
function listChangedBefore(answer: string | ReadableStream<Uint8Array>): Response {
  if (typeof answer === 'string') return new Response(LIST_CHANGED + event(answer), { status: 200, headers: EVENT_STREAM })
  return new Response(framed(`${LIST_CHANGED}event: message\ndata: `, answer, '\n\n'), { status: 200, headers: EVENT_STREAM })
}

/** `body`'s pieces as they come, `head` before them and `tail` after; nothing read ahead of what the connection takes. */
function framed(head: string, body: ReadableStream<Uint8Array>, tail: string): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  let started = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true
          controller.enqueue(UTF8_OUT.encode(head))
          return
        }
        const next = await reader.read()
        if (!next.done) controller.enqueue(next.value)
        else {
          controller.enqueue(UTF8_OUT.encode(tail))
          controller.close()
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  )
}

/**
 * What the transport reads of a request (method, URL, the MCP headers; the body is handed over
 * parsed). A Request would cost an AbortSignal and a body stream per call (measured: ~5% of a
 * tools/call), for nothing the transport uses.
 */
function transportRequest(c: Context): Request {
  const headers = new Headers()
  for (const h of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) {
    const v = headerOf(c, h)
    if (v !== undefined) headers.set(h, v)
  }
  return { method: c.req.method, url: `http://mcp.local${c.req.path}`, headers } as unknown as Request
}

/** The request as the SDK's modern leg reads it (the body is handed over parsed). */
function sdkRequest(c: Context, message: unknown): Request {
  const headers = new Headers()
  for (const h of ['accept', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']) {
    const v = headerOf(c, h)
    if (v !== undefined) headers.set(h, v)
  }
  return new Request(`http://mcp.local${c.req.path}`, { method: 'POST', headers, body: JSON.stringify(message) })
}
