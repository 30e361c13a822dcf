import { readFileSync } from 'node:fs'
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js'
import Ajv2020 from 'ajv/dist/2020'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { MemoryObservedLimitStore } from '../../lib/stores/memory/observed-limit-store'
import { MemoryProcessStore } from '../../lib/stores/memory/process-store'
import { waitForCancelTool } from '../support/cancellable-tool'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/provider-tools/${name}`, import.meta.url), 'utf8'))
const ajv = new Ajv2020({ allErrors: true, strict: false })

let api: ReturnType<typeof client>
let log: MemoryLogger
let clock: ManualClock

function makeApp(
  shared: { store?: MemoryDocumentStore; processStore?: MemoryProcessStore; observedLimitStore?: MemoryObservedLimitStore } = {},
) {
  return createApp(createMemoryDeps({ extraFactories: [echoPackFactory], log, clock, ...shared }))
}

beforeEach(async () => {
  log = new MemoryLogger()
  clock = new ManualClock()
  api = client(makeApp(), await tokenFor('acme'))
})

async function spawn(body: Record<string, unknown> = {}) {
  const res = await api.post(`${base}/processes`, body)
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(201)
  return (await res.json()) as { id: string; allowed: string[]; warnings: string[] }
}
const manifest = async (id: string, query = '') => {
  const res = await api.get(`${base}/processes/${id}/manifest${query}`)
  expect(res.status, await res.clone().text()).toBe(200)
  return res.json()
}
const callTool = async (id: string, name: string, params: unknown = {}) =>
  (await api.post(`${base}/processes/${id}/tool-calls`, { name, params })).json()
const putDoc = (path: string, body: string, project = 'p1') => api.put(`/brain/acme/projects/${project}/documents/${path}`, body)

describe('POST /processes (spawn)', () => {
  it('answers 201 with the frozen allowed list and a Location', async () => {
    await api.put(`${base}/server-tools/weather`, doc('Weather.', 'primary: true\n'))
    const res = await api.post(`${base}/processes`, { recipe: 'default', models: ['openai/gpt-4o'] })
    expect(res.status).toBe(201)
    const body = await res.json()
    expect(res.headers.get('location')).toBe(`${base}/processes/${body.id}`)
    expect(body).toMatchObject({
      recipe: 'default',
      engine: 'default',
      role: 'default',
      models: ['openai/gpt-4o'],
      warnings: [],
      activationTtlSeconds: 900,
    })
    expect(body.allowed).toContain('weather')
    expect((await api.get(`${base}/processes/${body.id}`)).status).toBe(200)
  })

  it('takes an allowedTools list that replaces the engine allow-set for that process, frozen and shown in its view', async () => {
    await api.put(`${base}/server-tools/weather`, doc('Weather.', 'primary: true\nlabels: [outside]\n'))
    await api.put(`${base}/server-tools/stocks`, doc('Stocks.', 'primary: true\n'))
    await api.put(`${base}/server-tools/news`, doc('News.', 'primary: true\nlabels: [outside]\n'))
    const p = await spawn({ allowedTools: ['stocks', '@outside', 'ghost'] })
    expect(p.allowed).toEqual(['ghost', 'news', 'stocks', 'weather'])
    expect(p.warnings).toContain(
      "the spawn's allowedTools: no tool 'ghost' exists now; the name stays in the process and takes effect if such a tool appears",
    )
    const view = await (await api.get(`${base}/processes/${p.id}`)).json()
    expect(view.allowedToolsOverride).toEqual(['stocks', '@outside', 'ghost'])
    const names = (await manifest(p.id)).tools.map((t: { name: string }) => t.name)
    expect(names).toEqual(['news', 'stocks', 'tool_description', 'tool_list', 'weather'])
    // a tool labelled later does not join the running process
    await api.put(`${base}/server-tools/sports`, doc('Sports.', 'primary: true\nlabels: [outside]\n'))
    expect((await manifest(p.id)).tools.map((t: { name: string }) => t.name)).not.toContain('sports')
    expect(await callTool(p.id, 'whoami')).toMatchObject({ isError: true })
  })

  it('refuses a malformed allowedTools with a pointer to the entry', async () => {
    const res = await api.post(`${base}/processes`, { allowedTools: ['ok', 7] })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ errors: [{ pointer: '/allowedTools/1' }] })
    const long = await api.post(`${base}/processes`, { allowedTools: Array.from({ length: 257 }, (_, i) => `t${i}`) })
    expect(long.status).toBe(400)
    expect(await long.json()).toMatchObject({ errors: [{ pointer: '/allowedTools' }] })
  })

  it("names the recipe's defer list deferredByRecipe: the manifest defers more than it", async () => {
    await putDoc('recipes/lazy.yaml', 'engine: default\nallowedToolsDefer: [whoami]\n')
    const res = await api.post(`${base}/processes`, { recipe: 'lazy' })
    const body = await res.json()
    expect(body.deferredByRecipe).toEqual(['whoami'])
    expect(body).not.toHaveProperty('deferred')
    expect((await (await api.get(`${base}/processes/${body.id}`)).json()).deferredByRecipe).toEqual(['whoami'])
    const deferredInManifest = (await manifest(body.id)).discoveryBlock.match(/^- \S+/gm) ?? []
    expect(deferredInManifest.length).toBeGreaterThan(1)
  })

  it('answers 422 for an unknown recipe and 400 for a malformed body', async () => {
    const unknown = await api.post(`${base}/processes`, { recipe: 'nope' })
    expect(unknown.status).toBe(422)
    expect(await unknown.json()).toMatchObject({ code: 'INVALID_CONFIG', errors: [{ pointer: '/recipe' }] })
    const bad = await api.post(`${base}/processes`, { models: 'openai/gpt-4o' })
    expect(bad.status).toBe(400)
  })

  it('needs tools:invoke to spawn and tools:read for the manifest', async () => {
    const p = await spawn()
    const reader = client(makeApp(), await tokenFor('acme', 'tools:read'))
    expect((await reader.post(`${base}/processes`, {})).status).toBe(403)
    expect((await reader.post(`${base}/processes/${p.id}/tool-calls`, { name: 'tool_list' })).status).toBe(403)
  })

  it('answers 404 for a process that does not exist', async () => {
    expect((await api.get(`${base}/processes/00000000-0000-0000-0000-000000000000/manifest`)).status).toBe(404)
  })
})

describe('PUT documents: recipes, engines and the model catalog are checked on write', () => {
  it('answers 422 with the line of each problem', async () => {
    const res = await putDoc('recipes/r.yaml', 'engine: default\nallowedToolsAdd: ["doc_*"]\nactivationTtl: soon\nmodels: [gpt-4o]\n')
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.errors.map((e: { line: number; message: string }) => [e.line, e.message])).toEqual([
      [2, "allowedToolsAdd[0]: 'doc_*' is a pattern; only allowedToolsKeep and allowedToolsDropFirst take 'prefix*' patterns"],
      [4, "model 'gpt-4o' must be written 'instance/model' (e.g. 'openai/gpt-4o')"],
      [3, "activationTtl 'soon' is not a duration like '15m', '90s' or '1h30m'"],
    ])
    expect((await putDoc('models/openai/gpt-x.yaml', 'maxTools: -1\n')).status).toBe(422)
    expect((await putDoc('engines/e.yaml', 'allowedTool: [a]\n')).status).toBe(422)
    expect((await putDoc('notes/free.yaml', 'anything: [goes\n')).status).toBe(201)
  })
})

describe('GET /processes/{id}/manifest', () => {
  it('answers tools (alphabetical), both discovery blocks, promptHints and budget facts', async () => {
    await api.put(
      `${base}/server-tools/weather`,
      doc('Current weather for a city. Uses a public API.', 'primary: true\npromptHint: Prefer weather for forecasts.\n'),
    )
    await api.put(`${base}/server-tools/stocks`, doc('Quotes for a ticker.', 'searchHint: stock quotes by ticker\n'))
    await api.put(
      `${base}/server-tools/crm`,
      'type: echo_pack\ndescription: CRM\npromptHint: Customer records live in crm.\nparameters:\n  ops: [find]\n',
    )
    await putDoc('engines/e.yaml', 'allowedTools: [weather, stocks, "@echo"]\n')
    await putDoc('recipes/r.yaml', 'engine: e\nmodels: [openai/gpt-4o]\n')
    const p = await spawn({ recipe: 'r' })
    const m = await manifest(p.id)
    expect(Object.keys(m)).toEqual(['tools', 'discoveryBlock', 'demotedDiscoveryBlock', 'promptHints', 'budget'])
    expect(m.tools.map((t: { name: string }) => t.name)).toEqual(['tool_description', 'tool_list', 'weather'])
    expect(m.tools[2]).toEqual({
      name: 'weather',
      description: 'Current weather for a city. Uses a public API.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    })
    expect(m.promptHints).toEqual(['Prefer weather for forecasts.'])
    expect(m.budget).toEqual({ limit: 128, reserved: 1, effective: 127, demoted: 0, demotedFamilies: [] })
    expect(m.demotedDiscoveryBlock).toBe('')
    expect(m.discoveryBlock).toContain('call `tool_description(names=[…])` with every candidate')
    expect(m.discoveryBlock).toContain(
      '- `stocks` — stock quotes by ticker\n\n### crm\nCustomer records live in crm.\n- `crm__find` — echo find\n',
    )
  })

  it('takes the minimum over the whole model chain', async () => {
    await putDoc('models/gateway/_provider.yaml', 'wireType: openai\nmaxTools: 40\n', '_tenant')
    const p = await spawn({ models: ['openai/gpt-4o', 'gateway/glm', 'anthropic/claude-sonnet'] })
    expect((await manifest(p.id)).budget.limit).toBe(40)
  })

  it('lets maxTools: 0 on a model suppress its provider default, and a model override win over it', async () => {
    await putDoc('models/openai/gpt-unbounded.yaml', 'maxTools: 0\n', '_tenant')
    await putDoc('models/openai/gpt-small.yaml', 'maxTools: 64\n', '_tenant')
    expect((await manifest((await spawn({ models: ['openai/gpt-unbounded'] })).id)).budget).toMatchObject({ limit: null, effective: null })
    expect((await manifest((await spawn({ models: ['openai/gpt-4o'] })).id)).budget.limit).toBe(128)
    expect((await manifest((await spawn({ models: ['openai/gpt-small'] })).id)).budget.limit).toBe(64)
    expect((await manifest((await spawn({ models: ['anthropic/claude'] })).id)).budget.limit).toBe(null)
  })

  it('answers 422 BUDGET_TOO_SMALL with the numbers when the floor does not fit', async () => {
    await putDoc('models/toy/_provider.yaml', 'maxTools: 1\n', '_tenant')
    const res = await api.get(`${base}/processes/${(await spawn({ models: ['toy/one'] })).id}/manifest`)
    expect(res.status).toBe(422)
    expect(await res.json()).toMatchObject({ code: 'BUDGET_TOO_SMALL', limit: 1, floor: 2 })
  })

  it('changes the demoted block while the static block stays byte-identical when only the ranking moved', async () => {
    await putDoc('models/tiny/_provider.yaml', 'maxTools: 5\n', '_tenant')
    for (const [name, primary] of [
      ['alpha_one', true],
      ['beta_one', true],
      ['gamma_one', true],
      ['delta', false],
    ] as const) {
      await api.put(`${base}/server-tools/${name}`, doc(`The ${name} tool.`, primary ? 'primary: true\n' : ''))
    }
    await putDoc('engines/e.yaml', 'allowedTools: [alpha_one, beta_one, gamma_one, delta]\n')
    await putDoc('recipes/r.yaml', 'engine: e\nmodels: [tiny/m]\n')
    const p = await spawn({ recipe: 'r' })
    const first = await manifest(p.id)
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(['alpha_one', 'beta_one', 'tool_description', 'tool_list'])
    expect(first.demotedDiscoveryBlock).toContain('- `gamma_one` — The gamma_one tool.')
    expect(log.find('surface.budget_demoted')[0]).toMatchObject({
      level: 'info',
      fields: { demoted: 1, families: [{ family: 'gamma', count: 1 }] },
    })
    expect(log.lines.find((l) => l.event === 'surface.budget_demoted_names')).toMatchObject({
      level: 'debug',
      fields: { names: ['gamma_one'] },
    })
    expect((await callTool(p.id, 'gamma_one')).isError).toBe(false)
    const second = await manifest(p.id)
    expect(second.tools.map((t: { name: string }) => t.name)).toEqual(['alpha_one', 'gamma_one', 'tool_description', 'tool_list'])
    expect(second.demotedDiscoveryBlock).toContain('- `beta_one` — The beta_one tool.')
    expect(second.demotedDiscoveryBlock).not.toBe(first.demotedDiscoveryBlock)
    expect(second.discoveryBlock).toBe(first.discoveryBlock)
    expect(second.discoveryBlock).toContain('- `delta` — The delta tool.')
  })

  it('adds extraTools as keep and triages again; refuses ones outside the allowed list', async () => {
    await api.put(`${base}/server-tools/stocks`, doc('Quotes.'))
    const p = await spawn()
    const m = await manifest(p.id, '?extraTools=stocks')
    expect(m.tools.map((t: { name: string }) => t.name)).toContain('stocks')
    expect((await api.get(`${base}/processes/${p.id}/manifest?extraTools=nope`)).status).toBe(400)
  })

  it('renders each provider format so that provider’s published JSON shape accepts it', async () => {
    await api.put(`${base}/server-tools/weather`, doc('Weather.', 'primary: true\n'))
    await api.put(`${base}/server-tools/crm`, 'type: echo_pack\ndescription: CRM\nprimary: true\nparameters:\n  ops: [find, update]\n')
    await api.put(`${base}/server-tools/stocks`, doc('Quotes.'))
    const p = await spawn({ models: ['openai/gpt-4o'] })
    const openai = await manifest(p.id, '?format=openai')
    const anthropic = await manifest(p.id, '?format=anthropic')
    const deferred = await manifest(p.id, '?format=anthropic&deferLoading=true')
    const mcp = await manifest(p.id, '?format=mcp')
    const responses = await manifest(p.id, '?format=openai-responses')
    const check = (schema: string, tools: unknown) => {
      const validate = ajv.compile(fixture(schema))
      expect(validate(tools), JSON.stringify(validate.errors)).toBe(true)
    }
    check('openai-chat-tools.schema.json', openai.tools)
    check('anthropic-messages-tools.schema.json', anthropic.tools)
    check('anthropic-messages-tools.schema.json', deferred.tools)
    check('mcp-tools.schema.json', mcp.tools)
    check('openai-responses-tools.schema.json', responses.tools)
    for (const t of mcp.tools) expect(ToolSchema.safeParse(t).success).toBe(true)
    expect(openai.tools.find((t: { function: { name: string } }) => t.function.name === 'crm__find')).toMatchObject({
      type: 'function',
      function: { parameters: { type: 'object' } },
    })
    expect(anthropic.tools.some((t: { defer_loading?: boolean }) => t.defer_loading)).toBe(false)
    expect(deferred.tools.find((t: { name: string }) => t.name === 'stocks')).toMatchObject({ defer_loading: true })
    expect(deferred.tools.find((t: { name: string }) => t.name === 'weather')).not.toHaveProperty('defer_loading')
    expect(deferred.tools.map((t: { name: string }) => t.name)).toEqual([...deferred.tools.map((t: { name: string }) => t.name)].sort())
    expect((await api.get(`${base}/processes/${p.id}/manifest?format=cohere`)).status).toBe(400)
    expect((await api.get(`${base}/processes/${p.id}/manifest?format=openai&deferLoading=true`)).status).toBe(400)
  })
})

describe('POST /processes/{id}/tool-calls', () => {
  it('answers { isError, content } through the surface gates, with 200 for what the call caused', async () => {
    await putDoc('engines/e.yaml', 'allowedTools: [whoami]\n')
    await putDoc('recipes/r.yaml', 'engine: e\n')
    const p = await spawn({ recipe: 'r' })
    expect(await callTool(p.id, 'whoami')).toEqual({
      isError: false,
      content: { tenant: 'acme', project: 'p1', subject: 'alice@example.test', processId: p.id },
    })
    expect(await callTool(p.id, 'doc_errors')).toMatchObject({
      isError: true,
      content: { message: "Unknown tool 'doc_errors'. Call tool_list to see the tools you can use." },
    })
    expect(await callTool(p.id, 'tool_list')).toEqual({
      isError: false,
      content: { count: 3, inContext: ['tool_description', 'tool_list', 'whoami'], available: [] },
    })
  })

  it('hands the request’s signal to the running tool, so a client that goes away ends the call', async () => {
    const { tool: waitForCancel, started } = waitForCancelTool()
    const app = createApp(createMemoryDeps({ extraBuiltins: [waitForCancel], log, clock }))
    const token = await tokenFor('acme')
    const own = client(app, token)
    await own.put(`${base}/documents/engines/e.yaml`, 'allowedTools: [wait_for_cancel]\n')
    await own.put(`${base}/documents/recipes/r.yaml`, 'engine: e\n')
    const p = await (await own.post(`${base}/processes`, { recipe: 'r' })).json()
    const caller = new AbortController()
    const pending = app.request(`${base}/processes/${p.id}/tool-calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'wait_for_cancel', params: {} }),
      signal: caller.signal,
    })
    await started
    caller.abort() // the client goes away while the tool runs
    expect(await (await pending).json()).toEqual({ isError: true, content: { message: expect.stringMatching(/^cancelled: .*AbortError/) } })
  })
})

