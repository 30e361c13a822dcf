/**
 * Quotas over every call path: REST invoke and a process's tool-calls (429 problem+json with
 * Retry-After), MCP tools/call through the official SDK client (a tool error saying when to
 * retry), a script's sibling call and invoke_tool (tool errors). A refused call runs nothing,
 * leaves an audit entry, and GET /quotas shows the rule, its use and its reset. Memory stores;
 * the MCP server listens on 127.0.0.1.
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../functions/cli/main'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryAuditStore } from '../../lib/stores/memory/audit-store'
import type { Tool } from '../../lib/tools/contracts'
import { ALL, client, tokenFor } from '../support/http'
import { connectMcp } from '../support/mcp'

const base = '/brain/acme/projects/p1'
let runs: number
/** A built-in that counts its runs: what "a refused call runs nothing" is measured by. */
const counted: Tool = {
  name: 'metered',
  description: 'Counts its runs.',
  inputSchema: { type: 'object', properties: {} },
  labels: ['paid'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  invoke: async () => {
    runs++
    return { isError: false, content: { runs } }
  },
}

let clock: ManualClock
let audit: MemoryAuditStore
let deps: ReturnType<typeof createMemoryDeps>
let api: ReturnType<typeof client>

beforeEach(async () => {
  runs = 0
  clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 20))
  audit = new MemoryAuditStore()
  deps = createMemoryDeps({ clock, extraBuiltins: [counted], auditStore: audit, auditFlushDelayMs: 0 })
  api = client(createApp(deps), await tokenFor('acme'))
  const put = await api.put(
    '/brain/acme/projects/_tenant/documents/quotas.yaml',
    'rules:\n  - match: { label: paid }\n    rate: { requests: 2, per: minute }\n',
  )
  expect(put.status, await put.clone().text()).toBe(201)
})

const invoke = () => api.post(`${base}/tools/metered/invoke`, { params: {} })

describe('quota refusals', () => {
  it('answers REST invoke past the limit with 429 problem+json and Retry-After, and runs nothing', async () => {
    expect((await invoke()).status).toBe(200)
    expect((await invoke()).status).toBe(200)
    const refused = await invoke()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('content-type')).toBe('application/problem+json')
    expect(refused.headers.get('retry-after')).toBe('40')
    expect(await refused.json()).toMatchObject({ status: 429, code: 'QUOTA_EXCEEDED', retryAfterSeconds: 40 })
    expect(runs).toBe(2)
    clock.advance(40_000)
    expect((await invoke()).status).toBe(200)
    expect(runs).toBe(3)
  })

  it('answers a process tool-call past the limit with 429 and Retry-After', async () => {
    const spawn = await (await api.post(`${base}/processes`, {})).json()
    const call = () => api.post(`${base}/processes/${spawn.id}/tool-calls`, { name: 'metered', params: {} })
    expect((await call()).status).toBe(200)
    expect((await call()).status).toBe(200)
    const refused = await call()
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('40')
    expect(runs).toBe(2)
  })

  it('refuses a script sibling call and invoke_tool with a tool error that says when to retry', async () => {
    await invoke()
    await invoke()
    const sibling = await (
      await api.post(`${base}/tools/execute_javascript/invoke`, { params: { code: 'vance.tools.call("metered", {})' } })
    ).json()
    expect(JSON.stringify(sibling)).toContain('Retry in 40 s')
    const spawn = await (await api.post(`${base}/processes`, {})).json()
    const indirect = await (
      await api.post(`${base}/processes/${spawn.id}/tool-calls`, { name: 'invoke_tool', params: { name: 'metered', params: {} } })
    ).json()
    expect(JSON.stringify(indirect)).toContain('Retry in 40 s')
    expect(runs).toBe(2)
  })

  it('records each refusal in the audit log, naming the rule', async () => {
    await invoke()
    await invoke()
    await invoke()
    await deps.audit.recorder.flush()
    const { entries } = await audit.query('acme', { action: 'quota.refused' }, { limit: 10 }, Math.floor(clock.now() / 1000))
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ outcome: 'denied', target: 'projects/p1/tools/metered', reason: 'quota:tenant/1' })
  })

  it('shows the rules, their use and the time to reset', async () => {
    await invoke()
    const res = await api.get('/brain/acme/quotas?project=p1')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      project: 'p1',
      rules: [
        {
          layer: 'tenant',
          index: 0,
          match: { label: 'paid' },
          rate: { requests: 2, per: 'minute' },
          windows: [
            { kind: 'rate', limit: 2, used: 1, remaining: 1, resetsAt: '2026-01-01T12:01:00.000Z', resetsInSeconds: 40, refusedHere: 0 },
          ],
        },
      ],
    })
  })

  it('needs tenant:admin to write the _tenant quotas', async () => {
    const member = client(createApp(deps), await tokenFor('acme', 'tools:read tools:write tools:invoke'))
    expect((await member.put('/brain/acme/projects/_tenant/documents/quotas.yaml', 'rules: []\n')).status).toBe(403)
  })

  it('refuses an invalid quotas.yaml with 422 naming line and column', async () => {
    const res = await api.put(`${base}/documents/quotas.yaml`, 'rules:\n  - match: { tool: x }\n    rate: { requests: 0, per: minute }\n')
    expect(res.status).toBe(422)
    expect((await res.json()).errors[0]).toMatchObject({ pointer: '/rules/0/rate/requests', line: 3 })
  })
})

describe('quota refusals over MCP', () => {
  let server: ReturnType<typeof serve>
  afterEach(() => new Promise<void>((r) => server.close(() => r())))

  it('answers tools/call past the limit with a tool error telling the model when to retry', async () => {
    server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((r) => server.once('listening', () => r()))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${base}/mcp`
    const { client: mcp } = await connectMcp(url, await tokenFor('acme', ALL))
    const results = []
    for (let i = 0; i < 3; i++) results.push(await mcp.callTool({ name: 'metered', arguments: {} }))
    await mcp.close()
    expect(results.map((r) => r.isError ?? false)).toEqual([false, false, true])
    expect(JSON.stringify(results[2].content)).toContain('Retry in 40 s')
    expect(runs).toBe(2)
  })
})

describe('server-tools quotas', () => {
  let server: ReturnType<typeof serve>
  afterEach(() => new Promise<void>((r) => server.close(() => r())))

  it('prints each window of each rule with its use and reset', async () => {
    server = serve({ fetch: createApp(deps).fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((r) => server.once('listening', () => r()))
    await invoke()
    const out: string[] = []
    const env = { ST_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/acme`, ST_TOKEN: await tokenFor('acme') }
    expect(await run(['quotas', '--project', 'p1'], { out: (t) => out.push(t), err: () => {}, env })).toBe(0)
    expect(out).toEqual(['_tenant#1  label=paid  1/2 per minute  1 left  resets in 40 s'])
  })
})
