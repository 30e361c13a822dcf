/**
 * RFC 9728 protected-resource metadata as MCP clients use it: a 401 names the metadata URL, the
 * metadata names the resource (the URL the client called) and the authorization server.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ALL_SCOPES } from '../../functions/http/auth'
import type { IdentityProviderSettings } from '../../functions/http/token-verifier'

const IDP: IdentityProviderSettings = {
  jwksUrl: 'http://127.0.0.1:9/jwks.json', // never fetched here: no token is verified
  issuer: 'https://idp.example.test/pool-1',
  audience: ['server-tools'],
  algorithms: ['RS256'],
  tenantClaim: 'custom:tenant',
  scopeClaim: 'scope',
  refreshCooldownMs: 30_000,
  authorizationServers: ['https://login.example.test'],
}

const withIdp = () => createApp(createMemoryDeps({ auth: { identityProvider: IDP } }))

describe('protected-resource metadata', () => {
  it('follows from a 401 on the MCP route to a document naming that route, the authorization server and the scopes', async () => {
    const app = withIdp()
    const unauthorised = await app.request('/brain/acme/projects/p1/mcp', { method: 'POST' })
    const url = /resource_metadata="([^"]+)"/.exec(unauthorised.headers.get('www-authenticate') ?? '')![1]
    const res = await app.request(url)
    expect([res.status, res.headers.get('content-type')]).toEqual([200, expect.stringContaining('application/json')])
    expect(await res.json()).toEqual({
      resource: 'http://localhost/brain/acme/projects/p1/mcp',
      authorization_servers: ['https://login.example.test'],
      bearer_methods_supported: ['header'],
      scopes_supported: ALL_SCOPES,
      resource_name: 'Server Tools',
    })
  })

  it("serves the process MCP endpoint's, the tenant's and the service's metadata", async () => {
    const app = withIdp()
    for (const suffix of ['/brain/acme/projects/p1/processes/proc-1/mcp', '/brain/acme', '']) {
      const res = await app.request(`/.well-known/oauth-protected-resource${suffix}`)
      expect([res.status, ((await res.json()) as { resource: string }).resource], suffix).toEqual([200, `http://localhost${suffix}`])
    }
  })

  it('answers 404 for paths that are no resource', async () => {
    const app = withIdp()
    for (const suffix of [
      '/brain/Acme',
      '/brain/acme/projects/p1/server-tools',
      '/brain/acme/projects/p1/mcp/extra',
      '/other',
      '/brain/acme/projects/p1/processes/a%22b/mcp',
    ]) {
      const res = await app.request(`/.well-known/oauth-protected-resource${suffix}`)
      expect(res.status, suffix).toBe(404)
    }
  })

  it('names no authorization server when the deployment has no identity provider', async () => {
    const res = await createApp(createMemoryDeps()).request('/.well-known/oauth-protected-resource/brain/acme')
    const doc = (await res.json()) as Record<string, unknown>
    expect(doc.authorization_servers).toBeUndefined()
    expect(doc.bearer_methods_supported).toEqual(['header'])
  })
})
