/**
 * The per-process manifest memo (lib/surface/surface.ts): a turn's rendered body, and its UTF-8
 * bytes, are served again only while everything the manifest depends on is unchanged — tool
 * documents in either layer, activations and their expiry, the model catalog, learned limits,
 * measured demand, client tools, the format — and never to another process.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import type { AppDeps } from '../../../functions/http/app-deps'
import type { CallerProcessKey } from '../../../lib/recipes/ports'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import type { ManifestRequest } from '../../../lib/surface/surface'

const T = 'acme'
const P = 'p1'
const MIN = 60_000
let deps: AppDeps
let clock: ManualClock
let usage: MemoryToolUsageStore
let key: CallerProcessKey

const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
const putTool = (name: string, body: string, project = P) => deps.tools.put(T, project, name, body, { actor: 't' })
const putDoc = (path: string, body: string, project = P) => deps.documents.put(T, project, path, body, { actor: 't' })
const bytes = (req?: ManifestRequest, k = key) => deps.surface.manifestBytes(k, req)
const decoded = async (req?: ManifestRequest, k = key) => JSON.parse(new TextDecoder().decode(await bytes(req, k)))
const names = async (req?: ManifestRequest, k = key) => (await decoded(req, k)).tools.map((t: { name: string }) => t.name) as string[]
const describeTool = (name: string) => deps.surface.call(deps.dispatcher, key, 'tool_description', { names: [name] })

beforeEach(async () => {
  clock = new ManualClock()
  usage = new MemoryToolUsageStore()
  deps = createMemoryDeps({
    clock,
    usageStore: usage,
    // a deployment minimum below the default 8, so this catalog of 5 can learn 4
    surface: { learnedLimitMinimum: 3 },
    bundledFiles: [
      { path: 'engines/default.yaml', body: '{}\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
      { path: 'models/tiny/_provider.yaml', body: 'maxTools: 5\n' },
      { path: 'documents/getting-started.md', body: '# Getting started\n' },
    ],
  })
  for (const name of ['alpha_one', 'beta_one', 'gamma_one']) await putTool(name, doc(`The ${name} tool.`, 'primary: true\n'))
  await putTool('delta', doc('The delta tool.'))
  await putDoc('engines/e.yaml', 'allowedTools: [alpha_one, beta_one, gamma_one, delta]\n')
  await putDoc('recipes/r.yaml', 'engine: e\nmodels: [tiny/m]\n')
  const p = (await deps.processes.spawn(T, P, 'alice', { recipe: 'r' })).process
  key = { tenant: T, project: P, id: p.id, subject: 'alice' }
  // limit 5, reserve 1: the floor and two of the three primary families fit; gamma (last by name) is demoted
  expect(await names()).toEqual(['alpha_one', 'beta_one', 'tool_description', 'tool_list'])
})

describe('the memoised manifest', () => {
  it('serves the very same bytes while nothing the manifest depends on changed, and they are the text manifest encoded', async () => {
    const first = await bytes()
    expect(await bytes()).toBe(first)
    expect(new TextDecoder().decode(first)).toBe(await deps.surface.manifest(key))
  })

  it('renders again when a tool document changes, in the project layer or (once it shows through) the tenant layer', async () => {
    const before = await bytes()
    await putTool('alpha_one', doc('Alpha, second edition.', 'primary: true\n'))
    const edited = await bytes()
    expect(edited).not.toBe(before)
    expect((await decoded()).tools.find((t: { name: string }) => t.name === 'alpha_one').description).toBe('Alpha, second edition.')
    await putTool('alpha_one', doc('Alpha as the tenant has it.', 'primary: true\n'), '_tenant')
    expect((await decoded()).tools.find((t: { name: string }) => t.name === 'alpha_one').description).toBe('Alpha, second edition.')
    await deps.tools.delete(T, P, 'alpha_one')
    expect((await decoded()).tools.find((t: { name: string }) => t.name === 'alpha_one').description).toBe('Alpha as the tenant has it.')
  })

  it('renders again when a deferred tool is activated, and again when the activation expires', async () => {
    expect(await names()).not.toContain('delta')
    await describeTool('delta')
    expect(await names()).toContain('delta')
    clock.advance(16 * MIN)
    expect(await names()).not.toContain('delta')
  })

  it('renders again when a limit is learned for a model of the chain', async () => {
    expect((await decoded()).budget.limit).toBe(5)
    const answer = await deps.observedLimits.learn(T, {
      instance: 'tiny',
      model: 'm',
      project: P,
      errorMessage: "Invalid 'tools': array too long. Expected an array with maximum length 4. array_above_max_length",
      requestedToolCount: 5,
    })
    expect(answer.learned).toBe(true)
    expect((await decoded()).budget.limit).toBe(4)
    expect(await names()).toEqual(['alpha_one', 'tool_description', 'tool_list'])
  })

  it('renders again when the model catalog changes the limit', async () => {
    await putDoc('models/tiny/m.yaml', 'maxTools: 6\n', '_tenant')
    expect((await decoded()).budget.limit).toBe(6)
    expect(await names()).toEqual(['alpha_one', 'beta_one', 'gamma_one', 'tool_description', 'tool_list'])
  })

  it('renders again when measured demand moves the ranking, once the demand read is renewed', async () => {
    await usage.increment({
      tenant: T,
      project: P,
      role: 'r',
      tool: 'gamma_one',
      family: 'gamma',
      calls: 7,
      discoveryHits: 0,
      listedHits: 0,
      day: '2026-01-01',
    })
    const before = await bytes()
    clock.advance(2 * MIN) // past the demand memo's minute, well inside every other lifetime
    expect(await bytes()).not.toBe(before)
    expect(await names()).toEqual(['alpha_one', 'gamma_one', 'tool_description', 'tool_list'])
  })

  it('renders again when the process declares client tools', async () => {
    expect(new TextDecoder().decode(await bytes())).not.toContain('open_file')
    await deps.processes.setClientTools(key, {
      clientTools: [{ name: 'open_file', description: 'Open a file on the client.', inputSchema: { type: 'object' }, primary: true }],
    })
    expect(new TextDecoder().decode(await bytes())).toContain('open_file')
  })

  it('keeps one body per format and per deferLoading, each served again unchanged', async () => {
    const requests: ManifestRequest[] = [{}, { format: 'openai' }, { format: 'anthropic' }, { format: 'anthropic', deferLoading: true }]
    const first = await Promise.all(requests.map((r) => bytes(r)))
    expect(new Set(first.map((b) => new TextDecoder().decode(b))).size).toBe(requests.length)
    const again = await Promise.all(requests.map((r) => bytes(r)))
    again.forEach((b, i) => expect(b).toBe(first[i]))
    expect(
      (await decoded({ format: 'anthropic', deferLoading: true })).tools.find((t: { name: string }) => t.name === 'delta'),
    ).toMatchObject({ defer_loading: true })
  })

  it('renders a manifest with extraTools for that request only, leaving the memoised body as it was', async () => {
    const before = await bytes()
    expect(await names({ extraTools: ['gamma_one'] })).toContain('gamma_one')
    expect(await bytes()).toBe(before)
  })

  it('never serves one process the body memoised for another of the same project', async () => {
    await putDoc('recipes/narrow.yaml', 'engine: e\nmodels: [tiny/m]\nallowedToolsRemove: [beta_one]\n')
    const other = {
      tenant: T,
      project: P,
      id: (await deps.processes.spawn(T, P, 'alice', { recipe: 'narrow' })).process.id,
      subject: 'alice',
    }
    const mine = await bytes()
    expect(await names({}, other)).toEqual(['alpha_one', 'gamma_one', 'tool_description', 'tool_list'])
    expect(await bytes()).toBe(mine)
  })

  it('renders the turn a surface computed, even when a newer turn of the same process was memoised since', async () => {
    const early = await deps.surface.open(key)
    const turn = await early.turn()
    await describeTool('delta')
    expect(await names()).toContain('delta') // the memo now holds the newer turn and its body
    expect(JSON.parse(early.manifestOf(turn)).tools.map((t: { name: string }) => t.name)).not.toContain('delta')
  })
})
