/**
 * What usage says beside the calls (issues 25 and 27): refused calls per tool and role, and calls a
 * code-mode script made, marked as from code, under the process's role — through the HTTP API on
 * the memory composition with the real QuickJS sandbox (inline) and sucrase. Nothing is mocked.
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../functions/cli/main'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { success } from '../../lib/calls/outcome'
import { ManualClock } from '../../lib/runtime/clock'
import type { Tool } from '../../lib/tools/contracts'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const insights = '/brain/acme/admin/projects/p1/insights/tool-usage'

const lookup: Tool = {
  name: 'stock_get',
  description: 'Stock of an item.',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  labels: ['paid'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  invoke: async (p) => success({ sku: p.sku, stock: 3 }),
}

let deps: ReturnType<typeof createMemoryDeps>
let api: ReturnType<typeof client>

beforeEach(async () => {
  deps = createMemoryDeps({
    clock: new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 20)),
    extraBuiltins: [lookup],
    sandbox: { isolation: 'inline' },
    bundledFiles: [
      { path: 'engines/default.yaml', body: '{}\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
    ],
  })
  api = client(createApp(deps), await tokenFor('acme'))
  expect((await api.put(`${base}/documents/engines/shop.yaml`, 'allowedTools: [stock_get]\n')).status).toBe(201)
  expect((await api.put(`${base}/documents/recipes/coder.yaml`, 'engine: shop\nsurface: code\n')).status).toBe(201)
})

const roleOf = async (role: string) => ((await (await api.get(insights)).json()) as { role: string }[]).find((r) => r.role === role) as any
const toolOf = (r: { tools: { toolName: string }[] }, name: string) => r.tools.find((t) => t.toolName === name) as any

describe('refusals in usage', () => {
  it('counts each quota refusal under its tool and role beside the calls that ran, in GET usage', async () => {
    await api.put(
      '/brain/acme/projects/_tenant/documents/quotas.yaml',
      'rules:\n  - match: { label: paid }\n    rate: { requests: 2, per: minute }\n',
    )
    const statuses = []
    for (let i = 0; i < 5; i++) statuses.push((await api.post(`${base}/tools/stock_get/invoke`, { params: { sku: 'a' } })).status)
    expect(statuses).toEqual([200, 200, 429, 429, 429])
    await deps.usage.flush()
    const role = await roleOf('_unknown')
    expect(toolOf(role, 'stock_get')).toMatchObject({ calls: 2, refusals: 3, codeCalls: 0 })
    expect(role).toMatchObject({ calls: 2, refusals: 3 })
  })

  it('counts a refusal of a call made from code under the process role', async () => {
    await api.put(`${base}/documents/quotas.yaml`, 'rules:\n  - match: { role: coder }\n    volume: { requests: 2, per: day }\n')
    const spawn = await (await api.post(`${base}/processes`, { recipe: 'coder' })).json()
    // execute_code takes one unit of the role's budget, its first sibling call the second; the next is refused
    const code =
      'await tools.stock_get({ sku: "a" }); let r = "ran"; try { await tools.stock_get({ sku: "b" }) } catch (e) { r = String(e.message) } r'
    const out = await (await api.post(`${base}/processes/${spawn.id}/tool-calls`, { name: 'execute_code', params: { code } })).json()
    expect(JSON.stringify(out)).toContain('Quota reached')
    await deps.usage.flush()
    expect(toolOf(await roleOf('coder'), 'stock_get')).toMatchObject({ calls: 1, codeCalls: 1, refusals: 1 })
  })
})

describe('calls from code in usage', () => {
  it('counts a script’s calls under the process role, marked as from code, and the code tool as a direct call', async () => {
    const spawn = await (await api.post(`${base}/processes`, { recipe: 'coder' })).json()
    const code = 'const r = await Promise.all(["a", "b", "c"].map((sku) => tools.stock_get({ sku }))); r.length'
    const out = await (await api.post(`${base}/processes/${spawn.id}/tool-calls`, { name: 'execute_code', params: { code } })).json()
    expect(out, JSON.stringify(out)).toMatchObject({ isError: false })
    await deps.usage.flush()
    const role = await roleOf('coder')
    expect(toolOf(role, 'stock_get')).toMatchObject({ calls: 3, codeCalls: 3 })
    expect(toolOf(role, 'execute_code')).toMatchObject({ codeCalls: 0 })
    expect(role.codeCalls).toBe(3)
  })
})

describe('calls from execute_javascript in usage', () => {
  it('marks a snippet’s vance.tools.call as from code, under the caller’s role', async () => {
    const code = 'vance.tools.call("stock_get", { sku: "a" }); vance.tools.call("stock_get", { sku: "b" }).stock'
    const out = await (await api.post(`${base}/tools/execute_javascript/invoke`, { params: { code } })).json()
    expect(out, JSON.stringify(out)).toMatchObject({ isError: false, content: { value: 3 } })
    await deps.usage.flush()
    const role = await roleOf('_unknown')
    expect(toolOf(role, 'stock_get')).toMatchObject({ calls: 2, codeCalls: 2 })
    expect(toolOf(role, 'execute_javascript')).toMatchObject({ calls: 1, codeCalls: 0 })
  })
})

describe('server-tools usage', () => {
  let server: ReturnType<typeof serve>
  afterEach(() => new Promise<void>((r) => server.close(() => r())))

  it('prints per role and tool the calls, those from code and the refusals', async () => {
    await api.put(
      `${base}/documents/quotas.yaml`,
      'rules:\n  - match: { role: coder, tool: stock_get }\n    volume: { requests: 2, per: day }\n',
    )
    const spawn = await (await api.post(`${base}/processes`, { recipe: 'coder' })).json()
    const code = 'const r = await Promise.allSettled(["a", "b", "c"].map((sku) => tools.stock_get({ sku }))); r.length'
    await api.post(`${base}/processes/${spawn.id}/tool-calls`, { name: 'execute_code', params: { code } })
    await api.post(`${base}/tools/stock_get/invoke`, { params: { sku: 'd' } })
    await deps.usage.flush()
    server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((r) => server.once('listening', () => r()))
    const out: string[] = []
    const env = { ST_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme`, ST_TOKEN: await tokenFor('acme') }
    expect(await run(['usage', '--project', 'p1'], { out: (t) => out.push(t), err: () => {}, env })).toBe(0)
    expect(out).toEqual([
      'coder: 3 calls (2 from code), 1 refused',
      '  stock_get     2 calls (2 from code), 1 refused',
      '  execute_code  1 call (0 from code), 0 refused',
      '_unknown: 1 call (0 from code), 0 refused',
      '  stock_get  1 call (0 from code), 0 refused',
    ])
  })
})
