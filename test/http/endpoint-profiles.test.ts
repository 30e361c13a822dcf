/**
 * Endpoint profiles through the manifest route: the catalog's deferral setting picks between the
 * endpoint's own deferred form and our discovery block, and its name and schema limits reach the
 * triage and the budget facts.
 */
import { readFileSync } from 'node:fs'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const ajv = new Ajv2020({ allErrors: true, strict: false })
addFormats(ajv)
const published = (name: string) =>
  ajv.compile(JSON.parse(readFileSync(new URL(`../fixtures/provider-tools/${name}`, import.meta.url), 'utf8')))
const anthropicTools = published('anthropic-messages-tools.schema.json')
const responsesTools = published('openai-responses-tools.schema.json')
const chatTools = published('openai-chat-tools.schema.json')
const geminiTools = published('gemini-tools.schema.json')

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
    const m = await manifestOf(['anthropic/claude-sonnet-4-5'], '?format=anthropic')
    expect(anthropicTools(m.tools), JSON.stringify(anthropicTools.errors)).toBe(true)
    expect(searchTools(m.tools)).toEqual([{ type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }])
    expect(m.tools.find((t: { name: string }) => t.name === 'stocks')).toMatchObject({ defer_loading: true })
    expect(m.discoveryBlock).toBe('')
    expect(m.deferral).toBe('native')
  })

  it('keeps our discovery block on a Claude model Anthropic does not document tool search for, directly or on Bedrock', async () => {
    for (const model of [
      'anthropic/claude-3-5-haiku-20241022',
      'anthropic/claude-sonnet-4-20250514',
      'bedrock-invoke/anthropic.claude-sonnet-4-5-20250929-v1:0',
    ]) {
      const m = await manifestOf([model], '?format=anthropic')
      expect(anthropicTools(m.tools), JSON.stringify(anthropicTools.errors)).toBe(true)
      expect(searchTools(m.tools), model).toEqual([])
      expect(m.tools.some((t: { defer_loading?: boolean }) => t.defer_loading)).toBe(false)
      expect(m.discoveryBlock).toContain('`stocks`')
    }
  })

  it('defers natively on Bedrock InvokeModel for Claude Opus 4.5, the model Anthropic documents it for there', async () => {
    const m = await manifestOf(['bedrock-invoke/global.anthropic.claude-opus-4-5-20251101-v1:0'], '?format=anthropic')
    expect(searchTools(m.tools)).toHaveLength(1)
    expect(m.deferral).toBe('native')
  })

  it('keeps our discovery block when one model of the chain lacks tool search', async () => {
    const m = await manifestOf(['anthropic/claude-opus-4-5', 'anthropic/claude-haiku-4-5'], '?format=anthropic')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('keeps our discovery block when a model document says meta', async () => {
    await putDoc('models/anthropic/claude-meta.yaml', 'deferral: meta\n')
    const m = await manifestOf(['anthropic/claude-meta'], '?format=anthropic')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.tools.some((t: { defer_loading?: boolean }) => t.defer_loading)).toBe(false)
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('keeps our discovery block when a fallback model of the chain cannot read the native form', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-5', 'bedrock-converse/anthropic.claude'], '?format=anthropic')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('lets the request’s deferLoading=false win over the catalog', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-5'], '?format=anthropic&deferLoading=false')
    expect(searchTools(m.tools)).toEqual([])
    expect(m.discoveryBlock).toContain('`stocks`')
  })
})

