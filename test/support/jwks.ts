/** A tenant identity provider for tests: keys generated here, their JWKS served on 127.0.0.1, tokens signed with them. */
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import type { IdentityProviderSettings } from '../../functions/http/token-verifier'

export const ISSUER = 'https://idp.example.test/pool-1'
export const AUDIENCE = 'server-tools'

export interface SigningKey {
  kid: string
  alg: 'RS256' | 'ES256'
  pair: Awaited<ReturnType<typeof generateKeyPair>>
  jwk: JWK
}

export async function signingKey(kid: string, alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const pair = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, pair, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' } }
}

/** The provider's JWKS endpoint: serves whatever keys the test publishes, counting fetches. */
export class JwksServer {
  published: SigningKey[] = []
  /** Bytes of filler the served set carries besides its keys (a provider that answers too much). */
  padding = 0
  fetches = 0
  url = ''
  private server?: Server
  async start() {
    this.server = createServer((_req, res) => {
      this.fetches++
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ keys: this.published.map((k) => k.jwk), ...(this.padding ? { filler: 'x'.repeat(this.padding) } : {}) }))
    })
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', () => r()))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/.well-known/jwks.json`
  }
  stop() {
    return new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()))
  }
  /** Settings for this provider: Cognito-style tenant claim, Entra-style `scp` array, no refresh cooldown. */
  settings(overrides: Partial<IdentityProviderSettings> = {}): IdentityProviderSettings {
    return {
      jwksUrl: this.url,
      issuer: ISSUER,
      audience: [AUDIENCE],
      algorithms: ['RS256', 'ES256'],
      tenantClaim: 'custom:tenant',
      scopeClaim: 'scp',
      refreshCooldownMs: 0,
      authorizationServers: [ISSUER],
      ...overrides,
    }
  }
}

/**
 * A token as the provider would issue it (tenant acme, subject user-42, tools:read, 10 minutes),
 * with overrides. Each has its own `jti`: RS256 signatures are deterministic, so two tokens with the
 * same claims in the same second would otherwise be one token, and the second a cache hit.
 */
export function idpToken(
  key: SigningKey,
  claims: Record<string, unknown> = {},
  opts: { issuer?: string; audience?: string; expiresIn?: number | null; kid?: string } = {},
) {
  const jwt = new SignJWT({ 'custom:tenant': 'acme', scp: ['tools:read'], sub: 'user-42', jti: randomUUID(), ...claims })
    .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'JWT' })
    .setIssuedAt()
    .setIssuer(opts.issuer ?? ISSUER)
    .setAudience(opts.audience ?? AUDIENCE)
  if (opts.expiresIn !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + (opts.expiresIn ?? 600))
  return jwt.sign(key.pair.privateKey)
}