describe('POST /processes/{id}/diagnostics/empty-response', () => {
  it('names phantom candidates with their origin and reports each once per process', async () => {
    await api.put(`${base}/server-tools/stocks`, doc('Quotes.'))
    await api.put(`${base}/server-tools/weather`, doc('Weather.', 'primary: true\n'))
    const p = await spawn()
    const body = {
      messages: [
        { role: 'system', content: 'Use `stocks` for quotes.' },
        { role: 'user', content: [{ type: 'text', text: 'What does web_search say? Then call weather.' }] },
        { role: 'assistant', content: 'Let me check doc_errors first.' },
      ],
      offeredTools: [{ type: 'function', function: { name: 'weather' } }, 'tool_list', { name: 'tool_description' }],
      finishReason: 'stop',
    }
    const first = await (await api.post(`${base}/processes/${p.id}/diagnostics/empty-response`, body)).json()
    expect(first).toEqual({
      kind: 'phantom',
      phantoms: [
        { name: 'doc_errors', origin: 'context', firstReport: true },
        { name: 'stocks', origin: 'prompt', firstReport: true },
      ],
    })
    expect(log.find('llm.diagnostic').map((l) => [l.level, l.fields.tool, l.fields.origin])).toEqual([
      ['warn', 'doc_errors', 'context'],
      ['warn', 'stocks', 'prompt'],
    ])
    const again = await (await api.post(`${base}/processes/${p.id}/diagnostics/empty-response`, body)).json()
    expect(again.phantoms.map((x: { firstReport: boolean }) => x.firstReport)).toEqual([false, false])
    expect(log.find('llm.diagnostic')).toHaveLength(2)
  })

  it('says blank when no known tool was named, and never diagnoses finishReason length', async () => {
    const p = await spawn()
    const blank = await (
      await api.post(`${base}/processes/${p.id}/diagnostics/empty-response`, {
        messages: [{ role: 'user', content: 'hello there' }],
        offeredTools: [],
      })
    ).json()
    expect(blank).toEqual({ kind: 'blank', phantoms: [] })
    expect(log.find('llm.diagnostic').map((l) => [l.level, l.fields.kind])).toEqual([['warn', 'blank']])
    const length = await (
      await api.post(`${base}/processes/${p.id}/diagnostics/empty-response`, {
        messages: [{ role: 'user', content: 'use whoami' }],
        offeredTools: [],
        finishReason: 'length',
      })
    ).json()
    expect(length).toMatchObject({ kind: 'skipped', phantoms: [] })
    expect(log.find('llm.diagnostic')).toHaveLength(1)
    expect((await api.post(`${base}/processes/${p.id}/diagnostics/empty-response`, { messages: 'x' })).status).toBe(400)
  })
})

