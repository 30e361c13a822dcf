import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import type { AppDeps } from '../../../functions/http/app-deps'
import { isServerToolsError } from '../../../lib/errors'
import type { ProcessRecord } from '../../../lib/recipes/ports'
import { ManualClock } from '../../../lib/runtime/clock'
import type { MemoryDocumentStore } from '../../../lib/stores/memory/document-store'
import { MemoryProcessStore } from '../../../lib/stores/memory/process-store'
import { echoPackFactory } from '../../support/pack-factory'

const T = 'acme'
const P = 'p1'
let deps: AppDeps & { store: MemoryDocumentStore }

const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
const pack = (ops: string[], extra = '') => `type: echo_pack\ndescription: A pack\nparameters:\n  ops: [${ops.join(', ')}]\n${extra}`
const putTool = (name: string, body: string, project = P) => deps.tools.put(T, project, name, body, { actor: 't' })
const putDoc = (path: string, body: string, project = P) => deps.documents.put(T, project, path, body, { actor: 't' })
const spawn = async (body: Record<string, unknown>) => (await deps.processes.spawn(T, P, 'alice', body)).process
const manifestNames = async (p: ProcessRecord) =>
  JSON.parse(await deps.surface.manifest({ tenant: T, project: P, id: p.id, subject: 'alice' })).tools.map(
    (t: { name: string }) => t.name,
  ) as string[]
const call = (p: ProcessRecord, name: string, params: unknown = {}) =>
  deps.surface.call(deps.dispatcher, { tenant: T, project: P, id: p.id, subject: 'alice' }, name, params)

async function codeOf(promise: Promise<unknown>) {
  try {
    await promise
  } catch (e) {
    return isServerToolsError(e) ? { code: e.code, message: e.message, errors: e.details?.errors } : { code: 'OTHER', message: String(e) }
  }
  return { code: 'NONE' }
}

beforeEach(() => {
  deps = createMemoryDeps({ extraFactories: [echoPackFactory] })
})

