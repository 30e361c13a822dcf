import { beforeEach, describe, expect, it } from 'vitest'
import { formatPreview } from '../../functions/cli/output'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import type { ProcessKey, ProcessRecord } from '../../lib/recipes/ports'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemoryProcessStore } from '../../lib/stores/memory/process-store'
import { estimateTokens } from '../../lib/tools/code-declaration'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`

/** A process store that remembers every write, to prove the preview stores nothing. */
class RecordingProcessStore extends MemoryProcessStore {
  writes: string[] = []
  override async create(record: ProcessRecord) {
    this.writes.push(`create ${record.id}`)
    return super.create(record)
  }
  override async stampActivations(key: ProcessKey, names: string[], at: number, expiresAt: number, now: number) {
    this.writes.push(`stamp ${key.id}`)
    return super.stampActivations(key, names, at, expiresAt, now)
  }
}

let api: ReturnType<typeof client>
let processStore: RecordingProcessStore
let log: MemoryLogger

beforeEach(async () => {
  processStore = new RecordingProcessStore()
  log = new MemoryLogger()
  api = client(
    createApp(createMemoryDeps({ extraFactories: [echoPackFactory], clock: new ManualClock(), processStore, log })),
    await tokenFor('acme'),
  )
})

const putDoc = async (path: string, body: string, project = 'p1') => {
  const res = await api.put(`/brain/acme/projects/${project}/documents/${path}`, body)
  expect(res.status, await res.clone().text()).toBeLessThan(300)
}
const putTool = async (name: string, body: string, project = 'p1') => {
  const res = await api.put(`/brain/acme/projects/${project}/server-tools/${name}`, body)
  expect(res.status, await res.clone().text()).toBeLessThan(300)
}
const preview = async (body: Record<string, unknown>) => {
  const res = await api.post(`${base}/surface/preview`, body)
  expect(res.status, await res.clone().text()).toBe(200)
  return res.json()
}

/** A small limit, three primary families, a deferred pack member and a forced-deferred tool: every status at once. */
async function crowdedProject() {
  await putDoc('models/tiny/_provider.yaml', 'wireType: openai\nmaxTools: 7\n', '_tenant')
  for (const name of ['alpha_one', 'alpha_two', 'beta_one', 'gamma_one']) await putTool(name, doc(`The ${name} tool.`, 'primary: true\n'))
  await putTool('notes', doc('Notes.'))
  await putTool(
    'echo',
    'type: echo_pack\ndescription: Echo.\nprimary: true\npromptHint: Echo politely.\nparameters:\n  ops: [say, shout]\n  deferredOps: [shout]\n',
  )
  await putDoc(
    'recipes/crowded.yaml',
    'engine: default\nmodels: [tiny/m]\nallowedToolsKeep: [gamma_one]\nallowedToolsDefer: [beta_one]\nallowedToolsDropFirst: ["alpha*"]\nallowedToolsAdd: ["@nothing-has-this"]\n',
  )
}

describe('POST /projects/{p}/surface/preview', () => {
  it('shows a code recipe’s declaration as the model reads it, and its size, and the CLI prints both', async () => {
    await crowdedProject()
    await putDoc('recipes/coder.yaml', 'engine: default\nmodels: [tiny/m]\nsurface: code\n')
    const p = await preview({ recipe: 'coder' })
    const codeTool = p.manifest.tools.find((t: { name: string }) => t.name === 'execute_code')
    expect(codeTool.description).toContain(p.code.declaration)
    expect(p.code.declarationBytes).toBe(new TextEncoder().encode(p.code.declaration).length)
    expect(p.code.declared).toEqual(['alpha_one', 'alpha_two', 'beta_one', 'echo__say', 'gamma_one', 'whoami']) // maxTools 7 bounds the tools array, not the declaration
    expect(p.manifest.tools.map((t: { name: string }) => t.name)).toEqual(['execute_code', 'invoke_tool', 'tool_description', 'tool_list'])
    const printed = formatPreview(p)
    expect(printed).toContain(
      `code surface: 6 tools declared in execute_code · ${p.code.declarationBytes.toLocaleString('en-US')} of 49,152 bytes`,
    )
    expect(printed).toContain('readonly echo: {')
    expect(p.code).toMatchObject({ chosenBy: 'recipe', budgetBy: 'setting', estimatedTokens: estimateTokens(p.code.declaration) })
    expect(printed).toContain(`about ${p.code.estimatedTokens.toLocaleString('en-US')} tokens · chosen by the recipe`)
  })

  it('shows the code surface a model’s profile chooses for a recipe that names none, and none where the profile says native', async () => {
    await crowdedProject()
    await putDoc('models/coding/_provider.yaml', 'surface: code\ncodeDeclarationBytes: 300\n')
    await putDoc('models/small/_provider.yaml', 'surface: native\n')
    const onCoding = await preview({ recipe: 'crowded', models: ['coding/m'] })
    expect(onCoding.code).toMatchObject({ chosenBy: 'endpoint', budgetBytes: 300, budgetBy: 'codeDeclarationBytes' })
    expect(onCoding.code.overBudget.length).toBeGreaterThan(0)
    expect(formatPreview(onCoding)).toContain("chosen by the model's endpoint profile")
    const onSmall = await preview({ recipe: 'crowded', models: ['small/m'] })
    expect(onSmall.code).toBeUndefined()
    expect(onSmall.manifest.tools.map((t: { name: string }) => t.name)).not.toContain('execute_code')
  })

  it('answers exactly the manifest a process spawned right after it gets on its first turn', async () => {
    await crowdedProject()
    const seen = await preview({ recipe: 'crowded' })
    const spawned = await api.post(`${base}/processes`, { recipe: 'crowded' })
    expect(spawned.status).toBe(201)
    const process = await spawned.json()
    const manifest = await (await api.get(`${base}/processes/${process.id}/manifest?format=native`)).json()
    expect(seen.manifest).toEqual(manifest)
    expect(seen.manifest.budget.demoted).toBeGreaterThan(0)
    expect({
      recipe: seen.recipe,
      engine: seen.engine,
      models: seen.models,
      allowed: seen.allowed,
      deferredByRecipe: seen.deferredByRecipe,
      warnings: seen.warnings,
    }).toEqual({
      recipe: process.recipe,
      engine: process.engine,
      models: process.models,
      allowed: process.allowed,
      deferredByRecipe: process.deferredByRecipe,
      warnings: process.warnings,
    })
  })

  it('answers the manifest with extraTools exactly as the manifest route does', async () => {
    await crowdedProject()
    const seen = await preview({ recipe: 'crowded', extraTools: ['beta_one'] })
    const process = await (await api.post(`${base}/processes`, { recipe: 'crowded' })).json()
    const manifest = await (await api.get(`${base}/processes/${process.id}/manifest?extraTools=beta_one`)).json()
    expect(seen.manifest).toEqual(manifest)
    expect(seen.families).toContainEqual({ family: 'beta_one', tools: ['beta_one'], status: 'kept', tier: 'keep' })
  })

  it('stores no process, activates nothing and logs no process budget', async () => {
    await crowdedProject()
    expect((await preview({ recipe: 'crowded' })).manifest.budget.demoted).toBeGreaterThan(0)
    await preview({})
    expect(processStore.writes).toEqual([])
    expect(log.find('surface.budget_demoted')).toEqual([])
  })

  it('lists every visible tool by family with its status and tier, ranked as the triage ranked them', async () => {
    await crowdedProject()
    const seen = await preview({ recipe: 'crowded' })
    expect(seen.families).toEqual([
      { family: 'tool_description', tools: ['tool_description'], status: 'kept', tier: 'floor' },
      { family: 'tool_list', tools: ['tool_list'], status: 'kept', tier: 'floor' },
      { family: 'gamma_one', tools: ['gamma_one'], status: 'kept', tier: 'keep' },
      { family: 'invoke', tools: ['invoke_tool'], status: 'kept', tier: 'handwritten' },
      { family: 'whoami', tools: ['whoami'], status: 'kept', tier: 'handwritten' },
      { family: 'echo', tools: ['echo__say'], status: 'kept', tier: 'pack' },
      // a dropFirst prefix splits each tool it matches off the alpha family
      { family: 'alpha_one', tools: ['alpha_one'], status: 'demoted', tier: 'dropFirst' },
      { family: 'alpha_two', tools: ['alpha_two'], status: 'demoted', tier: 'dropFirst' },
      { family: 'beta', tools: ['beta_one'], status: 'deferred', tier: 'handwritten' },
      {
        family: 'doc',
        tools: ['doc_discovery', 'doc_errors', 'doc_getting_started', 'doc_scripted_tools', 'doc_tools_overview'],
        status: 'deferred',
        tier: 'handwritten',
      },
      { family: 'echo', tools: ['echo__shout'], status: 'deferred', tier: 'pack' },
      { family: 'execute', tools: ['execute_javascript'], status: 'deferred', tier: 'handwritten' },
      { family: 'notes', tools: ['notes'], status: 'deferred', tier: 'handwritten' },
    ])
    expect(seen.manifest.budget).toEqual({ limit: 7, reserved: 1, effective: 6, demoted: 2, demotedFamilies: ['alpha_one', 'alpha_two'] })
    expect(seen.warnings).toEqual([
      "allowedToolsAdd: '@nothing-has-this' selects no tool now (label selectors are resolved once, at spawn)",
    ])
  })

  it('names the layer each tool comes from and every layer it shadows', async () => {
    await putTool('handbook', doc('Tenant handbook.'), '_tenant')
    await putTool('handbook', doc('Project handbook.'))
    await putTool('doc_errors', doc('Tenant errors.'), '_tenant')
    await putTool('whoami', doc('Who am I, project edition.'))
    await putTool('echo', 'type: echo_pack\ndescription: Echo.\nparameters:\n  ops: [say]\n', '_tenant')
    const seen = await preview({})
    expect(seen.provenance).toMatchObject({
      handbook: { source: 'project', shadows: ['tenant'] },
      doc_errors: { source: 'tenant', shadows: ['bundled'] },
      doc_discovery: { source: 'bundled', shadows: [] },
      whoami: { source: 'project', shadows: ['builtin'] },
      echo__say: { source: 'tenant', shadows: [] },
      tool_list: { source: 'builtin', shadows: [] },
    })
  })

  it('refuses what a spawn refuses, and a malformed extraTools', async () => {
    const unknown = await api.post(`${base}/surface/preview`, { recipe: 'nope' })
    expect(unknown.status).toBe(422)
    expect(await unknown.json()).toMatchObject({ code: 'INVALID_CONFIG', errors: [{ pointer: '/recipe' }] })
    const bad = await api.post(`${base}/surface/preview`, { extraTools: 'whoami' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ errors: [{ pointer: '/extraTools' }] })
    const outside = await api.post(`${base}/surface/preview`, { extraTools: ['no_such_tool'] })
    expect(outside.status).toBe(400)
    const stray = await api.post(`${base}/surface/preview`, { recipee: 'default' })
    expect(stray.status).toBe(400)
    expect(await stray.json()).toMatchObject({ errors: [{ pointer: '/recipee' }] })
  })

  it('needs tools:read', async () => {
    const invoker = client(createApp(createMemoryDeps()), await tokenFor('acme', 'tools:invoke'))
    expect((await invoker.post(`${base}/surface/preview`, {})).status).toBe(403)
  })
})

describe('provenance in the server-tool views', () => {
  it('adds shadows to GET of one tool and to the listing entries', async () => {
    await putTool('handbook', doc('Tenant handbook.'), '_tenant')
    await putTool('handbook', doc('Project handbook.'))
    await putTool('doc_errors', doc('Project errors.'))
    const one = await (await api.get(`${base}/server-tools/doc_errors`)).json()
    expect(one).toMatchObject({ source: 'project', shadows: ['bundled'] })
    const listing = await (await api.get(`${base}/server-tools`)).json()
    const byName = Object.fromEntries(
      listing.tools.map((t: { name: string; source: string; shadows: string[] }) => [t.name, { source: t.source, shadows: t.shadows }]),
    )
    expect(byName).toMatchObject({
      handbook: { source: 'project', shadows: ['tenant'] },
      doc_errors: { source: 'project', shadows: ['bundled'] },
      doc_discovery: { source: 'bundled', shadows: [] },
      whoami: { source: 'builtin', shadows: [] },
    })
    const tenantView = await (await api.get('/brain/acme/projects/_tenant/server-tools/handbook')).json()
    expect(tenantView).toMatchObject({ source: 'tenant', shadows: [] })
  })
})
