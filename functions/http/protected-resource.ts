/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728), as the MCP authorization spec uses it: a 401
 * tells the client where the metadata is (`WWW-Authenticate: Bearer resource_metadata="…"`), and
 * the metadata names the authorization server(s) to get a token from.
 *
 * Resources: each MCP endpoint (`/brain/{t}/projects/{p}/mcp`, `…/processes/{id}/mcp`) is its own
 * resource, as MCP clients expect; every other route of a tenant belongs to `/brain/{t}`.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { ServerToolsError } from '../../lib/errors'
import { ALL_SCOPES, isValidProjectId, isValidTenantId } from './auth'
import { headerOf } from './headers'
import type { AuthSettings } from './token-verifier'

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource'

const PROCESS_ID = /^[A-Za-z0-9_-]{1,128}$/

/** The resource a request path belongs to, or undefined outside /brain/{tenant}. */
export function resourcePathOf(path: string): string | undefined {
  const parts = path.split('/')
  if (parts[0] !== '' || parts[1] !== 'brain' || !isValidTenantId(parts[2] ?? '')) return undefined
  const tenantResource = `/brain/${parts[2]}`
  const [, , , projects, project, ...rest] = parts
  if (projects !== 'projects' || !isValidProjectId(project ?? '')) return tenantResource
  const mcp = rest.length === 1 && rest[0] === 'mcp'
  const processMcp = rest.length === 3 && rest[0] === 'processes' && PROCESS_ID.test(rest[1]) && rest[2] === 'mcp'
  return mcp || processMcp ? `${tenantResource}/projects/${project}/${rest.join('/')}` : tenantResource
}

/**
 * The configured base URL, else the request's origin — which the composition root must make
 * trustworthy: on Lambda it is the domain AWS routed the request by (functions/http/lambda-streaming.ts
 * reads requestContext.domainName, not Host); the node server (functions/local.ts) always configures
 * one, since its requests' origin is the client's Host header.
 */
const baseUrlOf = (settings: AuthSettings, c: Context) => (settings.publicBaseUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '')

/** GET /.well-known/oauth-protected-resource[/brain/{t}[/projects/{p}/…/mcp]]: 404 for anything that is not a resource. */
export function protectedResourceMetadata(settings: AuthSettings) {
  const servers = settings.identityProvider?.authorizationServers ?? []
  return (c: Context) => {
    const suffix = c.req.path.slice(PROTECTED_RESOURCE_PATH.length)
    if (suffix !== '' && resourcePathOf(suffix) !== suffix)
      throw new ServerToolsError('NOT_FOUND', `no protected resource '${suffix.slice(0, 200)}'`)
    c.header('cache-control', 'public, max-age=300')
    return c.json({
      resource: baseUrlOf(settings, c) + suffix,
      // without an identity provider the service has no authorization server to name: tokens come from the operator
      ...(servers.length ? { authorization_servers: servers } : {}),
      bearer_methods_supported: ['header'],
      scopes_supported: ALL_SCOPES,
      resource_name: 'Server Tools',
    })
  }
}

/**
 * Adds the RFC 6750 / RFC 9728 challenge to every 401 under /brain, and to a 403 for a missing
 * scope (`error="insufficient_scope"`, so a client can step up) — whichever route answered.
 */
export function bearerChallenge(settings: AuthSettings): MiddlewareHandler {
  return async (c, next) => {
    await next()
    const status = c.res.status
    const err = c.error
    const requiredScope =
      err instanceof ServerToolsError && typeof err.details?.requiredScope === 'string' ? err.details.requiredScope : undefined
    if (status !== 401 && !(status === 403 && requiredScope)) return
    const metadata = `${baseUrlOf(settings, c)}${PROTECTED_RESOURCE_PATH}${resourcePathOf(c.req.path) ?? ''}`
    const params = [`resource_metadata="${metadata}"`]
    if (status === 403) params.unshift('error="insufficient_scope"', `scope="${requiredScope}"`)
    else if (headerOf(c, 'authorization')) {
      // RFC 6750 §3: say why (expired, bad signature…) so a client knows to refresh rather than re-ask
      const why = err instanceof ServerToolsError ? err.message.replace(/["\\\x00-\x1f\x7f-\uffff]/g, '').slice(0, 200) : undefined
      params.unshift('error="invalid_token"', ...(why ? [`error_description="${why}"`] : []))
    }
    c.res.headers.set('www-authenticate', `Bearer ${params.join(', ')}`)
  }
}