describe('spawn resolves selectors once (spec §6)', () => {
  it('keeps a tool labelled after spawn out of the running process', async () => {
    await putTool('web_one', doc('first web tool', 'labels: [web]\nprimary: true\n'))
    await putDoc('engines/narrow.yaml', 'allowedTools: ["@web"]\n')
    await putDoc('recipes/web.yaml', 'engine: narrow\n')
    const p = await spawn({ recipe: 'web' })
    await putTool('web_two', doc('second web tool', 'labels: [web]\nprimary: true\n'))
    expect(p.allowed).toEqual(['web_one'])
    expect(await manifestNames(p)).toEqual(['tool_description', 'tool_list', 'web_one'])
    const outcome = await call(p, 'web_two')
    expect(outcome).toMatchObject({ isError: true })
    expect((await call(p, 'tool_list')).content).toMatchObject({ inContext: ['tool_description', 'tool_list', 'web_one'], available: [] })
    // a process spawned now sees both
    expect((await spawn({ recipe: 'web' })).allowed).toEqual(['web_one', 'web_two'])
  })

  it('freezes (engineDefault ∪ add) ∖ remove, with label selectors in every list', async () => {
    await putTool('alpha', doc('a', 'labels: [core]\nprimary: true\n'))
    await putTool('beta', doc('b', 'labels: [core, destructive]\nprimary: true\n'))
    await putTool('gamma', doc('g', 'labels: [extra]\n'))
    await putDoc('engines/core.yaml', 'allowedTools: ["@core", whoami]\n')
    await putDoc('recipes/r.yaml', 'engine: core\nallowedToolsAdd: ["@extra"]\nallowedToolsRemove: ["@destructive"]\n')
    const p = await spawn({ recipe: 'r' })
    expect(p.allowed).toEqual(['alpha', 'gamma', 'whoami'])
    expect(p.added).toEqual(['gamma'])
  })

  it('lets an unrestricted engine allow every tool the project has at spawn time', async () => {
    await putTool('alpha', doc('a'))
    const p = await spawn({})
    expect(p.recipe).toBe('default')
    expect(p.allowed).toEqual(expect.arrayContaining(['alpha', 'doc_getting_started', 'invoke_tool', 'tool_list', 'whoami']))
  })

  it('promotes a tool the engine already allows when add names it, and add beats defer', async () => {
    await putTool('stocks', doc('secondary', 'labels: [fin]\n'))
    await putDoc('engines/e.yaml', 'allowedTools: [stocks, whoami]\n')
    await putDoc('recipes/r.yaml', 'engine: e\nallowedToolsAdd: [stocks]\nallowedToolsDefer: [stocks]\n')
    const p = await spawn({ recipe: 'r' })
    expect(p.promoted).toEqual(['stocks'])
    expect(await manifestNames(p)).toContain('stocks')
  })

  it('keeps the own bucket of tools admitted only through add: a 30-tool pack added by label does not flood the manifest', async () => {
    const ops = Array.from({ length: 30 }, (_, i) => `op${i}`)
    await putTool('crm', pack(ops, 'labels: [crm]\n'))
    await putDoc('engines/e.yaml', 'allowedTools: [whoami]\n')
    await putDoc('recipes/r.yaml', 'engine: e\nallowedToolsAdd: ["@crm"]\n')
    const p = await spawn({ recipe: 'r' })
    expect(p.allowed).toHaveLength(31)
    expect(p.promoted).toEqual([])
    expect(await manifestNames(p)).toEqual(['tool_description', 'tool_list', 'whoami'])
    const block = JSON.parse(await deps.surface.manifest({ tenant: T, project: P, id: p.id, subject: 'alice' })).discoveryBlock as string
    expect(block).toContain('### crm')
    expect(block).toContain('- `crm__op0` — echo op0')
  })

  it('makes pack sub-tools primary only when the pack is primary and not defaultDeferred', async () => {
    await putTool('hot', pack(['a', 'b'], 'primary: true\n'))
    await putTool('cold', pack(['a'], 'primary: true\ndefaultDeferred: true\n'))
    await putTool('idle', pack(['a']))
    const names = await manifestNames(await spawn({}))
    expect(names).toEqual(expect.arrayContaining(['hot__a', 'hot__b']))
    expect(names).not.toContain('cold__a')
    expect(names).not.toContain('idle__a')
  })

  it('keeps the floor when the recipe removes or defers it, the engine omits it, or a document disables it', async () => {
    await putDoc('engines/bare.yaml', 'allowedTools: [whoami]\n')
    await putDoc('recipes/hostile.yaml', 'engine: bare\nallowedToolsRemove: [tool_list]\nallowedToolsDefer: [tool_description]\n')
    // every write path refuses a reserved name; a store that already holds one (written before that) is what is left to guard against
    await deps.store.put({
      key: { scope: `${T}#_tenant`, path: 'server-tools/tool_list.yaml' },
      body: 'type: doc_lookup\ndescription: hijack\nenabled: false\nparameters:\n  path: x.md\n',
      actor: 't',
    })
    const { process: p, warnings } = await deps.processes.spawn(T, P, 'alice', { recipe: 'hostile' })
    expect(warnings).toEqual([
      "allowedToolsRemove: 'tool_list' is part of the capability floor and stays primary and callable",
      "allowedToolsDefer: 'tool_description' is part of the capability floor and stays primary and callable",
    ])
    expect(await manifestNames(p)).toEqual(['tool_description', 'tool_list', 'whoami'])
    expect(await call(p, 'tool_list')).toMatchObject({
      isError: false,
      content: { inContext: ['tool_description', 'tool_list', 'whoami'] },
    })
  })

  it('treats a lone * in keep as matching nothing', async () => {
    await putDoc('recipes/r.yaml', 'engine: default\nallowedToolsKeep: ["*"]\nallowedToolsDropFirst: ["doc_*"]\n')
    const p = await spawn({ recipe: 'r' })
    expect(p.keep).toEqual({ names: [], selected: [], prefixes: [] })
    expect(p.dropFirst.prefixes).toEqual(['doc_'])
  })

  it('answers an unknown recipe, engine or model instance with INVALID_CONFIG and a hint', async () => {
    expect(await codeOf(spawn({ recipe: 'defualt' }))).toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining("did you mean 'default'"),
    })
    expect(await codeOf(spawn({ engine: 'nope' }))).toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining("unknown engine 'nope'"),
    })
    expect(await codeOf(spawn({ models: ['opnai/gpt-4o'] }))).toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining("did you mean 'openai'"),
      errors: [{ pointer: '/models/0', message: "unknown model instance in 'opnai/gpt-4o'" }],
    })
  })

  it('ends the sentence before the list of known names when there is no near name', async () => {
    expect((await codeOf(spawn({ recipe: 'zzzzzz' }))).message).toBe(
      "unknown recipe 'zzzzzz': no recipes/zzzzzz.yaml in any layer. Known: default.",
    )
    expect((await codeOf(spawn({ recipe: 'defualt' }))).message).toBe(
      "unknown recipe 'defualt': no recipes/defualt.yaml in any layer — did you mean 'default'? Known: default.",
    )
  })

  it('answers a malformed spawn body with INVALID_INPUT naming each field', async () => {
    const r = await codeOf(spawn({ recipe: 'Bad Name', models: ['gpt-4o'], extra: 1 }))
    expect(r.code).toBe('INVALID_INPUT')
    expect((r as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toEqual(['/extra', '/recipe', '/models/0'])
  })

  it('answers a broken recipe with its problems and their lines', async () => {
    await deps.documents.put(T, P, 'recipes/ok.yaml', 'engine: default\n', { actor: 't' })
    // written around the check, as an older layer might hold it
    await (deps as unknown as { store: { put: (d: unknown) => Promise<unknown> } }).store.put({
      key: { scope: `${T}#${P}`, path: 'recipes/broken.yaml' },
      body: 'engine: default\nallowedToolAdd: [x]\n',
      actor: 't',
    })
    const r = await codeOf(spawn({ recipe: 'broken' }))
    expect(r).toMatchObject({
      code: 'INVALID_CONFIG',
      errors: [{ line: 2, message: "unknown field 'allowedToolAdd' — did you mean 'allowedToolsAdd'?" }],
    })
  })
})

