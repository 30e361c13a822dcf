/**
 * Per-container MCP client connections and tool catalogs.
 *
 * - A connection is keyed by (tenant, server document scope, path, version, resolved headers):
 *   it is reused by every project of a tenant that resolves to the same stored document, never
 *   shared across tenants, replaced when the document changes (a new version) or a referenced
 *   secret is rotated (other headers), and the replaced one is closed.
 * - The remote catalog (`tools/list`, every page) is cached on the connection for the server's
 *   `catalogTtlMs`, dropped and reloaded when the server sends `notifications/tools/list_changed`.
 * - Loading a catalog (connect + list) is bounded by the server's `timeoutMs` as a whole, so a
 *   listing never waits on an unreachable server longer than that; a server that just failed is
 *   not retried for `retryAfterMs` (the failure is answered at once) unless its document changes.
 * - Secret values that went into headers are scrubbed from every result and error.
 * - The client is the v2 SDK's (`@modelcontextprotocol/client`), negotiating the era at connect
 *   (`versionNegotiation: 'auto'`): a server that answers `server/discover` is spoken to in
 *   2026-07-28 (stateless, no session), any other in the 2025-era handshake it offers. On a
 *   2026-07-28 server no list_changed arrives (the revision delivers it on a `subscriptions/listen`
 *   stream, which a Lambda does not hold open): its catalog is refreshed by `catalogTtlMs` alone.
 */
