/**
 * Tenant-wide writes — the `_tenant` layer and the tenant's egress allow-list — need `tenant:admin`
 * on top of the route's scope; `egress/allow.yaml` is validated on write like every document.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ALL, client, tokenFor } from '../support/http'

const WITHOUT_ADMIN = ALL.split(' ')
  .filter((s) => s !== 'tenant:admin')
  .join(' ')
const ALLOW_LIST = '/brain/acme/projects/_tenant/documents/egress/allow.yaml'

function setup() {
  const deps = createMemoryDeps()
  return { app: createApp(deps), store: deps.store }
}

/** Every PUT/DELETE of layer content under /brain/:tenant/projects/:project (not a process's runtime state), aimed at the tenant layer. */
function tenantLayerWrites(app: ReturnType<typeof createApp>) {
  const seen = new Set<string>()
  for (const r of app.routes) {
    const runtime = /\/projects\/:project\/(processes|mcp)/.test(r.path)
    if ((r.method === 'PUT' || r.method === 'DELETE') && r.path.startsWith('/brain/:tenant/projects/:project/') && !runtime)
      seen.add(`${r.method} ${r.path}`)
  }
  return [...seen].map((route) => {
    const [method, path] = route.split(' ')
    const concrete = path
      .replace(':tenant', 'acme')
      .replace(':project', '_tenant')
      .replace(/:name\b/, 'handbook')
      .replace(/\/\*$|\/:path\{\.\+\}$/, '/notes/a.md')
      .replace(/:(\w+)/g, 'x1')
    return { route, method, path: concrete }
  })
}

describe('the _tenant layer', () => {
  it('refuses every write route without tenant:admin, naming the scope, before the store is touched', async () => {
    const { app, store } = setup()
    const routes = tenantLayerWrites(app)
    expect(routes.map((r) => r.route)).toEqual(
      expect.arrayContaining([
        'PUT /brain/:tenant/projects/:project/server-tools/:name',
        'PUT /brain/:tenant/projects/:project/documents/:path{.+}',
      ]),
    )
    const api = client(app, await tokenFor('acme', WITHOUT_ADMIN))
    for (const r of routes) {
      const res = r.method === 'PUT' ? await api.put(r.path, 'type: doc_lookup\ndescription: x\n') : await api.delete(r.path)
      expect([res.status, (await res.json()).detail], r.route).toEqual([403, expect.stringContaining("'tenant:admin'")])
    }
    expect(await store.list('acme#_tenant', '')).toEqual([])
  })

  it('lets tenant:admin write the tenant layer, and reads need no more than tools:read', async () => {
    const { app } = setup()
    const admin = client(app, await tokenFor('acme', 'tools:write tenant:admin'))
    const put = await admin.put(
      '/brain/acme/projects/_tenant/server-tools/handbook',
      'type: doc_lookup\ndescription: Handbook\nparameters:\n  path: documents/getting-started.md\n',
    )
    expect(put.status).toBe(201)
    expect((await admin.delete('/brain/acme/projects/_tenant/server-tools/handbook')).status).toBe(204)
    const reader = client(app, await tokenFor('acme', 'tools:read'))
    expect((await reader.get('/brain/acme/projects/_tenant/server-tools')).status).toBe(200)
  })

  it("does not ask tenant:admin for a process's runtime state in the tenant project (sessions, client tools)", async () => {
    const { app } = setup()
    const api = client(app, await tokenFor('acme', WITHOUT_ADMIN))
    const outcomes = [
      await api.delete('/brain/acme/projects/_tenant/mcp', { 'mcp-session-id': 'no-such-session' }),
      await api.delete('/brain/acme/projects/_tenant/processes/no-such-process/mcp'),
      await api.put('/brain/acme/projects/_tenant/processes/no-such-process/client-tools', { clientTools: [] }),
    ].map((r) => r.status)
    expect(outcomes).not.toContain(403)
    expect(outcomes).not.toContain(401)
  })

  it('leaves project-layer writes to tools:write alone', async () => {
    const { app } = setup()
    const res = await client(app, await tokenFor('acme', 'tools:write')).put('/brain/acme/projects/p1/documents/notes/a.md', '# a', {
      'content-type': 'text/markdown',
    })
    expect(res.status).toBe(201)
  })
})

describe('egress/allow.yaml', () => {
  it('needs tenant:admin in any layer and under any spelling of its path', async () => {
    const { app } = setup()
    const api = client(app, await tokenFor('acme', WITHOUT_ADMIN))
    for (const path of [
      '/brain/acme/projects/p1/documents/egress/allow.yaml',
      '/brain/acme/projects/p1/documents/egress//./allow.yaml',
      '/brain/acme/projects/p1/documents/egress%2Fallow.yaml',
    ]) {
      const res = await api.put(path, 'hosts: [intranet.example.test]\n')
      expect([res.status, (await res.json()).detail], path).toEqual([403, expect.stringContaining("'tenant:admin'")])
    }
    expect((await api.delete('/brain/acme/projects/p1/documents/egress/allow.yaml')).status).toBe(403)
  })

  it('answers 422 with line and column for a bad entry, and stores nothing', async () => {
    const { app } = setup()
    const api = client(app, await tokenFor('acme'))
    const res = await api.put(ALLOW_LIST, 'hosts:\n  - intranet.example.test\n  - "not a host!"\ncidrs: [10.0.0.0/33]\n')
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.errors).toEqual([
      expect.objectContaining({ pointer: '/hosts/1', line: 3, column: 5 }),
      expect.objectContaining({ pointer: '/cidrs/0', line: 4, column: 9 }),
    ])
    expect((await api.get(ALLOW_LIST)).status).toBe(404)
  })

  it('answers 422 for YAML that does not parse and for unknown fields', async () => {
    const api = client(setup().app, await tokenFor('acme'))
    const broken = await api.put(ALLOW_LIST, 'hosts: [unclosed\n')
    expect([broken.status, (await broken.json()).errors[0].line]).toEqual([422, expect.any(Number)])
    const unknown = await api.put(ALLOW_LIST, 'hosts: [a.example.test]\nhots: [b.example.test]\n')
    expect([unknown.status, (await unknown.json()).errors[0]]).toEqual([422, expect.objectContaining({ pointer: '/hots', line: 2 })])
  })

  it('stores a valid allow-list with tenant:admin', async () => {
    const api = client(setup().app, await tokenFor('acme'))
    const res = await api.put(ALLOW_LIST, 'hosts: [intranet.example.test, "*.corp.example.test"]\ncidrs: [10.20.0.0/16]\n')
    expect(res.status).toBe(201)
  })
})
