/**
 * `server-tools token`: an HS256 token signed with the deployment's own secret — the one `npm start`
 * keeps in DATA_DIR/jwt-secret, or AUTH_JWT_SECRET — for CI jobs and scripts. A deployment that
 * takes its tokens from an identity provider gets none: there, who holds which scope is the
 * provider's decision, and a token minted beside it would bypass that.
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { ALL_SCOPES, issueToken, isValidTenantId, type Scope } from '../http/auth'
import { DEFAULT_MAX_TOKEN_LIFETIME_SECONDS } from '../http/token-verifier'

export interface TokenRequest {
  tenant: string
  scopes: string[]
  ttl: string
  subject: string
  dataDir?: string
  /** the service to ask whether it takes tokens from an identity provider */
  url?: string
}

export interface MintedToken {
  token: string
  claims: { tenant: string; sub: string; scope: string; iat: number; exp: number }
  /** where the secret came from, for the message on stderr */
  secretSource: string
}

/** Refusals the caller can act on; the message says what to do instead. */
export class TokenRefusal extends Error {}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** `90s`, `15m`, `12h`, `30d` or plain seconds. */
export function ttlSeconds(raw: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(raw.trim())
  if (!m || Number(m[1]) <= 0) throw new TokenRefusal(`--ttl must be a positive duration such as 3600, 15m, 12h or 30d, got '${raw}'`)
  return Number(m[1]) * UNITS[m[2] || 's']
}

/** `--scope` may repeat and each value may hold several scopes, space- or comma-separated. */
export function scopesOf(values: readonly string[]): Scope[] {
  const scopes = [...new Set(values.flatMap((v) => v.split(/[\s,]+/)).filter(Boolean))]
  if (!scopes.length) throw new TokenRefusal(`name at least one --scope: ${ALL_SCOPES.join(', ')}`)
  const unknown = scopes.filter((s) => !(ALL_SCOPES as string[]).includes(s))
  if (unknown.length)
    throw new TokenRefusal(`unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the scopes are ${ALL_SCOPES.join(', ')}`)
  return scopes as Scope[]
}

export async function mintToken(
  request: TokenRequest,
  env: Record<string, string | undefined>,
  opts: { nowSeconds: number; fetchImpl?: typeof fetch },
): Promise<MintedToken> {
  if (env.AUTH_JWKS_URL) throw new TokenRefusal(identityProviderMessage(env.AUTH_ISSUER ? [env.AUTH_ISSUER] : [], env))
  if (request.url) {
    const servers = await authorizationServersOf(request.url, opts.fetchImpl ?? fetch)
    if (servers.length) throw new TokenRefusal(identityProviderMessage(servers))
  }
  if (!isValidTenantId(request.tenant))
    throw new TokenRefusal(`--tenant must be a tenant id (lower case letters, digits, '-' and '_'), got '${request.tenant}'`)
  const scopes = scopesOf(request.scopes)
  const lifetime = ttlSeconds(request.ttl)
  const max = env.AUTH_MAX_TOKEN_LIFETIME_SECONDS ? Number(env.AUTH_MAX_TOKEN_LIFETIME_SECONDS) : DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
  if (lifetime > max)
    throw new TokenRefusal(
      `--ttl ${request.ttl} is longer than the deployment accepts (AUTH_MAX_TOKEN_LIFETIME_SECONDS: ${max} s); the service would refuse the token`,
    )
  const { secret, source } = await secretOf(env, request.dataDir)
  const claims = { tenant: request.tenant, sub: request.subject, scope: scopes.join(' '), expiresInSeconds: lifetime }
  const token = await issueToken(secret, claims, opts.nowSeconds)
  return {
    token,
    claims: { tenant: claims.tenant, sub: claims.sub, scope: claims.scope, iat: opts.nowSeconds, exp: opts.nowSeconds + lifetime },
    secretSource: source,
  }
}

/** AUTH_JWT_SECRET when set (as the service reads it), else the file `npm start` generated. */
async function secretOf(env: Record<string, string | undefined>, dataDir?: string): Promise<{ secret: string; source: string }> {
  if (env.AUTH_JWT_SECRET) return { secret: env.AUTH_JWT_SECRET, source: 'AUTH_JWT_SECRET' }
  const file = join(resolve(dataDir ?? env.DATA_DIR ?? '.data'), 'jwt-secret')
  try {
    const secret = (await readFile(file, 'utf8')).trim()
    if (secret) return { secret, source: file }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
  throw new TokenRefusal(
    `no signing secret: ${file} does not exist (npm start writes it on its first start; pass --data-dir or set DATA_DIR to its data directory), and AUTH_JWT_SECRET is not set (a deployment's secret: npx sst secret list --stage <stage>)`,
  )
}

/** The service's RFC 9728 metadata names authorization servers only when an identity provider is configured. */
async function authorizationServersOf(url: string, fetchImpl: typeof fetch): Promise<string[]> {
  let origin: string
  try {
    origin = new URL(url).origin
  } catch {
    throw new TokenRefusal(`--url must be the tenant URL, …/brain/<tenant>, got '${url}'`)
  }
  let res: Response
  try {
    res = await fetchImpl(`${origin}/.well-known/oauth-protected-resource`, { headers: { accept: 'application/json' } })
  } catch (e) {
    throw new TokenRefusal(
      `could not ask ${origin} whether it takes tokens from an identity provider (${(e as Error).message}); start it, or pass --offline to mint without asking`,
    )
  }
  if (!res.ok)
    throw new TokenRefusal(`${origin}/.well-known/oauth-protected-resource answered ${res.status}; is --url a Server Tools service?`)
  const metadata = (await res.json()) as { authorization_servers?: unknown }
  return Array.isArray(metadata.authorization_servers) ? metadata.authorization_servers.map(String) : []
}

function identityProviderMessage(servers: readonly string[], env?: Record<string, string | undefined>): string {
  const from = servers.length ? `its identity provider (${servers.join(', ')})` : 'its identity provider (AUTH_JWKS_URL is set)'
  const claims = env
    ? `the tenant in the '${env.AUTH_TENANT_CLAIM || 'tenant'}' claim and the scopes in '${env.AUTH_SCOPE_CLAIM || 'scope'}'`
    : 'the tenant and the scopes in the claims its AUTH_TENANT_CLAIM and AUTH_SCOPE_CLAIM name'
  return `this deployment takes tokens from ${from}: get one there, with ${claims}, for an audience in its AUTH_AUDIENCE. No token is minted beside it.`
}