describe('POST /models/observed-limits', () => {
  const rejection = "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead."

  it('learns the limit from a rejection and applies it on the next manifest in another app instance', async () => {
    const shared = {
      store: new MemoryDocumentStore(clock),
      processStore: new MemoryProcessStore(),
      observedLimitStore: new MemoryObservedLimitStore(),
    }
    const token = await tokenFor('acme')
    const a = client(makeApp(shared), token)
    const b = client(makeApp(shared), token)
    await a.put('/brain/acme/projects/_tenant/documents/models/cortecs/_provider.yaml', 'wireType: openai\n')
    const p = await (await a.post(`${base}/processes`, { models: ['cortecs/glm-5'] })).json()
    expect((await (await b.get(`${base}/processes/${p.id}/manifest`)).json()).budget.limit).toBe(null)
    const learned = await a.post('/brain/acme/models/observed-limits', {
      instance: 'cortecs',
      model: 'glm-5',
      errorMessage: rejection.replace('128', '96'),
      requestedToolCount: 163,
    })
    expect(await learned.json()).toMatchObject({
      learned: true,
      observed: 96,
      limit: 96,
      model: 'cortecs/glm-5',
      advice: expect.stringContaining("'maxTools: 96'"),
    })
    expect(log.find('model.tool_limit_learned')[0]).toMatchObject({ level: 'warn' })
    expect((await (await b.get(`${base}/processes/${p.id}/manifest`)).json()).budget).toMatchObject({ limit: 96, effective: 95 })
  })

  it('keys a learned limit case-insensitively: learned for CORTECS/GLM-5, it applies to cortecs/glm-5', async () => {
    await api.put('/brain/acme/projects/_tenant/documents/models/cortecs/_provider.yaml', 'wireType: openai\n')
    const learned = await api.post('/brain/acme/models/observed-limits', {
      instance: ' CORTECS ',
      model: 'GLM-5 ',
      errorMessage: rejection.replace('128', '64'),
      requestedToolCount: 163,
    })
    expect(learned.status).toBe(200)
    expect(await learned.json()).toMatchObject({ learned: true, limit: 64, model: 'cortecs/GLM-5' })
    const p = await (await api.post(`${base}/processes`, { models: ['cortecs/glm-5'] })).json()
    expect((await (await api.get(`${base}/processes/${p.id}/manifest`)).json()).budget.limit).toBe(64)
    const again = await (
      await api.post('/brain/acme/models/observed-limits', {
        instance: 'cortecs',
        model: 'glm-5',
        errorMessage: rejection.replace('128', '80'),
        requestedToolCount: 163,
      })
    ).json()
    expect(again).toMatchObject({ learned: false, previous: 64, limit: 64 })
  })

  it('keeps the minimum and says why nothing was learned', async () => {
    const post = async (errorMessage: string) =>
      (
        await api.post('/brain/acme/models/observed-limits', { instance: 'openai', model: 'gpt-4o', errorMessage, requestedToolCount: 163 })
      ).json()
    expect(await post(rejection)).toMatchObject({ learned: true, limit: 128 })
    expect(await post(rejection.replace('128', '200'))).toMatchObject({ learned: false, limit: 128, previous: 128 })
    expect(await post('Too many tools were provided')).toMatchObject({
      learned: false,
      reason: expect.stringContaining('set maxTools for this model'),
    })
    expect(await post('rate limit exceeded')).toMatchObject({
      learned: false,
      reason: expect.stringContaining('not a tool-count rejection'),
    })
    expect((await api.post('/brain/acme/models/observed-limits', { instance: 'openai' })).status).toBe(400)
  })
})

