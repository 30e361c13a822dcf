/**
 * Bearer JWT (HS256). Claims: `tenant` must equal the path's tenant, `sub` is the actor,
 * `scope` is space-separated. Runs before any route touches a store.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { sign, verify } from 'hono/jwt'
import { webcrypto } from 'node:crypto'
import { ServerToolsError } from '../../lib/errors'
import { BoundedCache } from '../../lib/runtime/bounded-cache'

export type Scope = 'tools:read' | 'tools:write' | 'tools:invoke' | 'insights:read' | 'secrets:write'
export const ALL_SCOPES: Scope[] = ['tools:read', 'tools:write', 'tools:invoke', 'insights:read', 'secrets:write']

export interface Principal {
  tenant: string
  subject: string
  scopes: Set<string>
}

export type AuthEnv = { Variables: { principal: Principal } }

export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const TENANT_LAYER_ID = '_tenant'

export const isValidTenantId = (id: string) => ID_PATTERN.test(id)
export const isValidProjectId = (id: string) => id === TENANT_LAYER_ID || ID_PATTERN.test(id)

const VERIFIED_TTL_MS = 60_000

export function authenticate(auth: { jwtSecret: string }): MiddlewareHandler<AuthEnv> {
  // Imported once per container: hono/jwt would import a string key on every request, which
  // measured as ~15% of a tool call's CPU.
  let key: Promise<webcrypto.CryptoKey> | undefined
  const verifyKey = () =>
    (key ??= webcrypto.subtle.importKey('raw', new TextEncoder().encode(auth.jwtSecret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']))
  // An agent backend sends the same token with every call: a token that verified is remembered
  // until its `exp` (at most VERIFIED_TTL_MS, so a rotated secret takes effect within a minute).
  // Verification costs a thread-pool round trip in WebCrypto; the cache makes it a Map lookup.
  const verified = new BoundedCache<string, { payload: Record<string, unknown>; until: number }>(10_000)
  return async (c, next) => {
    const header = c.req.header('authorization') ?? ''
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (!match) throw new ServerToolsError('UNAUTHENTICATED', 'a bearer token is required (Authorization: Bearer <jwt>)')
    const token = match[1]
    const now = Date.now()
    let payload: Record<string, unknown>
    const known = verified.get(token)
    if (known && known.until > now) payload = known.payload
    else {
      try {
        payload = (await verify(token, await verifyKey(), 'HS256')) as Record<string, unknown>
      } catch (e) {
        throw new ServerToolsError('UNAUTHENTICATED', `the bearer token is not valid: ${(e as Error).name === 'JwtTokenExpired' ? 'it has expired' : 'bad signature or format'}`)
      }
      const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : Infinity
      verified.set(token, { payload, until: Math.min(exp, now + VERIFIED_TTL_MS) })
    }
    const tenant = c.req.param('tenant')
    if (typeof payload.tenant !== 'string' || typeof payload.sub !== 'string') {
      throw new ServerToolsError('UNAUTHENTICATED', "the bearer token must carry 'tenant' and 'sub' claims")
    }
    if (payload.tenant !== tenant) throw new ServerToolsError('FORBIDDEN', `this token is for tenant '${payload.tenant}', not '${tenant}'`)
    if (!tenant || !isValidTenantId(tenant)) throw new ServerToolsError('INVALID_INPUT', `tenant id must match ${ID_PATTERN}`)
    const scopes = new Set(typeof payload.scope === 'string' ? payload.scope.split(/\s+/).filter(Boolean) : [])
    c.set('principal', { tenant, subject: payload.sub, scopes })
    await next()
  }
}

export function requireScope(scope: Scope): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const principal = c.get('principal')
    if (!principal?.scopes.has(scope)) throw new ServerToolsError('FORBIDDEN', `this call needs the '${scope}' scope`)
    await next()
  }
}

export const principalOf = (c: Context<AuthEnv>) => c.get('principal')

export function issueToken(secret: string, claims: { tenant: string; sub: string; scope: string; expiresInSeconds?: number }, nowSeconds: number) {
  const { expiresInSeconds, ...rest } = claims
  return sign({ ...rest, iat: nowSeconds, ...(expiresInSeconds ? { exp: nowSeconds + expiresInSeconds } : {}) }, secret, 'HS256')
}