describe('the process record', () => {
  it('is invisible once it expired, and an activation extends its life', async () => {
    const clock = new ManualClock()
    deps = createMemoryDeps({ extraFactories: [echoPackFactory], clock, surface: { processTtlMs: 60 * 60_000 } })
    await putTool('stocks', doc('secondary'))
    const p = await spawn({})
    const key = { tenant: T, project: P, id: p.id, subject: 'alice' }
    clock.advance(50 * 60_000)
    expect(await call(p, 'tool_description', { names: ['stocks'] })).toMatchObject({ isError: false })
    clock.advance(50 * 60_000)
    expect((await deps.processes.get(key)).id).toBe(p.id)
    clock.advance(11 * 60_000)
    expect(await codeOf(deps.processes.get(key))).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('may have expired') })
    expect(await codeOf(deps.surface.manifest(key))).toMatchObject({ code: 'NOT_FOUND' })
  })
})

describe('a process stored with a model chain longer than the budget (before spawns refused it)', () => {
  it('reads the catalog and learned limits of the first 16 entries per turn, not of all 20,000', async () => {
    const processStore = new MemoryProcessStore()
    const stored = createMemoryDeps({ processStore, clock: new ManualClock(Date.now()) })
    const p = (await stored.processes.spawn(T, P, 'alice', {})).process
    const models = Array.from({ length: 20_000 }, (_, i) => `openai/m${i}`)
    await processStore.create({ ...p, id: 'legacy', models })
    const surface = await stored.surface.open({ tenant: T, project: P, id: 'legacy', subject: p.createdBy })
    const facts = await surface.limit()
    expect(facts.chain.map((e) => e.model)).toEqual(models.slice(0, 16))
  })
})
