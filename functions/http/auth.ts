/**
 * Bearer JWTs at the HTTP edge (functions/http/token-verifier.ts decides whether a token is
 * genuine): the token's tenant must equal the path's tenant, `sub` is the actor, scopes gate each
 * route. Runs before any route touches a store.
 */
import type { IncomingMessage } from 'node:http'
import type { Context, MiddlewareHandler } from 'hono'
import { ServerToolsError } from '../../lib/errors'
import type { Logger } from '../../lib/runtime/logger'
import { headerOf } from './headers'
import { signHs256 } from './hs256'
import { type AuthSettings, createTokenVerifier, type Verdict } from './token-verifier'

/**
 * `limits:report` lets an agent backend report a provider's tool-count rejection (POST
 * /models/observed-limits). It is apart from `tools:invoke` because a report shrinks every
 * manifest of the tenant for that model (issue 21 N6): grant it to the backend that talks to the
 * providers, not to every caller of tools.
 */
export type Scope =
  | 'tools:read'
  | 'tools:write'
  | 'tools:invoke'
  | 'insights:read'
  | 'secrets:write'
  | 'audit:read'
  | 'tenant:admin'
  | 'limits:report'
export const ALL_SCOPES: Scope[] = [
  'tools:read',
  'tools:write',
  'tools:invoke',
  'insights:read',
  'secrets:write',
  'audit:read',
  'tenant:admin',
  'limits:report',
]

export interface Principal {
  tenant: string
  subject: string
  scopes: Set<string>
  /** Who issued the token (its `iss`; `server-tools` for this deployment's own HS256 tokens). */
  issuer?: string
}

/** `requestBody`: the bytes a route read (functions/http/request.ts), for the audit entry's hash. */
export type AuthEnv = { Variables: { principal: Principal; requestBody?: Uint8Array } }

export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const TENANT_LAYER_ID = '_tenant'

export const isValidTenantId = (id: string) => ID_PATTERN.test(id)
export const isValidProjectId = (id: string) => id === TENANT_LAYER_ID || ID_PATTERN.test(id)

export function authenticate(settings: AuthSettings, log?: Logger): MiddlewareHandler<AuthEnv> {
  const verify = createTokenVerifier(settings, log)
  // An agent backend sends every call of a conversation over one kept-alive connection with the
  // same Authorization header: the connection keeps its last verdict, found again by comparing
  // the header's characters (no digest, no parse) until the verdict's own expiry. A different
  // header on the connection is verified as any other; the verdict dies with the connection.
  const lastOnConnection = new WeakMap<object, { header: string; verdict: Verdict }>()
  return async (c, next) => {
    const header = headerOf(c, 'authorization') ?? ''
    const connection = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket
    const last = connection ? lastOnConnection.get(connection) : undefined
    let verdict: Verdict
    if (last !== undefined && last.header === header && last.verdict.until > Date.now()) verdict = last.verdict
    else {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      if (!match) throw new ServerToolsError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <jwt>)')
      verdict = await verify(match[1])
      if (connection) lastOnConnection.set(connection, { header, verdict })
    }
    const { tenant: tokenTenant, subject, scopes, issuer } = verdict
    const tenant = pathSegment(c.req.path, 2) ?? ''
    if (tokenTenant !== tenant)
      throw new ServerToolsError('FORBIDDEN', `this token is for tenant '${tokenTenant.slice(0, 80)}', not '${tenant}'`)
    if (!tenant || !isValidTenantId(tenant)) throw new ServerToolsError('INVALID_INPUT', `tenant id must match ${ID_PATTERN}`)
    c.set('principal', { tenant, subject, scopes, issuer })
    return next()
  }
}

/**
 * 403 unless the caller holds the scope. `requiredScope` travels to the problem body and to the
 * `insufficient_scope` challenge (functions/http/protected-resource.ts), so a client can step up.
 */
export function assertScope(c: Context<AuthEnv>, scope: Scope, why = 'this call') {
  if (!c.get('principal')?.scopes.has(scope))
    throw new ServerToolsError('FORBIDDEN', `${why} needs the '${scope}' scope`, { requiredScope: scope })
}

export function requireScope(scope: Scope): MiddlewareHandler<AuthEnv> {
  // nothing to do after the route: no async frame of its own around it
  return (c, next) => {
    assertScope(c, scope)
    return next()
  }
}

export const principalOf = (c: Context<AuthEnv>) => c.get('principal')

/** Tenant-wide changes reach every project of the tenant: they need `tenant:admin` on top of the route's own scope. */
export const assertTenantAdmin = (c: Context<AuthEnv>, what: string) =>
  assertScope(c, 'tenant:admin', `${what} changes the whole tenant: it`)

const LAYER_WRITES = new Set(['PUT', 'PATCH', 'DELETE'])
/** Under a project, these hold a process's runtime state (sessions, client tools), not the layer's documents. */
const RUNTIME_PATH = /^\/brain\/[^/]+\/projects\/[^/]+\/(?:processes(?:\/|$)|mcp$)/

/** For /brain/:tenant/projects/:project/*: any write to the `_tenant` layer, whatever layer route a later change adds. */
export const tenantLayerWrites: MiddlewareHandler<AuthEnv> = (c, next) => {
  if (
    LAYER_WRITES.has(c.req.method) &&
    pathSegment(c.req.path, 3) === 'projects' &&
    pathSegment(c.req.path, 4) === TENANT_LAYER_ID &&
    !RUNTIME_PATH.test(c.req.path)
  )
    assertTenantAdmin(c, `writing the ${TENANT_LAYER_ID} layer`)
  return next()
}

/** An HS256 token for the deployment secret; every token expires (a token without `exp` is refused). */
export function issueToken(
  secret: string,
  claims: { tenant: string; sub: string; scope: string; expiresInSeconds: number },
  nowSeconds: number,
) {
  const { expiresInSeconds, ...rest } = claims
  return Promise.resolve(signHs256({ ...rest, iat: nowSeconds, exp: nowSeconds + expiresInSeconds }, secret))
}

/**
 * The decoded segment at `index` of a path ('/brain/acme/…': 2 is 'acme'), read the way a route
 * parameter is: middleware mounted on '/brain/*' has no parameters (./hono.ts).
 */
export function pathSegment(path: string, index: number): string | undefined {
  const raw = path.split('/')[index]
  return raw === undefined ? undefined : decodedPathPart(raw)
}

/** A percent-encoded part of a path, decoded; one that cannot be decoded as it is, for the caller's checks to judge. */
export function decodedPathPart(raw: string): string {
  if (!raw.includes('%')) return raw
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}
