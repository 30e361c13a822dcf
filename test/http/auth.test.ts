/**
 * Authentication and authorisation at the HTTP edge: tokens (401), tenants (403), scopes (403),
 * ids (400) — and a walk over every route of the app, so a route added later is covered without
 * anyone remembering to add it here.
 */
import { sign } from 'hono/jwt'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { issueToken } from '../../functions/http/auth'
import type { DeleteOptions, DocumentKey, NewDocument, PutOptions } from '../../lib/documents/ports'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { ALL, client, TEST_SECRET, type TestResponse, tokenFor } from '../support/http'

const nowSeconds = () => Math.floor(Date.now() / 1000)

/** The memory store, counting what reaches it. */
class CountingStore extends MemoryDocumentStore {
  reads = 0
  writes = 0
  override async get(key: DocumentKey) {
    this.reads++
    return super.get(key)
  }
  override async getMany(keys: DocumentKey[]) {
    this.reads++
    return super.getMany(keys)
  }
  override async list(scope: string, prefix: string) {
    this.reads++
    return super.list(scope, prefix)
  }
  override async put(doc: NewDocument, opts?: PutOptions) {
    this.writes++
    return super.put(doc, opts)
  }
  override async delete(key: DocumentKey, opts?: DeleteOptions) {
    this.writes++
    return super.delete(key, opts)
  }
}

/** Wraps every service in the deps (tools, documents, dispatcher, and whatever is added later) to record calls; static data (console assets) is not a service. */
function instrumented(deps: Record<string, unknown>, calls: string[]) {
  const out: Record<string, unknown> = { ...deps }
  for (const [name, service] of Object.entries(deps)) {
    // observability, the audit log and the fair-share gate see every request, refused ones included: they are not what a refusal may not reach
    if (
      ['auth', 'log', 'clock', 'consoleAssets', 'observability', 'audit', 'fairShare'].includes(name) ||
      !service ||
      typeof service !== 'object'
    )
      continue
    out[name] = new Proxy(service, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.push(`${name}.${String(prop)}`)
          return value.apply(target, args)
        }
      },
    })
  }
  return out
}

function setup() {
  const store = new CountingStore()
  const calls: string[] = []
  const deps = createMemoryDeps({ store })
  const app = createApp(instrumented(deps as unknown as Record<string, unknown>, calls) as unknown as typeof deps)
  store.reads = 0
  store.writes = 0
  return { app, store, calls }
}

type App = ReturnType<typeof createApp>
interface Route {
  method: string
  path: string
}

/** Every concrete route of the app (middleware entries and duplicates dropped). */
function routesOf(app: App): Route[] {
  const seen = new Map<string, Route>()
  for (const r of app.routes) {
    if (r.method === 'ALL') continue
    seen.set(`${r.method} ${r.path}`, { method: r.method, path: r.path })
  }
  return [...seen.values()]
}

/** Valid values for path parameters, so that only auth can be the reason for a refusal. */
const PARAM_VALUES: Record<string, string> = {
  tenant: 'acme',
  project: 'p1',
  name: 'doc_getting_started',
  id: 'proc-1',
  path: 'documents/getting-started.md',
}

function concretePath(route: Route, tenant = 'acme'): string {
  return route.path
    .replace(/:(\w+)(\{[^}]*\})?/g, (_, p: string) => (p === 'tenant' ? tenant : (PARAM_VALUES[p] ?? 'x1')))
    .replace(/\/\*$/, `/${PARAM_VALUES.path}`)
}

/** Scopes each route needs: reads tools:read, writes tools:write, invocations tools:invoke, unless listed. */
const SCOPE_OF: Record<string, string> = {
  'POST /brain/:tenant/projects/:project/tools/:name/invoke': 'tools:invoke',
  // Agent-runtime calls: spawning a process, its tool calls and diagnostics, and learning an endpoint's limit.
  'POST /brain/:tenant/projects/:project/processes': 'tools:invoke',
  'POST /brain/:tenant/projects/:project/processes/:id/tool-calls': 'tools:invoke',
  'POST /brain/:tenant/projects/:project/processes/:id/diagnostics/empty-response': 'tools:invoke',
  'POST /brain/:tenant/models/observed-limits': 'limits:report',
  'PUT /brain/:tenant/projects/:project/processes/:id/client-tools': 'tools:invoke',
  // MCP: a body that neither starts a session nor calls a tool (tools/list, ping) needs tools:read; ending a session tools:invoke.
  'POST /brain/:tenant/projects/:project/mcp': 'tools:read',
  'POST /brain/:tenant/projects/:project/processes/:id/mcp': 'tools:read',
  'DELETE /brain/:tenant/projects/:project/mcp': 'tools:invoke',
  'DELETE /brain/:tenant/projects/:project/processes/:id/mcp': 'tools:invoke',
  'PUT /brain/:tenant/secrets/:name': 'secrets:write',
  'DELETE /brain/:tenant/secrets/:name': 'secrets:write',
  'GET /brain/:tenant/admin/projects/:project/insights/tool-usage': 'insights:read',
  // A preview computes a spawn but stores nothing: a read.
  'POST /brain/:tenant/projects/:project/surface/preview': 'tools:read',
  'GET /brain/:tenant/audit': 'audit:read',
}
/** Routes that also accept tenant:admin in place of their own scope. */
const ADMIN_ALTERNATIVE = new Set(['GET /brain/:tenant/audit'])
const scopeFor = (r: Route) => SCOPE_OF[`${r.method} ${r.path}`] ?? (r.method === 'GET' ? 'tools:read' : 'tools:write')

