/**
 * Calls a code-mode script makes leave the same audit entries as the same calls made directly
 * (issue 27): a quota refusal, an egress refusal, a tool outside the allow-set, a call that runs —
 * through the HTTP API on the memory composition with the real QuickJS sandbox (inline), sucrase
 * and the egress guard. Each mode runs on its own fresh deployment, so the quota counts start
 * equal; the entries are compared without their ids, times and request ids. Nothing is mocked.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { success } from '../../lib/calls/outcome'
import { ManualClock } from '../../lib/runtime/clock'
import type { Tool } from '../../lib/tools/contracts'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'

const stock: Tool = {
  name: 'stock_get',
  description: 'Stock of an item.',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
  labels: [],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  invoke: async (p) => success({ sku: p.sku, stock: 3 }),
}

/** The calls of the scenario, in order: the third stock_get is over the quota, `local` aims at loopback, `secret_read` is not allowed. */
const CALLS: [string, Record<string, unknown>][] = [
  ['stock_get', { sku: 'a' }],
  ['stock_get', { sku: 'b' }],
  ['stock_get', { sku: 'c' }],
  ['local', {}],
  ['secret_read', {}],
]

async function auditOf(mode: 'direct' | 'code') {
  const deps = createMemoryDeps({
    clock: new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 20)),
    extraBuiltins: [stock, { ...stock, name: 'secret_read', description: 'Not for this role.' }],
    sandbox: { isolation: 'inline' },
    bundledFiles: [
      { path: 'engines/default.yaml', body: '{}\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
    ],
  })
  const api = client(createApp(deps), await tokenFor('acme'))
  const put = async (path: string, body: string) => expect((await api.put(`${base}/${path}`, body)).status).toBeLessThan(300)
  await put('server-tools/local', 'type: rest\ndescription: Loopback.\nprimary: true\nparameters:\n  url: http://127.0.0.1:9/x\n')
  await put('documents/engines/shop.yaml', 'allowedTools: [stock_get, local]\n')
  // the same role name in both modes: quota rules and audit targets are per role and tool
  await put('documents/recipes/shop.yaml', `engine: shop\nsurface: ${mode === 'code' ? 'code' : 'native'}\n`)
  await put('documents/quotas.yaml', 'rules:\n  - match: { tool: stock_get }\n    volume: { requests: 2, per: day }\n')
  const spawn = await (await api.post(`${base}/processes`, { recipe: 'shop' })).json()
  const callsUrl = `${base}/processes/${spawn.id}/tool-calls`
  const before = (await (await api.get('/brain/acme/audit?limit=200')).json()).entries.length
  const answers: string[] = []
  if (mode === 'direct') {
    for (const [name, params] of CALLS) answers.push(JSON.stringify((await (await api.post(callsUrl, { name, params })).json()).content))
  } else {
    const code = `const out = []
for (const [name, params] of ${JSON.stringify(CALLS)}) {
  try { out.push(JSON.stringify(await vance.tools.call(name, params))) } catch (e) { out.push(e.message) }
}
out`
    const run = await (await api.post(callsUrl, { name: 'execute_code', params: { code } })).json()
    expect(run.isError, JSON.stringify(run)).toBe(false)
    answers.push(...(run.content.value as string[]))
  }
  const page = await (await api.get('/brain/acme/audit?limit=200')).json()
  const entries = (page.entries as Record<string, unknown>[])
    .slice(0, page.entries.length - before)
    .reverse()
    // one request per call directly, one for the script: the request entries of tool calls are not the calls' own
    .filter((e) => e.action !== 'POST /brain/{tenant}/projects/{project}/processes/{id}/tool-calls')
    .map(({ id, at, expiresAt, requestId, traceId, status, ...rest }) => rest)
  return { entries, answers }
}

describe('audit of calls from code', () => {
  it('records exactly the entries the same calls record when made directly, refusals included', async () => {
    const direct = await auditOf('direct')
    const code = await auditOf('code')
    expect(direct.entries.map((e) => e.action)).toEqual(['quota.refused', 'egress.refused'])
    expect(code.entries).toEqual(direct.entries)
    expect(code.answers[2]).toContain('Quota reached')
    expect(code.answers[3]).toBe(JSON.parse(direct.answers[3]).message)
    expect(code.answers[4]).toContain("Unknown tool 'secret_read'")
  })
})
