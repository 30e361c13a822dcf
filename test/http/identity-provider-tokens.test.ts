/**
 * Tokens from the tenant's identity provider: a JWKS served on 127.0.0.1 by this test with keys
 * it generates, the app verifying RS256/ES256 tokens against it — rotation, refresh limits,
 * pinned algorithms, issuer/audience/expiry, claim names.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportSPKI, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { type IdentityProviderSettings, MAX_JWKS_BYTES } from '../../functions/http/token-verifier'
import { MemoryLogger } from '../../lib/runtime/logger'
import { client, TEST_SECRET, tokenFor } from '../support/http'
import { AUDIENCE, ISSUER, idpToken, JwksServer, type SigningKey, signingKey } from '../support/jwks'

const TOOLS = '/brain/acme/projects/p1/server-tools'
const nowSeconds = () => Math.floor(Date.now() / 1000)

const jwks = new JwksServer()
let rsa: SigningKey
let ec: SigningKey

beforeAll(async () => {
  await jwks.start()
  ;[rsa, ec] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256')])
})
afterAll(() => jwks.stop())

function appWith(idp: Partial<IdentityProviderSettings> = {}, opts: { jwtSecret?: string; maxTokenLifetimeSeconds?: number } = {}) {
  return createApp(
    createMemoryDeps({
      jwtSecret: opts.jwtSecret ?? TEST_SECRET,
      auth: { identityProvider: jwks.settings(idp), maxTokenLifetimeSeconds: opts.maxTokenLifetimeSeconds },
    }),
  )
}

describe('identity-provider tokens', () => {
  it('accepts RS256 and ES256 tokens signed with keys from the JWKS', async () => {
    jwks.published = [rsa, ec]
    const app = appWith()
    for (const key of [rsa, ec]) {
      const res = await client(app, await idpToken(key)).get(TOOLS)
      expect(res.status, key.alg).toBe(200)
    }
  })

  it('takes the tenant, subject and scopes from the configured claims (scp as an array)', async () => {
    jwks.published = [rsa]
    const app = appWith()
    const writer = client(app, await idpToken(rsa, { scp: ['tools:read', 'tools:write'] }))
    const put = await writer.put('/brain/acme/projects/p1/documents/notes/a.md', '# a', { 'content-type': 'text/markdown' })
    expect([put.status, (await put.json()).updatedBy]).toEqual([201, 'user-42'])
    // tools:read only: a write is refused for the scope, and says which one
    const reader = client(app, await idpToken(rsa))
    const refused = await reader.put('/brain/acme/projects/p1/documents/notes/b.md', '# b', { 'content-type': 'text/markdown' })
    expect([refused.status, (await refused.json()).detail]).toEqual([403, expect.stringContaining('tools:write')])
    // another tenant in the configured claim: 403, like an HS256 token for another tenant
    expect((await client(app, await idpToken(rsa, { 'custom:tenant': 'globex' })).get(TOOLS)).status).toBe(403)
    // the service's own claim name means nothing for this issuer
    expect((await client(app, await idpToken(rsa, { 'custom:tenant': undefined, tenant: 'acme' })).get(TOOLS)).status).toBe(401)
  })

  it('reads space-separated scopes when the scope claim is a string', async () => {
    jwks.published = [ec]
    const app = appWith({ scopeClaim: 'scope' })
    expect((await client(app, await idpToken(ec, { scope: 'tools:invoke tools:read', scp: undefined })).get(TOOLS)).status).toBe(200)
    expect((await client(app, await idpToken(ec, { scope: 'tools:invoke', scp: ['tools:read'] })).get(TOOLS)).status).toBe(403)
  })

  it('fetches the key set again when a new kid appears, and refuses a removed key after that refresh', async () => {
    jwks.published = [rsa]
    const app = appWith()
    expect((await client(app, await idpToken(rsa)).get(TOOLS)).status).toBe(200)
    const rotated = await signingKey('rsa-2', 'RS256')
    jwks.published = [rotated] // the provider rotates: rsa-1 is gone, rsa-2 is new
    const before = jwks.fetches
    expect((await client(app, await idpToken(rotated)).get(TOOLS)).status).toBe(200)
    expect(jwks.fetches).toBe(before + 1)
    // a token not seen before (the same claims within one second would be the same token, which the
    // verified-token cache may still trust for up to a minute, as documented)
    const removed = await client(app, await idpToken(rsa, { jti: 'after-rotation' })).get(TOOLS)
    expect([removed.status, (await removed.json()).detail]).toEqual([401, expect.stringContaining("'kid'")])
  })

  it('refreshes at most once per cooldown however many unknown kids arrive', async () => {
    jwks.published = [rsa]
    const app = appWith({ refreshCooldownMs: 60_000 })
    expect((await client(app, await idpToken(rsa)).get(TOOLS)).status).toBe(200)
    const fetched = jwks.fetches
    for (let i = 0; i < 5; i++) {
      const res = await client(app, await idpToken(rsa, {}, { kid: `made-up-${i}` })).get(TOOLS)
      expect(res.status).toBe(401)
    }
    expect(jwks.fetches).toBe(fetched)
  })

  it('answers 401 to an unknown kid that the refreshed set does not have either', async () => {
    jwks.published = [rsa]
    const stranger = await signingKey('not-published', 'RS256')
    const app = appWith()
    const before = jwks.fetches
    const res = await client(app, await idpToken(stranger)).get(TOOLS)
    expect([res.status, (await res.json()).code]).toEqual([401, 'UNAUTHENTICATED'])
    expect(jwks.fetches).toBeGreaterThan(before)
  })

  it('reads the key set up to 256 KiB: a set just under is used, one over is a 502 and never parsed', async () => {
    jwks.published = [rsa]
    try {
      jwks.padding = MAX_JWKS_BYTES - 4096
      expect((await client(appWith(), await idpToken(rsa)).get(TOOLS)).status).toBe(200)
      jwks.padding = MAX_JWKS_BYTES + 1
      const res = await client(appWith(), await idpToken(rsa)).get(TOOLS)
      expect([res.status, (await res.json()).code]).toEqual([502, 'UPSTREAM_FAILURE'])
      jwks.padding = 8 * 1024 * 1024 // 8 MiB: read no further than the limit
      const huge = await client(appWith(), await idpToken(rsa)).get(TOOLS)
      expect(huge.status).toBe(502)
    } finally {
      jwks.padding = 0
    }
  })

  it('answers 401 to a key that claims a published kid but is not that key', async () => {
    jwks.published = [rsa]
    const impostor = await signingKey('rsa-1', 'RS256')
    const res = await client(appWith(), await idpToken(impostor)).get(TOOLS)
    expect([res.status, (await res.json()).detail]).toEqual([401, expect.stringContaining('signature')])
  })

  it('answers 401 to a wrong issuer, a wrong audience, an expired token and a token without exp', async () => {
    jwks.published = [rsa]
    const app = appWith()
    const cases: [string, Promise<string>, RegExp][] = [
      ['issuer', idpToken(rsa, {}, { issuer: 'https://evil.example.test' }), /'iss'/],
      ['audience', idpToken(rsa, {}, { audience: 'another-api' }), /'aud'/],
      ['expired', idpToken(rsa, {}, { expiresIn: -60 }), /expired/],
      ['no exp', idpToken(rsa, {}, { expiresIn: null }), /'exp'/],
    ]
    for (const [what, token, detail] of cases) {
      const res = await client(app, await token).get(TOOLS)
      expect([res.status, (await res.json()).detail], what).toEqual([401, expect.stringMatching(detail)])
    }
  })

  it('caps the lifetime of identity-provider tokens too', async () => {
    jwks.published = [rsa]
    const app = appWith({}, { maxTokenLifetimeSeconds: 3600 })
    expect((await client(app, await idpToken(rsa, {}, { expiresIn: 3600 })).get(TOOLS)).status).toBe(200)
    const res = await client(app, await idpToken(rsa, {}, { expiresIn: 7200 })).get(TOOLS)
    expect([res.status, (await res.json()).detail]).toEqual([401, expect.stringContaining('longer than this deployment allows')])
  })

  it('never takes the algorithm from the token: alg none, HS256 signed with the public key, and unlisted algorithms are 401', async () => {
    jwks.published = [rsa, ec]
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
    const claims = { 'custom:tenant': 'acme', sub: 'eve', scp: ['tools:read'], iss: ISSUER, aud: AUDIENCE, exp: nowSeconds() + 600 }
    const unsigned = `${b64({ alg: 'none', typ: 'JWT', kid: 'rsa-1' })}.${b64(claims)}.`
    // the classic confusion: the public key (as published, in PEM) used as an HMAC secret
    const pem = await exportSPKI(rsa.pair.publicKey)
    const hmacWithPublicKey = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .sign(new TextEncoder().encode(pem))
    for (const app of [appWith(), appWith({}, { jwtSecret: '' })]) {
      for (const token of [unsigned, hmacWithPublicKey]) expect((await client(app, token).get(TOOLS)).status).toBe(401)
    }
    // ES256 is published but this deployment lists RS256 only
    const rsOnly = appWith({ algorithms: ['RS256'] })
    const res = await client(rsOnly, await idpToken(ec)).get(TOOLS)
    expect([res.status, (await res.json()).detail]).toEqual([401, expect.stringContaining("algorithm 'ES256' is not accepted")])
  })

  it('keeps accepting HS256 tokens of the deployment secret beside the identity provider', async () => {
    jwks.published = [rsa]
    expect((await client(appWith(), await tokenFor('acme')).get(TOOLS)).status).toBe(200)
  })

  it('verifies a token again when only its signature differs from a remembered one', async () => {
    jwks.published = [rsa]
    const app = appWith()
    const token = await idpToken(rsa)
    expect((await client(app, token).get(TOOLS)).status).toBe(200)
    const [header, payload, signature] = token.split('.')
    const tampered = `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`
    expect((await client(app, tampered).get(TOOLS)).status).toBe(401)
  })

  it("answers 502 when the identity provider's keys cannot be fetched, and logs where from", async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()))
    const jwksUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/jwks.json`
    await new Promise<void>((r) => closed.close(() => r()))
    const log = new MemoryLogger()
    const app = createApp(createMemoryDeps({ log, auth: { identityProvider: jwks.settings({ jwksUrl }) } }))
    const res = await client(app, await idpToken(rsa)).get(TOOLS)
    const body = await res.json()
    expect([res.status, body.code, body.detail]).toEqual([502, 'UPSTREAM_FAILURE', expect.not.stringContaining('127.0.0.1')])
    expect(log.find('auth.jwks_unavailable')).toEqual([
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ jwksUrl }) }),
    ])
  })
})