describe('learned limits cannot be poisoned (issue 21 N6)', () => {
  const report = (maximum: number, requestedToolCount?: number, tokenApi = api) =>
    tokenApi.post('/brain/acme/models/observed-limits', {
      instance: 'cortecs',
      model: 'glm-5',
      errorMessage: `Invalid 'tools': array too long. Expected an array with maximum length ${maximum}.`,
      ...(requestedToolCount !== undefined ? { requestedToolCount } : {}),
    })
  const limitOf = async (id: string) => (await manifest(id)).budget.limit
  beforeEach(async () => {
    await api.put('/brain/acme/projects/_tenant/documents/models/cortecs/_provider.yaml', 'wireType: openai\n')
  })

  it('raises a report of "maximum 1" to the deployment minimum of 8, so the manifest keeps the floor and real tools', async () => {
    const p = await spawn({ models: ['cortecs/glm-5'] })
    const answer = await (await report(1, 40)).json()
    expect(answer).toMatchObject({ learned: true, observed: 1, limit: 8, advice: expect.stringContaining('no learned limit is below 8') })
    expect(await limitOf(p.id)).toBe(8)
  })

  it('does not believe a rejection of a request no longer than the maximum it names, nor one that omits the count', async () => {
    const p = await spawn({ models: ['cortecs/glm-5'] })
    expect(await (await report(20, 20)).json()).toMatchObject({ learned: false, reason: expect.stringContaining('requestedToolCount') })
    expect(await (await report(20)).json()).toMatchObject({ learned: false, reason: expect.stringContaining('requestedToolCount') })
    expect(await limitOf(p.id)).toBe(null)
  })

  it('forgets a learned limit after its TTL of 7 days', async () => {
    expect(await (await report(30, 60)).json()).toMatchObject({ learned: true, limit: 30, expiresAt: '2026-01-08T00:00:00.000Z' })
    clock.advance(7 * 24 * 3600_000 - 1_000)
    expect(await limitOf((await spawn({ models: ['cortecs/glm-5'] })).id)).toBe(30)
    clock.advance(1_000)
    const again = await spawn({ models: ['cortecs/glm-5'] })
    expect(await limitOf(again.id)).toBe(null)
  })

  it("drops a learned limit once the catalog's maxTools for the model changes, and learns again under the new one", async () => {
    await api.put('/brain/acme/projects/_tenant/documents/models/cortecs/glm-5.yaml', 'maxTools: 100\n')
    expect(await (await report(10, 60)).json()).toMatchObject({ learned: true, limit: 10 })
    expect(await limitOf((await spawn({ models: ['cortecs/glm-5'] })).id)).toBe(10)
    await api.put('/brain/acme/projects/_tenant/documents/models/cortecs/glm-5.yaml', 'maxTools: 120\n')
    const p = await spawn({ models: ['cortecs/glm-5'] })
    expect(await limitOf(p.id)).toBe(120)
    expect(await (await report(50, 60)).json()).toMatchObject({ learned: true, limit: 50 })
    expect(await limitOf((await spawn({ models: ['cortecs/glm-5'] })).id)).toBe(50)
  })

  it('needs the limits:report scope: a tools:invoke token is refused with 403 naming it', async () => {
    const invoker = client(makeApp(), await tokenFor('acme', 'tools:read tools:invoke'))
    const res = await report(1, 40, invoker)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ requiredScope: 'limits:report' })
  })
})

