/**
 * Endpoint profiles through the manifest route: the catalog's deferral setting picks between the
 * endpoint's own deferred form and our discovery block, and its name and schema limits reach the
 * triage and the budget facts.
 */
import { readFileSync } from 'node:fs'
import Ajv from 'ajv'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const anthropicTools = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(readFileSync(new URL('../fixtures/provider-tools/anthropic-messages-tools.schema.json', import.meta.url), 'utf8')),
)

let api: ReturnType<typeof client>

beforeEach(async () => {
  api = client(
    createApp(createMemoryDeps({ extraFactories: [echoPackFactory], log: new MemoryLogger(), clock: new ManualClock() })),
    await tokenFor('acme'),
  )
  const doc = (description: string, extra: string) =>
    `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
  for (const [name, body] of [
    ['weather', doc('Weather.', 'primary: true\n')],
    ['stocks', doc('Stock quotes by ticker.', 'primary: false\n')],
  ]) {
    const res = await api.put(`${base}/server-tools/${name}`, body)
    expect(res.status, await res.clone().text()).toBeLessThan(300)
  }
})

const putDoc = (path: string, body: string) => api.put(`/brain/acme/projects/_tenant/documents/${path}`, body)
async function manifestOf(models: string[], query = '') {
  const spawned = await api.post(`${base}/processes`, { models })
  expect(spawned.status, await spawned.clone().text()).toBe(201)
  const res = await api.get(`${base}/processes/${(await spawned.json()).id}/manifest${query}`)
  expect(res.status, await res.clone().text()).toBe(200)
  return res.json()
}
const searchTools = (tools: { type?: string }[]) => tools.filter((t) => t.type?.startsWith('tool_search_tool_'))

describe('deferral: auto | native | meta', () => {
  it('defers in Anthropic’s own form by default on an Anthropic chain, without our discovery block', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-6'], '?format=anthropic')
    expect(anthropicTools(m.tools), JSON.stringify(anthropicTools.errors)).toBe(true)
    expect(searchTools(m.tools)).toEqual([{ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }])
    expect(m.tools.find((t: { name: string }) => t.name === 'stocks')).toMatchObject({ defer_loading: true })
    expect(m.discoveryBlock).toBe('')
    expect(m.deferral).toBe('native')
  })

  it('keeps our discovery block when a model document says meta', async () => {
    await putDoc('models/anthropic/claude-meta.yaml', 'deferral: meta\n')
    const m = await manifestOf(['anthropic/claude-meta'], '?format=anthropic')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.tools.some((t: { defer_loading?: boolean }) => t.defer_loading)).toBe(false)
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('keeps our discovery block when a fallback model of the chain cannot read the native form', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-6', 'bedrock-converse/anthropic.claude'], '?format=anthropic')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('lets the request’s deferLoading=false win over the catalog', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-6'], '?format=anthropic&deferLoading=false')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.discoveryBlock).toContain('`stocks`')
  })
})

describe('name and schema limits from the catalog', () => {
  it('demotes a family over the schema bytes a model document allows and says why in the budget facts', async () => {
    const crm = await api.put(
      `${base}/server-tools/crm`,
      'type: echo_pack\ndescription: CRM\nprimary: true\nparameters:\n  ops: [find, update]\n',
    )
    expect(crm.status, await crm.clone().text()).toBeLessThan(300)
    await putDoc('models/gemini/gemini-roomy.yaml', 'maxSchemaBytes: 100000\n')
    const all = (await manifestOf(['gemini/gemini-roomy'])).budget.schemaBytes
    // one byte short of everything: the lowest-ranked family (the pack) goes, whole
    await putDoc('models/gemini/gemini-small.yaml', `maxSchemaBytes: ${all - 1}\n`)
    const m = await manifestOf(['gemini/gemini-small'])
    expect(m.budget).toMatchObject({ demotedFor: { crm: 'schemaBytes' }, demotedFamilies: ['crm'], maxSchemaBytes: all - 1 })
    expect(m.budget.schemaBytes).toBeLessThan(all)
    expect(m.tools.map((t: { name: string }) => t.name)).not.toContain('crm__find')
    expect(m.demotedDiscoveryBlock).toContain('crm__find')
    const preview = await api.post(`${base}/surface/preview`, { models: ['gemini/gemini-small'] })
    expect(preview.status, await preview.clone().text()).toBe(200)
    expect((await preview.json()).families).toContainEqual(
      expect.objectContaining({ family: 'crm', status: 'demoted', reason: 'schemaBytes' }),
    )
  })
})