import {
  type CallToolResult,
  Client,
  type Tool as McpTool,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  SseError,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client'
import { BudgetExceeded, countNodes, EXPANSION_LIMITS, ExpansionBudget } from '../config/expansion-budget'
import type { EgressClient } from '../egress/client'
import { ServerToolsError } from '../errors'
import { onAbort } from '../runtime/abort-listener'
import type { Clock } from '../runtime/clock'
import { systemClock } from '../runtime/clock'
import { sha256 } from '../runtime/hash'
import type { Logger } from '../runtime/logger'
import { silentLogger } from '../runtime/logger'
import type { SecretStore } from '../secrets/ports'
import { loadSecrets, secretNamesIn, substituteSecrets } from '../secrets/references'
import { SecretScrubber } from '../secrets/scrubber'
import { egressFetch } from './fetch'
import type { McpServerRef } from './server-doc'

export type RemoteTool = McpTool

export interface McpConnectionsOptions {
  egress: Pick<EgressClient, 'request' | 'check'>
  secrets: SecretStore
  log?: Logger
  clock?: Clock
  /** Open connections kept per container; the least recently used is closed beyond it. */
  maxConnections?: number
  /** After a failed connect, answer the same failure for this long before trying again. */
  retryAfterMs?: number
  clientInfo?: { name: string; version: string }
}

/** Why a server could not be used; the message names the server and never a secret value. */
export class McpUnavailableError extends ServerToolsError {
  constructor(message: string, options?: ErrorOptions) {
    super('UPSTREAM_FAILURE', message, undefined, options)
    this.name = 'McpUnavailableError'
  }
}

interface Connection {
  key: string
  line: string
  ref: McpServerRef
  client: Client
  ready: Promise<void>
  closed: boolean
  scrubber: SecretScrubber
  catalog?: { tools: RemoteTool[]; at: number; generation: number }
  loading?: Promise<RemoteTool[]>
  /** Bumped by every list_changed notification; a load started before one is not trusted. */
  generation: number
  lastUsed: number
}

interface ResolvedHeaders {
  headers: Record<string, string>
  scrubber: SecretScrubber
  digest: string
}

export class McpConnections {
  private readonly connections = new Map<string, Connection>()
  /** (tenant, scope, path) → the key of its live connection, so a new version replaces the old. */
  private readonly lines = new Map<string, string>()
  private readonly failures = new Map<string, { at: number; error: Error }>()
  private readonly log: Logger
  private readonly clock: Clock

  constructor(private readonly opts: McpConnectionsOptions) {
    this.log = opts.log ?? silentLogger
    this.clock = opts.clock ?? systemClock
  }

  /** Open connections (for tests and metrics). */
  get size() {
    return this.connections.size
  }

  /** The server's tools, from the cache when fresh; rejects with McpUnavailableError. */
  async tools(ref: McpServerRef, signal?: AbortSignal): Promise<RemoteTool[]> {
    const headers = await this.headers(ref)
    const attempt = async (retry: boolean): Promise<RemoteTool[]> => {
      const conn = this.connection(ref, headers)
      const c = conn.catalog
      if (c && c.generation === conn.generation && this.clock.now() - c.at < ref.config.catalogTtlMs) return c.tools
      try {
        return await this.bounded(conn, () => this.load(conn), signal)
      } catch (e) {
        if (retry && isSessionGone(e)) return attempt(false)
        throw this.asError(ref, e, headers.scrubber)
      }
    }
    return attempt(true)
  }

  /**
   * Calls a remote tool. Throws McpUnavailableError when the server cannot be reached and ProtocolError
   * when it answers the request with a JSON-RPC error; a tool that failed is a result with isError.
   */
  async call(
    ref: McpServerRef,
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<{ result: CallToolResult; scrubber: SecretScrubber }> {
    const headers = await this.headers(ref)
    const attempt = async (retry: boolean): Promise<CallToolResult> => {
      const conn = this.connection(ref, headers)
      await this.bounded(conn, () => conn.ready, signal)
      try {
        return (await conn.client.callTool({ name, arguments: args }, { timeout: ref.config.timeoutMs, signal })) as CallToolResult
      } catch (e) {
        // the server forgot the session (restart, expiry): the request was not executed, so one retry on a fresh session is safe
        if (retry && isSessionGone(e)) {
          this.drop(conn, 'session expired')
          return attempt(false)
        }
        if (!(e instanceof ProtocolError)) this.drop(conn, 'transport failed')
        throw this.asError(ref, e, headers.scrubber)
      }
    }
    return { result: await attempt(true), scrubber: headers.scrubber }
  }

  /** Closes every connection (tests, shutdown). */
  async closeAll(): Promise<void> {
    const all = [...this.connections.values()]
    this.connections.clear()
    this.lines.clear()
    await Promise.all(all.map((c) => this.close(c)))
  }

  // ────────── internals ──────────

  private async headers(ref: McpServerRef): Promise<ResolvedHeaders> {
    const names = secretNamesIn(ref.config.headers)
    const { values, missing } = await loadSecrets(this.opts.secrets, ref.tenant, names)
    if (missing.length) {
      throw new McpUnavailableError(
        `MCP server '${ref.name}' needs the secret${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')}, which ${missing.length > 1 ? 'are' : 'is'} not set for this tenant`,
      )
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(ref.config.headers)) headers[k] = substituteSecrets(v, values)
    const digest = sha256(JSON.stringify(Object.entries(headers).sort()))
    return { headers, scrubber: new SecretScrubber(values), digest }
  }

  private connection(ref: McpServerRef, resolved: ResolvedHeaders): Connection {
    const line = `${ref.tenant}\u0000${ref.scope}\u0000${ref.path}`
    const key = `${line}\u0000${ref.version}\u0000${resolved.digest}`
    const existing = this.connections.get(key)
    if (existing && !existing.closed) {
      existing.lastUsed = this.clock.now()
      return existing
    }
    const failed = this.failures.get(key)
    if (failed && this.clock.now() - failed.at < (this.opts.retryAfterMs ?? 5_000)) throw failed.error
    this.failures.delete(key)

    const previous = this.lines.get(line)
    if (previous && previous !== key) {
      const old = this.connections.get(previous)
      if (old) this.drop(old, 'server document or its secrets changed', true)
    }
    this.evictBeyondLimit()

    const client = new Client(this.opts.clientInfo ?? { name: 'server-tools', version: '1.0.0' }, {
      capabilities: {},
      // the deprecated HTTP+SSE transport only ever carried 2024-11-05: nothing to probe there
      versionNegotiation: { mode: ref.config.transport === 'sse' ? 'legacy' : 'auto' },
      listMaxPages: MAX_PAGES,
    })
    const conn: Connection = {
      key,
      line,
      ref,
      client,
      ready: Promise.resolve(),
      closed: false,
      scrubber: resolved.scrubber,
      generation: 0,
      lastUsed: this.clock.now(),
    }
    client.setNotificationHandler('notifications/tools/list_changed', async () => {
      conn.generation++
      conn.catalog = undefined
      this.log.log('debug', 'mcp.tools_list_changed', { tenant: ref.tenant, server: ref.name })
      this.load(conn).catch(() => {}) // refresh now, so the next listing finds it warm
    })
    client.onclose = () => {
      if (!conn.closed) this.drop(conn, 'connection closed by the transport')
    }
    client.onerror = (e) => {
      this.log.log('debug', 'mcp.transport_error', { tenant: ref.tenant, server: ref.name, error: resolved.scrubber.scrubText(e.message) })
    }
    const fetch = egressFetch(this.opts.egress, { tenant: ref.tenant, timeoutMs: ref.config.timeoutMs })
    const url = new URL(ref.config.url)
    const transport: Transport =
      ref.config.transport === 'sse'
        ? new SSEClientTransport(url, { fetch, requestInit: { headers: resolved.headers } })
        : new StreamableHTTPClientTransport(url, {
            fetch,
            requestInit: { headers: resolved.headers },
            reconnectionOptions: {
              initialReconnectionDelay: 1_000,
              maxReconnectionDelay: 30_000,
              reconnectionDelayGrowFactor: 2,
              maxRetries: 3,
            },
          })
    conn.ready = client.connect(transport, { timeout: ref.config.timeoutMs }).catch((e) => {
      const error = this.asError(ref, e, resolved.scrubber)
      this.rememberFailure(key, error)
      this.drop(conn, 'connect failed')
      throw error
    })
    conn.ready.catch(() => {}) // observed by whoever awaits it
    this.connections.set(key, conn)
    this.lines.set(line, key)
    this.log.log('info', 'mcp.connect', { tenant: ref.tenant, server: ref.name, scope: ref.scope, version: ref.version })
    return conn
  }

  private load(conn: Connection): Promise<RemoteTool[]> {
    if (conn.loading) return conn.loading
    const generation = conn.generation
    const run = (async () => {
      await conn.ready
      // every page (the client walks the cursors, at most MAX_PAGES), never from the client's own cache: ours is the one list_changed and the TTL govern
      const res = await conn.client.listTools(undefined, { timeout: conn.ref.config.timeoutMs, cacheMode: 'bypass' })
      // a remote catalog is tenant-controlled input like a document: bounded in tools and schema nodes
      if (res.tools.length > EXPANSION_LIMITS.packTools)
        throw new BudgetExceeded(EXPANSION_LIMITS.packTools, `the tool list of server '${conn.ref.name}'`)
      const nodes = new ExpansionBudget(EXPANSION_LIMITS.packNodes, `the input schemas of server '${conn.ref.name}' (nodes)`)
      for (const tool of res.tools) nodes.spend(countNodes(tool.inputSchema, nodes.limit))
      // A catalog is shown to every tools:read holder (listings, manifests): a secret the server
      // echoes into a name, description or schema is scrubbed like one in a call's result.
      const tools: RemoteTool[] = res.tools.map((t) => conn.scrubber.scrub(t))
      if (conn.generation === generation) conn.catalog = { tools, at: this.clock.now(), generation }
      return tools
    })()
    conn.loading = run
    run.then(
      () => {
        if (conn.loading === run) conn.loading = undefined
        // a list_changed arrived while this load ran: load again so the cache ends up current
        if (conn.generation !== generation && !conn.closed) this.load(conn).catch(() => {})
      },
      (e) => {
        if (conn.loading === run) conn.loading = undefined
        // a transport failure leaves the session in doubt: the next use starts a fresh one
        if (!(e instanceof ProtocolError)) this.drop(conn, 'listing failed')
      },
    )
    return run
  }

  /** Runs `work` within the server's timeout; a timeout drops the connection and answers the failure for a while. */
  private async bounded<T>(conn: Connection, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { ref, scrubber } = conn
    const ms = ref.config.timeoutMs
    let timer: NodeJS.Timeout | undefined
    let stopListening: (() => void) | undefined
    let timedOut = false
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true
        reject(new McpUnavailableError(`MCP server '${ref.name}' did not answer within ${ms} ms`))
      }, ms)
      if (signal) {
        const cancelled = () => reject(new McpUnavailableError(`the call to MCP server '${ref.name}' was cancelled`))
        if (signal.aborted) cancelled()
        else stopListening = onAbort(signal, cancelled)
      }
    })
    try {
      return await Promise.race([work(), limit])
    } catch (e) {
      if (isSessionGone(e)) throw e // the caller retries once on a fresh session
      const error = this.asError(ref, e, scrubber)
      if (timedOut) {
        this.rememberFailure(conn.key, error)
        this.drop(conn, 'timed out')
      }
      throw error
    } finally {
      clearTimeout(timer)
      stopListening?.()
    }
  }

  private asError(ref: McpServerRef, e: unknown, scrubber: SecretScrubber): Error {
    if (e instanceof McpUnavailableError) return e
    if (e instanceof ProtocolError) {
      return new ProtocolError(e.code, scrubber.scrubText(e.message.replace(/^MCP error -?\d+: /, '')), e.data)
    }
    if (e instanceof SdkError && e.code === SdkErrorCode.RequestTimeout) {
      return new McpUnavailableError(`MCP server '${ref.name}' did not answer within ${ref.config.timeoutMs} ms`)
    }
    return new McpUnavailableError(`MCP server '${ref.name}' could not be reached: ${scrubber.scrubText(describe(e, scrubber))}`)
  }

  private rememberFailure(key: string, error: Error) {
    const now = this.clock.now()
    if (this.failures.size >= 1_000) {
      for (const [k, f] of this.failures) if (now - f.at >= (this.opts.retryAfterMs ?? 5_000)) this.failures.delete(k)
      if (this.failures.size >= 1_000) this.failures.delete(this.failures.keys().next().value as string)
    }
    this.failures.set(key, { at: now, error })
  }

  private drop(conn: Connection, why: string, terminate = false) {
    if (conn.closed) return
    conn.closed = true
    if (this.connections.get(conn.key) === conn) this.connections.delete(conn.key)
    if (this.lines.get(conn.line) === conn.key) this.lines.delete(conn.line)
    this.log.log('info', 'mcp.disconnect', { tenant: conn.ref.tenant, server: conn.ref.name, version: conn.ref.version, why })
    void this.close(conn, terminate)
  }

  private async close(conn: Connection, terminate = false) {
    conn.closed = true
    try {
      const transport = conn.client.transport
      if (terminate && transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        await Promise.race([transport.terminateSession(), new Promise((r) => setTimeout(r, 1_000).unref())]).catch(() => {})
      }
      await conn.client.close()
    } catch {
      // closing is best effort
    }
  }

  private evictBeyondLimit() {
    const max = this.opts.maxConnections ?? 200
    while (this.connections.size >= max) {
      let oldest: Connection | undefined
      for (const c of this.connections.values()) if (!oldest || c.lastUsed < oldest.lastUsed) oldest = c
      if (!oldest) return
      this.drop(oldest, 'evicted (least recently used)', true)
    }
  }
}

/** Pages of a remote tools/list walked at most (a server whose cursor never ends). */
const MAX_PAGES = 100

/** The server no longer knows the session (HTTP 404 on a session request): nothing was executed. */
const isSessionGone = (e: unknown) => e instanceof SdkHttpError && e.status === 404

/** A transport failure in a sentence: HTTP status and a trimmed body (scrubbed before it is cut) where the server sent one. */
function describe(e: unknown, scrubber: SecretScrubber): string {
  if (e instanceof SdkHttpError || e instanceof SseError) {
    const body = e.message
      .replace(/^(Streamable HTTP|SSE) error: /, '')
      .replace(/^(Error POSTing to endpoint|Failed to open SSE stream|Non-200 status code \(\d+\)): ?/, '')
      .trim()
    const code = e instanceof SdkHttpError ? e.status : e.code
    const status = typeof code === 'number' && code > 0 ? `the server answered HTTP ${code}` : 'the transport failed'
    return body ? `${status}: ${scrubber.scrubText(body).slice(0, 300)}` : status
  }
  return (e as Error)?.message ?? String(e)
}
