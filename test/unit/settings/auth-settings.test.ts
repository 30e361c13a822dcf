/** Token settings from the environment: what a deployment may set, and what fails its cold start. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { authSettingsFromEnv } from '../../../functions/settings'

const IDP_ENV = {
  AUTH_JWKS_URL: 'https://idp.example.test/.well-known/jwks.json',
  AUTH_ISSUER: 'https://idp.example.test',
  AUTH_AUDIENCE: 'server-tools',
}

function withEnv(env: Record<string, string>) {
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v)
}

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('auth settings', () => {
  it('defaults to HS256 only, tokens of at most 30 days, the origin of each request', () => {
    for (const name of ['AUTH_JWKS_URL', 'AUTH_MAX_TOKEN_LIFETIME_SECONDS', 'PUBLIC_BASE_URL']) vi.stubEnv(name, '')
    expect(authSettingsFromEnv()).toEqual({ maxTokenLifetimeSeconds: 2_592_000, publicBaseUrl: undefined, identityProvider: undefined })
  })

  it('reads the identity provider with its claim names, algorithms, refresh cooldown and authorization servers', () => {
    withEnv({
      ...IDP_ENV,
      AUTH_AUDIENCE: 'server-tools, api://tools',
      AUTH_TENANT_CLAIM: 'custom:tenant',
      AUTH_SCOPE_CLAIM: 'scp',
      AUTH_ALGORITHMS: 'ES256',
      AUTH_JWKS_REFRESH_SECONDS: '10',
      AUTH_AUTHORIZATION_SERVERS: 'https://login.example.test',
    })
    expect(authSettingsFromEnv().identityProvider).toEqual({
      jwksUrl: IDP_ENV.AUTH_JWKS_URL,
      issuer: IDP_ENV.AUTH_ISSUER,
      audience: ['server-tools', 'api://tools'],
      algorithms: ['ES256'],
      tenantClaim: 'custom:tenant',
      scopeClaim: 'scp',
      refreshCooldownMs: 10_000,
      authorizationServers: ['https://login.example.test'],
    })
  })

  it('names the issuer as the authorization server and pins RS256 and ES256 unless told otherwise', () => {
    withEnv({ ...IDP_ENV, AUTH_ALGORITHMS: '', AUTH_AUTHORIZATION_SERVERS: '', AUTH_TENANT_CLAIM: '', AUTH_SCOPE_CLAIM: '' })
    expect(authSettingsFromEnv().identityProvider).toMatchObject({
      algorithms: ['RS256', 'ES256'],
      authorizationServers: [IDP_ENV.AUTH_ISSUER],
      tenantClaim: 'tenant',
      scopeClaim: 'scope',
      refreshCooldownMs: 30_000,
    })
  })

  it('fails the cold start on settings that would weaken verification', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ...IDP_ENV, AUTH_ISSUER: '' }, /AUTH_ISSUER must be set/],
      [{ ...IDP_ENV, AUTH_AUDIENCE: '' }, /AUTH_AUDIENCE must be set/],
      [{ ...IDP_ENV, AUTH_ALGORITHMS: 'RS256,HS256' }, /AUTH_ALGORITHMS must list asymmetric algorithms.*HS256/],
      [{ ...IDP_ENV, AUTH_ALGORITHMS: 'none' }, /AUTH_ALGORITHMS/],
      [{ ...IDP_ENV, AUTH_JWKS_URL: 'http://idp.example.test/jwks.json' }, /must be https/],
      [{ ...IDP_ENV, AUTH_JWKS_URL: 'not a url' }, /absolute URL/],
      [{ AUTH_MAX_TOKEN_LIFETIME_SECONDS: '30d' }, /AUTH_MAX_TOKEN_LIFETIME_SECONDS/],
      [{ PUBLIC_BASE_URL: 'ftp://tools.example.test' }, /PUBLIC_BASE_URL must be an http\(s\) URL/],
    ]
    for (const [env, error] of cases) {
      vi.unstubAllEnvs()
      withEnv(env)
      expect(() => authSettingsFromEnv(), JSON.stringify(env)).toThrow(error)
    }
  })

  it('allows plain http for a JWKS on loopback (a local identity provider)', () => {
    withEnv({ ...IDP_ENV, AUTH_JWKS_URL: 'http://127.0.0.1:8080/jwks.json' })
    expect(authSettingsFromEnv().identityProvider?.jwksUrl).toBe('http://127.0.0.1:8080/jwks.json')
  })
})
