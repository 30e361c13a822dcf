/**
 * The HTTP edge's part of observability, one middleware in front of every route:
 * - the server span (`<METHOD> <route>`), continuing the caller's W3C `traceparent`;
 * - the request's context for log lines and audit entries (request id, tenant, project, process,
 *   tool, source address, the verified actor);
 * - Requests and RequestLatency by route pattern and status class;
 * - one audit entry per write route (documents, allow-lists, server tools, secrets, processes,
 *   client tools, observed limits) and per refusal answered here (401, 403, budget): refusals
 *   inside a tool call (egress, sandbox) are recorded where they happen (functions/deps.ts).
 */
import { createHash, randomUUID } from 'node:crypto'
import type { Context, MiddlewareHandler } from 'hono'
import type { AuditDraft } from '../../lib/audit/recorder'
import { isServerToolsError } from '../../lib/errors'
import type { AppDeps } from './app-deps'
import { type AuthEnv, decodedPathPart, isValidTenantId, pathSegment } from './auth'
import { headerOf } from './headers'
import { type RequestContext, requestContext } from './request-context'

/** Write routes and the action each one is audited as (`.put` / `.delete` added from the method). */
const WRITES: Record<string, string> = {
  'PUT /brain/:tenant/projects/:project/documents/:path{.+}': 'document.put',
  'DELETE /brain/:tenant/projects/:project/documents/:path{.+}': 'document.delete',
  'PUT /brain/:tenant/projects/:project/server-tools/:name': 'server-tool.put',
  'DELETE /brain/:tenant/projects/:project/server-tools/:name': 'server-tool.delete',
  'PUT /brain/:tenant/secrets/:name': 'secret.put',
  'DELETE /brain/:tenant/secrets/:name': 'secret.delete',
  'POST /brain/:tenant/projects/:project/processes': 'process.spawn',
  'PUT /brain/:tenant/projects/:project/processes/:id/client-tools': 'client-tools.put',
  'POST /brain/:tenant/models/observed-limits': 'observed-limit.report',
}
/** The tenant's egress allow-list is a document; its writes are named for what they change. */
const ALLOW_LIST = /^projects\/[^/]+\/documents\/egress\/allow\.ya?ml$/

/** The write routes the audit log covers (tests enumerate them). */
export const AUDITED_WRITES = Object.keys(WRITES)

export function observe(deps: Pick<AppDeps, 'observability' | 'audit' | 'clock'>): MiddlewareHandler<AuthEnv> {
  const { tracer, metrics } = deps.observability
  return async (c, next) => {
    const loading = deps.observability.ready()
    if (loading) await loading
    const started = deps.clock.now()
    const path = c.req.path
    const segments = path.split('/')
    const brain = segments[1] === 'brain'
    const ctx = new HttpRequestContext(c, requestIdOf(c), sourceAddressOf(c))
    if (brain) scopeInto(ctx, segments)
    const method = c.req.method
    let route = 'unmatched'
    try {
      await tracer.continueFrom(
        (name) => headerOf(c, name),
        () =>
          tracer.span(
            method,
            {
              kind: 'server',
              attributes: {
                'http.request.method': method,
                'url.path': path,
                'url.scheme': c.req.url.startsWith('https:') ? 'https' : 'http',
              },
            },
            async (span) => {
              ctx.traceId = tracer.ids()?.traceId
              await requestContext.run(ctx, next)
              route = routeOf(c)
              span.rename(`${method} ${route}`)
              span.setAttributes({
                'http.route': route,
                'http.response.status_code': c.res.status,
                'server_tools.tenant': ctx.tenant,
                'server_tools.project': ctx.project,
                'server_tools.process': ctx.process,
              })
              if (c.res.status >= 500) span.fail(String(c.res.status))
            },
          ),
      )
      metrics.record('Requests', 1, { Route: route, StatusClass: `${Math.floor(c.res.status / 100)}xx` })
      metrics.record('RequestLatency', deps.clock.now() - started, { Route: route })
      if (brain) {
        const entry = auditEntryOf(c, `${method} ${route}`, ctx)
        if (entry) deps.audit.recorder.record(entry)
      }
    } finally {
      ctx.settle()
    }
  }
}

/**
 * The request's context, its actor read from the verified principal when asked (authentication
 * comes later). A class with the reader on its prototype: a closure per request is an allocation
 * every request pays for the few that are audited or logged.
 */
class HttpRequestContext implements RequestContext {
  tenant?: string
  project?: string
  process?: string
  tool?: string
  traceId?: string
  turnWait?: () => Promise<void> | undefined
  #c: Context<AuthEnv> | undefined
  #settled: { subject?: string; issuer?: string } | undefined

  constructor(
    c: Context<AuthEnv>,
    readonly requestId: string,
    readonly sourceAddress: string | undefined,
  ) {
    this.#c = c
  }

