/**
 * `server-tools token`: tokens from `npm start`'s own secret that the running service accepts with
 * exactly the scopes asked for; refusals where tokens come from an identity provider, and for
 * requests the service would refuse anyway.
 */
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServerType, serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../functions/cli/main'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { type LocalService, startLocalService } from '../support/npm-start'

const work = mkdtempSync(join(tmpdir(), 'server-tools-token-'))
const dataDir = join(work, 'data')
let service: LocalService
let idpService: ServerType
let idpUrl: string

beforeAll(async () => {
  service = await startLocalService(dataDir)
  // a deployment whose tokens come from an identity provider (its keys are never fetched here)
  const deps = createMemoryDeps({
    auth: {
      identityProvider: {
        jwksUrl: 'http://127.0.0.1:9/jwks.json',
        issuer: 'https://idp.example.test/pool-1',
        audience: ['server-tools'],
        algorithms: ['RS256'],
        tenantClaim: 'custom:tenant',
        scopeClaim: 'scope',
        refreshCooldownMs: 30_000,
        authorizationServers: ['https://login.example.test'],
      },
    },
  })
  idpService = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
  await once(idpService, 'listening')
  idpUrl = `http://127.0.0.1:${(idpService.address() as AddressInfo).port}/brain/acme`
}, 30_000)

afterAll(() => {
  if (service?.child.exitCode === null) service.child.kill('SIGKILL')
  idpService?.close()
  rmSync(work, { recursive: true, force: true })
})

async function token(args: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = []
  const err: string[] = []
  const code = await run(['token', ...args], { out: (t) => out.push(t), err: (t) => err.push(t), env })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString())