/** The only routes that answer without a token. */
const PUBLIC_ROUTES = [
  'GET /openapi.json',
  'GET /health',
  'GET /.well-known/oauth-protected-resource',
  'GET /.well-known/oauth-protected-resource/*',
]

function request(app: App, route: Route, token: string | undefined, tenant = 'acme'): Promise<TestResponse> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  let body: string | undefined
  if (route.method !== 'GET' && route.method !== 'DELETE') {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(
      route.path.includes('server-tools')
        ? { type: 'doc_lookup', description: 'x', parameters: { path: 'documents/getting-started.md' } }
        : { params: {}, value: 'v' },
    )
  }
  return Promise.resolve(app.request(concretePath(route, tenant), { method: route.method, headers, body })) as Promise<TestResponse>
}

const TOOL_PATH = '/brain/acme/projects/p1/server-tools/doc_getting_started'

describe('authentication', () => {
  let app: App
  beforeEach(() => {
    app = setup().app
  })

  it('answers 401 problem+json when there is no token', async () => {
    const res = await client(app).get(TOOL_PATH)
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
    expect(await res.json()).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
  })

  it('answers 401 to an Authorization header that is not a bearer token', async () => {
    const res = await app.request(TOOL_PATH, { headers: { authorization: 'Basic YWxpY2U6c2VjcmV0' } })
    expect(res.status).toBe(401)
  })

  it('answers 401 to malformed tokens', async () => {
    for (const token of ['not-a-jwt', 'a.b.c', 'eyJhbGciOiJIUzI1NiJ9..', '...']) {
      const res = await client(app, token).get(TOOL_PATH)
      expect(res.status, token).toBe(401)
    }
  })

  it('answers 401 to a token signed with another secret', async () => {
    const res = await client(app, await tokenFor('acme', ALL, 'alice', 'some-other-secret')).get(TOOL_PATH)
    expect(res.status).toBe(401)
    expect((await res.json()).detail).toMatch(/signature/)
  })

  it('answers 401 to an unsigned (alg none) token', async () => {
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ tenant: 'acme', sub: 'eve', scope: ALL, exp: nowSeconds() + 600 })}.`
    expect((await client(app, token).get(TOOL_PATH)).status).toBe(401)
  })

  it('answers 401 to an expired token and says so', async () => {
    const token = await issueToken(TEST_SECRET, { tenant: 'acme', sub: 'alice', scope: ALL, expiresInSeconds: 60 }, nowSeconds() - 3600)
    const res = await client(app, token).get(TOOL_PATH)
    expect(res.status).toBe(401)
    expect((await res.json()).detail).toMatch(/expired/)
  })

  it('stops accepting a remembered token once it expires', async () => {
    const token = await issueToken(TEST_SECRET, { tenant: 'acme', sub: 'alice', scope: ALL, expiresInSeconds: 2 }, nowSeconds())
    const api = client(app, token)
    expect((await api.get(TOOL_PATH)).status).not.toBe(401)
    expect((await api.get(TOOL_PATH)).status).not.toBe(401) // served from the verified-token cache
    await new Promise((r) => setTimeout(r, 2_100))
    expect((await api.get(TOOL_PATH)).status).toBe(401)
  })

  it('answers 401 to a token that is not valid yet', async () => {
    const token = await sign(
      { tenant: 'acme', sub: 'alice', scope: ALL, nbf: nowSeconds() + 3600, exp: nowSeconds() + 7200 },
      TEST_SECRET,
      'HS256',
    )
    expect((await client(app, token).get(TOOL_PATH)).status).toBe(401)
  })

  it('answers 401 to a token without tenant or sub claims', async () => {
    for (const claims of [
      { sub: 'alice', scope: ALL },
      { tenant: 'acme', scope: ALL },
      { tenant: 7, sub: 'alice', scope: ALL },
    ]) {
      const token = await sign({ ...claims, exp: nowSeconds() + 600 }, TEST_SECRET, 'HS256')
      expect((await client(app, token).get(TOOL_PATH)).status, JSON.stringify(claims)).toBe(401)
    }
  })
})

describe('token lifetime', () => {
  it('answers 401 to a token without exp and says tokens must expire', async () => {
    const { app } = setup()
    const token = await sign({ tenant: 'acme', sub: 'alice', scope: ALL, iat: nowSeconds() }, TEST_SECRET, 'HS256')
    const res = await client(app, token).get(TOOL_PATH)
    expect([res.status, (await res.json()).detail]).toEqual([401, expect.stringContaining("no 'exp' claim")])
  })

  it('accepts a token of exactly 30 days by default (what npm start prints) and refuses one a second longer', async () => {
    const { app } = setup()
    const days30 = 30 * 24 * 3600
    expect((await client(app, await tokenFor('acme', ALL, 'alice', TEST_SECRET, days30)).get(TOOL_PATH)).status).not.toBe(401)
    const res = await client(app, await tokenFor('acme', ALL, 'alice', TEST_SECRET, days30 + 1)).get(TOOL_PATH)
    expect([res.status, (await res.json()).detail]).toEqual([
      401,
      expect.stringContaining('longer than this deployment allows (2592000 s)'),
    ])
  })

  it('measures the lifetime from now when iat is missing or in the future, and from iat when it is past', async () => {
    const app = createApp(createMemoryDeps({ auth: { maxTokenLifetimeSeconds: 3600 } }))
    const now = nowSeconds()
    const outcomes: number[] = []
    for (const claims of [
      { exp: now + 3000 }, // no iat, within the cap
      { exp: now + 7200 }, // no iat, beyond the cap
      { iat: now + 86_400, exp: now + 86_400 + 600 }, // a future iat does not hide a far exp
      { iat: now - 3000, exp: now + 1200 }, // issued for 4200 s an hour ago: over the cap though 20 min remain
      { iat: now - 1200, exp: now + 1200 },
    ]) {
      const token = await sign({ tenant: 'acme', sub: 'alice', scope: ALL, ...claims }, TEST_SECRET, 'HS256')
      outcomes.push((await client(app, token).get(TOOL_PATH)).status)
    }
    expect(outcomes.map((s) => s === 401)).toEqual([false, true, true, true, false])
  })
})

describe('WWW-Authenticate', () => {
  const metadata = 'http://localhost/.well-known/oauth-protected-resource'

  it('points every 401 under /brain at the protected-resource metadata of the tenant', async () => {
    const { app } = setup()
    for (const path of [TOOL_PATH, '/brain/acme/secrets', '/brain/acme/projects/p1/processes/abc/manifest']) {
      const res = await app.request(path)
      expect([res.status, res.headers.get('www-authenticate')], path).toEqual([401, `Bearer resource_metadata="${metadata}/brain/acme"`])
    }
  })

  it('names the MCP endpoint itself as the resource on the MCP routes', async () => {
    const { app } = setup()
    for (const path of ['/brain/acme/projects/p1/mcp', '/brain/acme/projects/p1/processes/proc-1/mcp']) {
      const res = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      expect([res.status, res.headers.get('www-authenticate')], path).toEqual([401, `Bearer resource_metadata="${metadata}${path}"`])
    }
  })

  it('says invalid_token, and why, when a token was sent and refused', async () => {
    const { app } = setup()
    const res = await client(app, await tokenFor('acme', ALL, 'alice', 'another-secret')).get(TOOL_PATH)
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", error_description="the bearer token is not valid: bad signature or format", resource_metadata="${metadata}/brain/acme"`,
    )
  })

  it('says insufficient_scope and which scope on a 403 for a missing scope, and nothing on a 403 for another tenant', async () => {
    const { app } = setup()
    const res = await client(app, await tokenFor('acme', 'tools:read')).put(TOOL_PATH, { type: 'doc_lookup', description: 'x' })
    expect([res.status, res.headers.get('www-authenticate')]).toEqual([
      403,
      `Bearer error="insufficient_scope", scope="tools:write", resource_metadata="${metadata}/brain/acme"`,
    ])
    const other = await client(app, await tokenFor('globex')).get(TOOL_PATH)
    expect([other.status, other.headers.get('www-authenticate')]).toEqual([403, null])
  })

  it('uses PUBLIC_BASE_URL when the deployment sets it', async () => {
    const app = createApp(createMemoryDeps({ auth: { publicBaseUrl: 'https://tools.example.test/' } }))
    const res = await app.request(TOOL_PATH)
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer resource_metadata="https://tools.example.test/.well-known/oauth-protected-resource/brain/acme"',
    )
  })
})