  actor() {
    if (!this.#c) return this.#settled
    const p = this.#c.get('principal')
    return p ? { subject: p.subject, ...(p.issuer ? { issuer: p.issuer } : {}) } : undefined
  }

  /**
   * Lets go of the request once it is answered, keeping what later readers ask for (the actor).
   * This context outlives its request wherever async-local storage stamped it: on a promise a
   * cache keeps, on a worker's MessagePort or a socket handle the request's callbacks ran on. Each
   * of those held the whole request (its Hono context, Node request and response, body) until the
   * next request overwrote it, so every request's objects outlived a young-generation collection
   * and were copied and promoted: 7.3 KB a whoami (1.2 KB without), 5.3 against 2.0 ms of mean
   * scavenge pause with one caller alone (docs/decisions.md; abort listeners held the rest of an
   * execute_javascript call's: lib/runtime/abort-listener.ts).
   */
  settle() {
    this.#settled = this.actor()
    this.#c = undefined
  }
}

function auditEntryOf(c: Context<AuthEnv>, routeKey: string, ctx: RequestContext): AuditDraft | undefined {
  const status = c.res.status
  const error = c.error
  const action = WRITES[routeKey]
  // most requests are reads that answered: nothing to record, so nothing to build
  if (!action && status !== 401 && status !== 403 && !isServerToolsError(error, 'BUDGET_TOO_SMALL')) return undefined
  const tenant = pathSegment(c.req.path, 2) ?? ''
  if (!isValidTenantId(tenant)) return undefined
  const target = targetOf(c.req.path)
  const base = {
    tenant,
    actor: ctx.actor() ?? {},
    target,
    status,
    requestId: ctx.requestId,
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    ...(ctx.sourceAddress ? { sourceAddress: ctx.sourceAddress } : {}),
    ...clientOf(c),
  }
  if (status === 401) return { ...base, action: 'auth.unauthenticated', outcome: 'denied', reason: 'UNAUTHENTICATED' }
  if (status === 403 && isServerToolsError(error, 'FORBIDDEN')) {
    const scope = error.details?.requiredScope
    return { ...base, action: 'auth.forbidden', outcome: 'denied', reason: typeof scope === 'string' ? `scope:${scope}` : 'FORBIDDEN' }
  }
  if (isServerToolsError(error, 'BUDGET_TOO_SMALL'))
    return { ...base, action: 'budget.refused', outcome: 'denied', reason: 'BUDGET_TOO_SMALL' }
  if (!action) return undefined
  const ok = status >= 200 && status < 300
  const body = c.get('requestBody')
  const secret = action.startsWith('secret.')
  return {
    ...base,
    action: ALLOW_LIST.test(target) ? action.replace('document.', 'allow-list.') : action,
    outcome: ok ? 'ok' : 'failed',
    ...(ok ? {} : { reason: isServerToolsError(error) ? error.code : `HTTP_${status}` }),
    ...versionOf('versionBefore', headerOf(c, 'if-match')),
    ...(ok ? versionOf('versionAfter', c.res.headers.get('etag') ?? undefined) : {}),
    // a secret's hash would let whoever reads the log confirm a guess of its value
    ...(body?.byteLength && !secret ? { contentHash: `sha256:${createHash('sha256').update(body).digest('hex')}` } : {}),
  }
}

/** The matched route's pattern (handlers, not middleware); `unmatched` when only middleware matched. */
function routeOf(c: Context): string {
  const routes = c.req.matchedRoutes.filter((r) => r.method !== 'ALL' && r.path !== '/*')
  return routes.length ? routes[routes.length - 1].path : 'unmatched'
}

/** Below the tenant: `projects/p1/documents/a.yaml`, `secrets/API_KEY` (decoded, at most 512 characters). */
function targetOf(path: string): string {
  return path
    .split('/')
    .slice(3)
    .map((p) => decodePart(p))
    .join('/')
    .slice(0, 512)
}

/** Tenant, project, process and tool from the path's parts, each decoded once (this runs on every request). */
function scopeInto(ctx: RequestContext, parts: string[]) {
  ctx.tenant = parts[2] === undefined ? undefined : decodedPathPart(parts[2])
  if (parts[3] === undefined || decodedPathPart(parts[3]) !== 'projects') return
  ctx.project = parts[4] === undefined ? undefined : decodedPathPart(parts[4])
  const kind = parts[5] === undefined ? undefined : decodedPathPart(parts[5])
  const id =
    (kind === 'processes' || kind === 'tools' || kind === 'server-tools') && parts[6] !== undefined ? decodedPathPart(parts[6]) : undefined
  if (id && kind === 'processes') ctx.process = id
  else if (id) ctx.tool = id
}

const decodePart = (p: string) => {
  try {
    return decodeURIComponent(p)
  } catch {
    return p
  }
}

/** Lambda's request id, else a caller's `x-request-id` (bounded), else a new one. */
function requestIdOf(c: Context): string {
  const lambda = (c.env as { lambdaContext?: { awsRequestId?: unknown } } | undefined)?.lambdaContext?.awsRequestId
  if (typeof lambda === 'string' && lambda) return lambda
  const given = headerOf(c, 'x-request-id')
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID()
}

/** The caller's address: Lambda's sourceIp, the socket's peer under `npm start`. */
function sourceAddressOf(c: Context): string | undefined {
  const env = c.env as
    | { event?: { requestContext?: { http?: { sourceIp?: unknown } } }; incoming?: { socket?: { remoteAddress?: string } } }
    | undefined
  const ip = env?.event?.requestContext?.http?.sourceIp
  return typeof ip === 'string' ? ip : env?.incoming?.socket?.remoteAddress
}

/** `x-server-tools-client` (the CLI sends `cli <command>`), bounded. */
function clientOf(c: Context): { client?: string } {
  const v = headerOf(c, 'x-server-tools-client')
  return v && /^[\w .:/-]{1,64}$/.test(v) ? { client: v } : {}
}

function versionOf(key: 'versionBefore' | 'versionAfter', header: string | undefined): Record<string, string> {
  const m = header ? /^(?:W\/)?"([^"]{1,40})"$/.exec(header.trim()) : null
  return m ? { [key]: m[1] } : {}
}