const call = (path: string, jwt: string, init: RequestInit = {}) =>
  fetch(`${service.url.replace('/brain/demo', '/brain/ci')}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/yaml', ...(init.headers ?? {}) },
  })
const tool = 'type: doc_lookup\ndescription: The handbook.\nparameters:\n  path: documents/getting-started.md\n'

describe('server-tools token', () => {
  it("mints a read-only token from npm start's secret that the service accepts for reads and refuses for writes", async () => {
    const minted = await token(['--tenant', 'ci', '--scope', 'tools:read', '--ttl', '30d', '--data-dir', dataDir], { ST_URL: service.url })
    expect([minted.code, minted.err]).toEqual([0, expect.stringContaining(join(dataDir, 'jwt-secret'))])
    const claims = claimsOf(minted.out)
    expect([claims.tenant, claims.scope, claims.exp - claims.iat]).toEqual(['ci', 'tools:read', 30 * 86_400])
    expect((await call('/projects/p1/server-tools', minted.out)).status).toBe(200)
    const write = await call('/projects/p1/server-tools/handbook', minted.out, { method: 'PUT', body: tool })
    expect([write.status, write.headers.get('www-authenticate')]).toEqual([403, expect.stringContaining('scope="tools:write"')])
  })

  it('mints the admin token a CI apply needs: it writes the tenant layer and calls a tool, for that tenant only', async () => {
    const minted = await token(
      ['--tenant', 'ci', '--scope', 'tools:read', 'tools:write', 'tools:invoke,tenant:admin', '--ttl', '1h', '--subject', 'ci-deploy'],
      { DATA_DIR: dataDir },
    )
    expect(minted.code).toBe(0)
    const write = await call('/projects/_tenant/server-tools/handbook', minted.out, { method: 'PUT', body: tool })
    expect(write.status).toBe(201)
    const invoke = await call('/projects/p1/tools/whoami/invoke', minted.out, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"params":{}}',
    })
    expect([invoke.status, await invoke.json()]).toEqual([
      200,
      { isError: false, content: { tenant: 'ci', project: 'p1', subject: 'ci-deploy' } },
    ])
    const otherTenant = await fetch(`${service.url}/projects/p1/server-tools`, { headers: { authorization: `Bearer ${minted.out}` } })
    expect(otherTenant.status).toBe(403)
  })

  it('signs with AUTH_JWT_SECRET when it is set, as the service does', async () => {
    const minted = await token(['--tenant', 'ci', '--scope', 'tools:read', '--offline'], {
      AUTH_JWT_SECRET: 'not-the-local-one',
      DATA_DIR: dataDir,
    })
    expect([minted.code, minted.err]).toEqual([0, expect.stringContaining('signed with AUTH_JWT_SECRET')])
    expect((await call('/projects/p1/server-tools', minted.out)).status).toBe(401)
  })

  it('refuses where AUTH_JWKS_URL says an identity provider issues the tokens, naming it and the claims it needs', async () => {
    const refused = await token(['--tenant', 'ci', '--scope', 'tools:read', '--data-dir', dataDir], {
      AUTH_JWKS_URL: 'https://idp.example.test/.well-known/jwks.json',
      AUTH_ISSUER: 'https://idp.example.test/pool-1',
      AUTH_TENANT_CLAIM: 'custom:tenant',
    })
    expect([refused.code, refused.out]).toEqual([1, ''])
    expect(refused.err).toMatch(/takes tokens from its identity provider \(https:\/\/idp\.example\.test\/pool-1\).*'custom:tenant' claim/)
  })

  it('refuses when the service at ST_URL names an authorization server in its metadata, even with the secret at hand', async () => {
    const refused = await token(['--tenant', 'acme', '--scope', 'tools:read', '--data-dir', dataDir], { ST_URL: idpUrl })
    expect([refused.code, refused.out]).toEqual([1, ''])
    expect(refused.err).toContain('takes tokens from its identity provider (https://login.example.test)')
  })

  it('refuses, without minting, what the service would refuse: an unknown scope, a bad or too long lifetime, a bad tenant', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--scope', 'tools:admin'], {}, /unknown scope tools:admin; the scopes are tools:read, /],
      [['--scope', 'tools:read', '--ttl', '1w'], {}, /--ttl must be a positive duration/],
      [['--scope', 'tools:read', '--ttl', '0'], {}, /--ttl must be a positive duration/],
      [['--scope', 'tools:read', '--ttl', '31d'], {}, /longer than the deployment accepts \(AUTH_MAX_TOKEN_LIFETIME_SECONDS: 2592000 s\)/],
      [['--scope', 'tools:read', '--ttl', '2h'], { AUTH_MAX_TOKEN_LIFETIME_SECONDS: '3600' }, /AUTH_MAX_TOKEN_LIFETIME_SECONDS: 3600 s/],
    ]
    for (const [args, env, message] of cases) {
      const refused = await token(['--tenant', 'ci', '--offline', '--data-dir', dataDir, ...args], env)
      expect([refused.code, refused.out, refused.err], args.join(' ')).toEqual([1, '', expect.stringMatching(message)])
    }
    const badTenant = await token(['--tenant', 'Not A Tenant', '--scope', 'tools:read', '--offline', '--data-dir', dataDir])
    expect([badTenant.code, badTenant.err]).toEqual([1, expect.stringContaining('--tenant must be a tenant id')])
  })

  it('says where a secret comes from when there is none', async () => {
    const empty = join(work, 'never-started')
    mkdirSync(empty)
    const refused = await token(['--tenant', 'ci', '--scope', 'tools:read', '--offline', '--data-dir', empty])
    expect([refused.code, refused.err]).toEqual([
      1,
      expect.stringMatching(/no signing secret: .*never-started\/jwt-secret does not exist \(npm start writes it/),
    ])
  })

  it('refuses to guess when the service at ST_URL cannot be asked, unless told --offline', async () => {
    const closed = 'http://127.0.0.1:9/brain/ci' // the discard port: nothing listens
    const refused = await token(['--tenant', 'ci', '--scope', 'tools:read', '--data-dir', dataDir], { ST_URL: closed })
    expect([refused.code, refused.err]).toEqual([1, expect.stringContaining('pass --offline to mint without asking')])
    expect((await token(['--tenant', 'ci', '--scope', 'tools:read', '--data-dir', dataDir, '--offline'], { ST_URL: closed })).code).toBe(0)
  })
})
