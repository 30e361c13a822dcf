/**
 * Usage counting through the process surface (spec §14.4) and measured demand in the budget
 * triage (spec §14.2), end to end through the HTTP routes on memory stores.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const insightsPath = '/brain/acme/admin/projects/p1/insights/tool-usage'
let deps: ReturnType<typeof createMemoryDeps>
let api: ReturnType<typeof client>
let clock: ManualClock

const singleton = (description: string, primary: boolean) =>
  `type: doc_lookup\ndescription: ${description}\nprimary: ${primary}\nparameters:\n  path: documents/getting-started.md\n`

async function put(path: string, body: string) {
  const res = await api.put(`${base}/documents/${path}`, body)
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300)
}

async function tool(name: string, primary: boolean) {
  expect((await api.put(`${base}/server-tools/${name}`, singleton(`The ${name} tool. It reads a guide.`, primary))).status).toBe(201)
}

async function spawn(recipe: string): Promise<string> {
  const res = await api.post(`${base}/processes`, { recipe })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await res.json()).id
}

async function call(id: string, name: string, params: unknown = {}) {
  const res = await api.post(`${base}/processes/${id}/tool-calls`, { name, params })
  expect(res.status).toBe(200)
  return res.json() as Promise<{ isError: boolean; content: any }>
}

async function counters(role?: string) {
  await deps.usage.flush()
  const out: Record<string, [number, number, number]> = {}
  for (const r of await (await api.get(insightsPath)).json()) {
    if (role && r.role !== role) continue
    for (const t of r.tools) out[`${r.role}/${t.toolName}`] = [t.calls, t.discoveryHits, t.listedHits]
  }
  return out
}

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 4, 1, 9, 0, 0))
  deps = createMemoryDeps({ clock })
  api = client(createApp(deps), await tokenFor('acme'))
  await tool('alpha_one', true)
  await tool('alpha_two', true)
  await tool('beta_one', true)
  await tool('beta_two', true)
  await tool('gamma_hidden', false)
  await put(
    'engines/worker.yaml',
    'allowedTools: [alpha_one, alpha_two, beta_one, beta_two, gamma_hidden, whoami, invoke_tool]\nroles: [coding]\n',
  )
  await put('recipes/coder.yaml', 'engine: worker\n')
  await put('recipes/writer.yaml', 'engine: worker\n')
})

describe('counting through the process tool-calls route', () => {
  it("counts a model's call under the process's recipe name", async () => {
    const id = await spawn('coder')
    expect((await call(id, 'whoami')).isError).toBe(false)
    expect(await counters()).toEqual({ 'coder/whoami': [1, 0, 0] })
  })

  it('keeps roles apart: the same tool called from two recipes counts twice, once each', async () => {
    await call(await spawn('coder'), 'whoami')
    await call(await spawn('writer'), 'whoami')
    expect(await counters()).toEqual({ 'coder/whoami': [1, 0, 0], 'writer/whoami': [1, 0, 0] })
  })

  it('counts invoke_tool and its target, one call each', async () => {
    const id = await spawn('coder')
    expect((await call(id, 'invoke_tool', { name: 'whoami', params: {} })).isError).toBe(false)
    expect(await counters()).toEqual({ 'coder/invoke_tool': [1, 0, 0], 'coder/whoami': [1, 0, 0] })
  })

  it('counts nothing when invoke_tool names a tool outside the process', async () => {
    const id = await spawn('coder')
    expect((await call(id, 'invoke_tool', { name: 'doc_errors', params: {} })).isError).toBe(true)
    expect(await counters()).toEqual({})
  })

  it('counts one discovery hit per name tool_description described, primary ones too, and the call itself', async () => {
    const id = await spawn('coder')
    const out = await call(id, 'tool_description', { names: 'gamma_hidden, alpha_one, gamma_hidden, nope' })
    expect(out.isError).toBe(false)
    expect(out.content.tools.map((t: { name: string }) => t.name)).toEqual(['gamma_hidden', 'alpha_one'])
    expect(await counters()).toEqual({ 'coder/tool_description': [1, 0, 0], 'coder/gamma_hidden': [0, 1, 0], 'coder/alpha_one': [0, 1, 0] })
  })

  it('counts nothing for a tool_description that describes nothing', async () => {
    const id = await spawn('coder')
    expect((await call(id, 'tool_description', { names: ['nope'] })).isError).toBe(true)
    expect(await counters()).toEqual({})
  })

  it('counts one listed hit per name in a tool_list answer, and the call itself', async () => {
    const id = await spawn('coder')
    const out = await call(id, 'tool_list', { prefix: 'alpha' })
    expect(out.content).toMatchObject({ count: 2, inContext: ['alpha_one', 'alpha_two'], available: [] })
    expect(await counters()).toEqual({ 'coder/tool_list': [1, 0, 0], 'coder/alpha_one': [0, 0, 1], 'coder/alpha_two': [0, 0, 1] })
  })

  it('does not count a call with invalid arguments or an unknown tool', async () => {
    const id = await spawn('coder')
    expect((await call(id, 'whoami', { extra: 1 })).isError).toBe(true)
    expect((await call(id, 'no_such_tool')).isError).toBe(true)
    expect(await counters()).toEqual({})
  })
})

describe('the discovery funnel in insights, from the live recipe', () => {
  it('lists the role’s deferred tools never described and primary tools never called', async () => {
    const id = await spawn('coder')
    await call(id, 'alpha_one')
    await call(id, 'tool_description', { names: ['beta_one'] })
    await deps.usage.flush()
    const [coder] = await (await api.get(insightsPath)).json()
    expect(coder.role).toBe('coder')
    expect(coder.describedNeverCalled).toEqual(['beta_one'])
    expect(coder.deferredNeverDiscovered).toEqual(['gamma_hidden'])
    expect(coder.primaryNeverCalled).toEqual(['alpha_two', 'beta_one', 'beta_two', 'invoke_tool', 'tool_list', 'whoami'])
  })

  it('recommends promoting a deferred family the role keeps describing and then calling', async () => {
    const id = await spawn('coder')
    for (let i = 0; i < 3; i++) {
      await call(id, 'tool_description', { names: ['gamma_hidden'] })
      await call(id, 'gamma_hidden')
    }
    await deps.usage.flush()
    const [coder] = await (await api.get(insightsPath)).json()
    expect(coder.recommendations).toEqual([
      {
        kind: 'promote',
        family: 'gamma',
        reason: 'deferred, yet described 3 times and called 3 times: each use costs a tool_description round trip',
      },
    ])
  })
})

describe('measured demand in the budget triage', () => {
  beforeEach(async () => {
    // 2 floor + 2 tools + 1 reserve: exactly one of the two 2-tool families fits.
    await put('models/tight/_provider.yaml', 'wireType: openai\nmaxTools: 5\n')
    await put('engines/narrow.yaml', 'allowedTools: [alpha_one, alpha_two, beta_one, beta_two]\n')
    await put('recipes/budgeted.yaml', 'engine: narrow\nmodels: [tight/m1]\n')
  })

  const manifestNames = async (id: string) => {
    const res = await api.get(`${base}/processes/${id}/manifest`)
    expect(res.status).toBe(200)
    const body = await res.json()
    return { tools: body.tools.map((t: { name: string }) => t.name), demoted: body.budget.demotedFamilies }
  }

  it('keeps the first family by name when no demand was measured', async () => {
    expect(await manifestNames(await spawn('budgeted'))).toEqual({
      tools: ['alpha_one', 'alpha_two', 'tool_description', 'tool_list'],
      demoted: ['beta'],
    })
  })

  it("keeps the family the role demands more, once the role's demand was measured", async () => {
    // Another process of the same role uses beta (calls count; descriptions count too).
    const busy = await spawn('budgeted')
    for (let i = 0; i < 3; i++) expect((await call(busy, 'beta_one')).isError).toBe(false)
    await call(busy, 'tool_description', { names: ['beta_two'] })
    await deps.usage.flush()
    clock.advance(5 * 60_000) // past the per-container demand memo
    expect(await manifestNames(await spawn('budgeted'))).toEqual({
      tools: ['beta_one', 'beta_two', 'tool_description', 'tool_list'],
      demoted: ['alpha'],
    })
  })

  it("does not let another role's demand change this role's triage", async () => {
    await put('recipes/other.yaml', 'engine: narrow\nmodels: [tight/m1]\n')
    const busy = await spawn('other')
    for (let i = 0; i < 5; i++) await call(busy, 'beta_one')
    await deps.usage.flush()
    clock.advance(5 * 60_000)
    expect((await manifestNames(await spawn('budgeted'))).demoted).toEqual(['beta'])
  })
})