describe('tenants and ids', () => {
  it('answers 403 when the token is for another tenant than the path', async () => {
    const { app } = setup()
    const res = await client(app, await tokenFor('globex')).get(TOOL_PATH)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ status: 403, code: 'FORBIDDEN' })
  })

  it('answers 400 to a tenant id that breaks the id rule, even with a matching token', async () => {
    const { app, store } = setup()
    for (const tenant of ['Acme', '-acme', 'ac.me', 'a'.repeat(65), '_tenant']) {
      const res = await client(app, await tokenFor(tenant)).get(`/brain/${tenant}/projects/p1/server-tools`)
      expect(res.status, tenant).toBe(400)
      expect(res.headers.get('content-type')).toBe('application/problem+json')
    }
    expect([store.reads, store.writes]).toEqual([0, 0])
  })

  it('answers 400 to a project id that breaks the id rule', async () => {
    const { app, store } = setup()
    const api = client(app, await tokenFor('acme'))
    for (const project of ['P1', '-p1', 'p'.repeat(65), '_other']) {
      const res = await api.get(`/brain/acme/projects/${project}/server-tools`)
      expect(res.status, project).toBe(400)
    }
    expect([store.reads, store.writes]).toEqual([0, 0])
  })
})

describe('every route', () => {
  const { app } = setup()
  const routes = routesOf(app)
  const guarded = routes.filter((r) => r.path.startsWith('/brain/:tenant/'))

  it('is either public by name, a console page or asset (GET, no tenant data), or under /brain/:tenant behind authentication', () => {
    const open = routes.filter((r) => !r.path.startsWith('/brain/:tenant/')).map((r) => `${r.method} ${r.path}`)
    const consoleRoutes = open.filter((r) => /^[A-Z]+ \/console(\/|$)/.test(r) && !r.startsWith('ALL '))
    expect(consoleRoutes.every((r) => r.startsWith('GET '))).toBe(true)
    expect(open.filter((r) => !/^[A-Z]+ \/console(\/|$)/.test(r)).sort()).toEqual([...PUBLIC_ROUTES].sort())
    expect(guarded.length).toBeGreaterThanOrEqual(9)
  })

  it('answers 401 without a token and touches no store or service', async () => {
    const { app, store, calls } = setup()
    for (const route of guarded) {
      const res = await request(app, route, undefined)
      expect(res.status, `${route.method} ${route.path}`).toBe(401)
    }
    expect({ reads: store.reads, writes: store.writes, calls }).toEqual({ reads: 0, writes: 0, calls: [] })
  })

  it('answers 403 to a token of another tenant with every scope, with 0 reads and 0 writes on the store', async () => {
    const { app, store, calls } = setup()
    const token = await tokenFor('globex', ALL)
    const outcomes: string[] = []
    for (const route of guarded) {
      const res = await request(app, route, token)
      outcomes.push(`${route.method} ${route.path} → ${res.status} ${(await res.json()).code}`)
    }
    expect(outcomes).toEqual(guarded.map((r) => `${r.method} ${r.path} → 403 FORBIDDEN`))
    expect({ reads: store.reads, writes: store.writes, calls }).toEqual({ reads: 0, writes: 0, calls: [] })
  })

  it('answers 403 when the token lacks the route’s scope (reads need tools:read, writes tools:write, invocations tools:invoke), before any store access', async () => {
    const { app, store, calls } = setup()
    for (const route of guarded) {
      const needed = scopeFor(route)
      const everythingElse = ALL.split(' ')
        .filter((s) => s !== needed && !(s === 'tenant:admin' && ADMIN_ALTERNATIVE.has(`${route.method} ${route.path}`)))
        .join(' ')
      for (const scope of ['', everythingElse]) {
        const res = await request(app, route, await tokenFor('acme', scope))
        expect(res.status, `${route.method} ${route.path} with scope '${scope}'`).toBe(403)
        expect((await res.json()).detail).toContain(needed)
      }
    }
    expect({ reads: store.reads, writes: store.writes, calls }).toEqual({ reads: 0, writes: 0, calls: [] })
  })

  it('lets a token with exactly the route’s scope through authorisation, which the counters above would see', async () => {
    const { app, store, calls } = setup()
    for (const route of guarded) {
      const res = await request(app, route, await tokenFor('acme', scopeFor(route)))
      expect([401, 403], `${route.method} ${route.path} → ${res.status}`).not.toContain(res.status)
    }
    // The instruments work: the same walk with the right token does reach the store and the services.
    expect(store.reads).toBeGreaterThan(0)
    expect(store.writes).toBeGreaterThan(0)
    expect(calls).toEqual(expect.arrayContaining(['tools.listViews', 'documents.put', 'dispatcher.call']))
  })
})