describe('the OpenAI Responses rendering', () => {
  it('defers in OpenAI’s own form on an OpenAI chain (tool_search), held to the published Responses schema', async () => {
    const m = await manifestOf(['openai/gpt-5.4'], '?format=openai-responses')
    expect(responsesTools(m.tools), JSON.stringify(responsesTools.errors)).toBe(true)
    expect(m.tools.filter((t: { type: string }) => t.type === 'tool_search')).toEqual([{ type: 'tool_search' }])
    expect(m.tools.find((t: { name?: string }) => t.name === 'stocks')).toMatchObject({
      type: 'function',
      strict: false,
      defer_loading: true,
    })
    expect(m.tools.find((t: { name?: string }) => t.name === 'weather')).not.toHaveProperty('defer_loading')
    expect(m.discoveryBlock).toBe('')
    expect(m.deferral).toBe('native')
  })

  it('keeps our discovery block on an OpenAI model without tool_search (before gpt-5.4), in the Responses form too', async () => {
    const m = await manifestOf(['openai/gpt-4o'], '?format=openai-responses')
    expect(responsesTools(m.tools), JSON.stringify(responsesTools.errors)).toBe(true)
    expect(m.tools.some((t: { type: string; defer_loading?: boolean }) => t.type === 'tool_search' || t.defer_loading)).toBe(false)
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('keeps Chat Completions on our discovery block: only the Responses API has tool_search', async () => {
    const m = await manifestOf(['openai/gpt-5.4'], '?format=openai')
    expect(chatTools(m.tools), JSON.stringify(chatTools.errors)).toBe(true)
    expect(m.tools.some((t: { type: string }) => t.type === 'tool_search')).toBe(false)
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('refuses deferLoading=true on a format without a native form, naming the formats that have one', async () => {
    const spawned = await (await api.post(`${base}/processes`, { models: ['openai/gpt-5.4'] })).json()
    const res = await api.get(`${base}/processes/${spawned.id}/manifest?format=openai&deferLoading=true`)
    expect(res.status).toBe(400)
    expect((await res.json()).detail).toContain('format=anthropic or format=openai-responses')
  })
})

describe('strict tools on request', () => {
  it('renders strict: true on the tools whose schemas qualify and names every other one with its reason', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-5'], '?format=anthropic&strict=true')
    expect(anthropicTools(m.tools), JSON.stringify(anthropicTools.errors)).toBe(true)
    const strict = m.tools.filter((t: { strict?: boolean }) => t.strict === true).map((t: { name: string }) => t.name)
    expect(strict).toEqual(m.strict.tools)
    // the manifest's own tools are judged; the deferred entries (defer_loading) are not sent strict
    const listed = m.tools
      .filter((t: { input_schema?: unknown; defer_loading?: boolean }) => t.input_schema && !t.defer_loading)
      .map((t: { name: string }) => t.name)
    expect([...m.strict.tools, ...Object.keys(m.strict.notStrict)].sort()).toEqual(listed.sort())
    expect(m.tools.some((t: { strict?: boolean; defer_loading?: boolean }) => t.strict && t.defer_loading)).toBe(false)
    expect(m.strict.tools).toContain('weather')
    // invoke_tool passes arbitrary params through: an open object, which no strict grammar takes
    expect(m.strict.notStrict.invoke_tool).toBe('/properties/params does not set additionalProperties: false')
  })

  it('leaves strict out unless asked, and refuses it where the format has none', async () => {
    const m = await manifestOf(['anthropic/claude-sonnet-4-5'], '?format=anthropic')
    expect(m.strict).toBeUndefined()
    expect(m.tools.some((t: { strict?: boolean }) => t.strict)).toBe(false)
    const spawned = await (await api.post(`${base}/processes`, { models: ['anthropic/claude-sonnet-4-5'] })).json()
    const res = await api.get(`${base}/processes/${spawned.id}/manifest?format=native&strict=true`)
    expect(res.status).toBe(400)
    expect((await res.json()).errors).toEqual([expect.objectContaining({ pointer: '/strict' })])
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

describe('the Gemini rendering', () => {
  it('sends functionDeclarations with parameters in Google’s Schema subset, held to the published proto, and says what the subset lost', async () => {
    const res = await api.put(
      `${base}/server-tools/lookup`,
      'type: doc_lookup\ndescription: Look up.\nprimary: true\nparameters:\n  path: documents/getting-started.md\n',
    )
    expect(res.status, await res.clone().text()).toBeLessThan(300)
    const m = await manifestOf(['gemini/gemini-2.5-pro'], '?format=gemini')
    expect(geminiTools(m.tools), JSON.stringify(geminiTools.errors)).toBe(true)
    expect(m.tools).toHaveLength(1)
    const declarations = m.tools[0].functionDeclarations as { name: string; parameters: { type: string } }[]
    expect(declarations.map((d) => d.name)).toContain('weather')
    for (const d of declarations) expect(d.parameters.type).toBe('OBJECT')
    // invoke_tool's closed object: Gemini's Schema has no additionalProperties to say so
    expect(m.schemaDropped.invoke_tool).toContain('/additionalProperties')
    expect(m.discoveryBlock).toContain('`stocks`')
  })

  it('refuses strict and native deferral on the Gemini form, which has neither', async () => {
    const spawned = await (await api.post(`${base}/processes`, { models: ['gemini/gemini-2.5-pro'] })).json()
    for (const q of ['strict=true', 'deferLoading=true'])
      expect((await api.get(`${base}/processes/${spawned.id}/manifest?format=gemini&${q}`)).status).toBe(400)
  })
})
