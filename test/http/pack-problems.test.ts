/** A pack that yields no tools is reported before any call fails: in the admin listing and the spawn. */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import type { ToolFactory } from '../../lib/tools/contracts'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const missingSpec = 'type: rest_api\ndescription: Pets\nparameters:\n  specPath: apis/missing.yaml\n'
let api: ReturnType<typeof client>
let expansions: number

/** A pack over budget: its factory refuses to expand, counting each attempt. */
const overBudget: ToolFactory = {
  ...echoPackFactory,
  typeId: 'over_budget_pack',
  async create() {
    expansions++
    throw new Error('the catalog has 900 operations; a pack may have at most 500')
  },
}

beforeEach(async () => {
  expansions = 0
  api = client(createApp(createMemoryDeps({ extraFactories: [echoPackFactory, overBudget] })), await tokenFor('acme'))
})

describe('packs that fail to expand', () => {
  it('are reported in the admin listing’s problems with the reason, before any call', async () => {
    expect((await api.put(`${base}/server-tools/pets`, missingSpec)).status).toBe(201)
    const listing = await (await api.get(`${base}/server-tools`)).json()
    expect(listing.tools.map((t: { name: string }) => t.name)).toContain('pets')
    expect(listing.problems).toEqual([
      expect.objectContaining({
        name: 'pets',
        source: 'project',
        message: expect.stringContaining("the spec document 'apis/missing.yaml' does not exist"),
      }),
    ])
  })

  it('are reported in the spawn’s warnings, and the process is spawned without their tools', async () => {
    await api.put(`${base}/server-tools/pets`, missingSpec)
    await api.put(`${base}/server-tools/big`, 'type: over_budget_pack\ndescription: Big\nparameters:\n  ops: [a]\n')
    const res = await api.post(`${base}/processes`, {})
    expect(res.status).toBe(201)
    const { warnings } = await res.json()
    expect(warnings).toEqual([
      "tool 'big' (project layer): could not be expanded: the catalog has 900 operations; a pack may have at most 500",
      "tool 'pets' (project layer): pets: the spec document 'apis/missing.yaml' does not exist in project 'p1', the tenant layer or the bundled defaults",
    ])
  })

  it('cost one expansion per document version in the listing, and a new version is expanded again', async () => {
    await api.put(`${base}/server-tools/big`, 'type: over_budget_pack\ndescription: Big\nparameters:\n  ops: [a]\n')
    for (let i = 0; i < 3; i++) {
      const { problems } = await (await api.get(`${base}/server-tools`)).json()
      expect(problems.map((p: { name: string; message: string }) => [p.name, p.message])).toEqual([
        ['big', 'could not be expanded: the catalog has 900 operations; a pack may have at most 500'],
      ])
    }
    expect(expansions).toBe(1)
    await api.put(`${base}/server-tools/big`, 'type: over_budget_pack\ndescription: Bigger\nparameters:\n  ops: [a]\n')
    await api.get(`${base}/server-tools`)
    await api.get(`${base}/server-tools`)
    expect(expansions).toBe(2)
  })

  it('leave the listing’s problems empty for a pack that expands', async () => {
    await api.put(`${base}/server-tools/echo`, 'type: echo_pack\ndescription: Echo\nparameters:\n  ops: [a, b]\n')
    expect((await (await api.get(`${base}/server-tools`)).json()).problems).toEqual([])
  })
})