describe('model chains are bounded (issue 21 N5)', () => {
  it('refuses a spawn with 17 models with a 400 naming the limit of 16, before reading any entry', async () => {
    const models = Array.from({ length: 17 }, (_, i) => `nowhere${i}/m`)
    const res = await api.post(`${base}/processes`, { models })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.detail).toContain('at most 16 entries (this one has 17)')
    expect(body.errors).toEqual([{ pointer: '/models', message: expect.stringContaining('at most 16') }])
  })

  it('takes a chain of exactly 16', async () => {
    await api.put('/brain/acme/projects/_tenant/documents/models/cortecs/_provider.yaml', 'wireType: openai\n')
    await spawn({ models: Array.from({ length: 16 }, (_, i) => `cortecs/m${i}`) })
  })

  it('refuses a recipe whose models list is longer than 16 with a 422 at write', async () => {
    const models = Array.from({ length: 17 }, (_, i) => `  - openai/m${i}`).join('\n')
    const res = await api.put(`${base}/documents/recipes/long.yaml`, `engine: default\nmodels:\n${models}\n`)
    expect(res.status).toBe(422)
    expect(await res.text()).toContain('at most 16 entries (this one has 17)')
  })
})

describe('freshness of the manifest', () => {
  it('shows an edited tool document on the very next manifest, and an activation from the next turn', async () => {
    await api.put(`${base}/server-tools/weather`, doc('Old text.', 'primary: true\n'))
    await api.put(`${base}/server-tools/stocks`, doc('Quotes.'))
    const p = await spawn()
    const first = await manifest(p.id)
    expect(first.tools.find((t: { name: string }) => t.name === 'weather').description).toBe('Old text.')
    await api.put(`${base}/server-tools/weather`, doc('New text.', 'primary: true\n'))
    const second = await manifest(p.id)
    expect(second.tools.find((t: { name: string }) => t.name === 'weather').description).toBe('New text.')
    await callTool(p.id, 'tool_description', { names: 'stocks' })
    expect((await manifest(p.id)).tools.map((t: { name: string }) => t.name)).toContain('stocks')
    clock.advance(16 * 60_000)
    expect((await manifest(p.id)).tools.map((t: { name: string }) => t.name)).not.toContain('stocks')
  })
})
