import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import type { AppDeps } from '../../../functions/http/app-deps'
import { success } from '../../../lib/calls/outcome'
import { WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import type { ProcessRecord } from '../../../lib/recipes/ports'
import { ManualClock } from '../../../lib/runtime/clock'
import { RESTAMP_SHARE } from '../../../lib/surface/surface'
import type { Tool } from '../../../lib/tools/contracts'
import { projectGate } from '../../../lib/tools/project-gate'
import { echoPackFactory } from '../../support/pack-factory'

const T = 'acme'
const P = 'p1'
const MIN = 60_000
let deps: AppDeps
let clock: ManualClock

const doc = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
const putTool = (name: string, body: string) => deps.tools.put(T, P, name, body, { actor: 't' })
const putDoc = (path: string, body: string, project = P) => deps.documents.put(T, project, path, body, { actor: 't' })
const key = (p: ProcessRecord) => ({ tenant: T, project: P, id: p.id, subject: 'alice' })
const call = (p: ProcessRecord, name: string, params: unknown = {}) => deps.surface.call(deps.dispatcher, key(p), name, params)
const manifest = async (p: ProcessRecord) => JSON.parse(await deps.surface.manifest(key(p)))
const toolNames = async (p: ProcessRecord) => (await manifest(p)).tools.map((t: { name: string }) => t.name) as string[]

/** A built-in that calls a sibling the way a scripted tool's vance.tools.call does. */
const relay: Tool = {
  name: 'relay',
  description: 'Call another tool by name (test built-in).',
  inputSchema: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false },
  labels: [],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  async invoke(params, ctx) {
    const inner = await ctx.tools.call(params.target as string, {})
    return success({ inner, hasSurface: ctx.surface !== undefined, siblings: await ctx.tools.list() })
  },
}

let p: ProcessRecord
beforeEach(async () => {
  clock = new ManualClock()
  deps = createMemoryDeps({
    extraFactories: [echoPackFactory],
    extraBuiltins: [relay],
    clock,
    bundledFiles: [
      { path: 'engines/default.yaml', body: '{}\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
      { path: 'models/openai/_provider.yaml', body: 'maxTools: 128\n' },
      { path: 'documents/getting-started.md', body: '# Getting started\n' },
    ],
  })
  await putTool('weather', doc('Current weather for a city. Uses a public API.', 'primary: true\n'))
  await putTool('stocks', doc('Quotes for a ticker symbol. Delayed by 15 minutes.', 'searchHint: stock quotes\n'))
  await putTool('mail', `type: echo_pack\ndescription: Mail\npromptHint: "  "\nparameters:\n  ops: [read, send]\n`)
  await putTool(
    'crm',
    `type: echo_pack\ndescription: CRM\npromptHint: Use crm__* for customer records.\nparameters:\n  ops: [find, update]\n`,
  )
  await putDoc('engines/no-secret.yaml', 'allowedTools: [weather, stocks, relay, "@echo", invoke_tool]\n')
  await putDoc('recipes/r.yaml', 'engine: no-secret\n')
  await putTool('secret', doc('Not for this process.', 'primary: true\n'))
  p = (await deps.processes.spawn(T, P, 'alice', { recipe: 'r' })).process
})

describe('tool_list', () => {
  it('answers { count, inContext, available, packHints } sorted, with only the process’s tools', async () => {
    const out = await call(p, 'tool_list')
    expect(out).toEqual({
      isError: false,
      content: {
        count: 10,
        inContext: ['invoke_tool', 'relay', 'tool_description', 'tool_list', 'weather'],
        available: ['crm__find', 'crm__update', 'mail__read', 'mail__send', 'stocks'],
        packHints: { crm: 'Use crm__* for customer records.' },
      },
    })
  })

  it('filters by a case-insensitive name prefix and leaves packHints out when none applies', async () => {
    expect((await call(p, 'tool_list', { prefix: 'MAIL__' })).content).toEqual({
      count: 2,
      inContext: [],
      available: ['mail__read', 'mail__send'],
    })
    expect((await call(p, 'tool_list', { prefix: 'zzz' })).content).toEqual({ count: 0, inContext: [], available: [] })
  })

  it('shows at most listedNames names an answer, counts them all, and pages with offset (each name once)', async () => {
    const ops = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `o${String(from + i).padStart(3, '0')}`).join(', ')
    // two packs, so the pages cross a pack boundary: 230 + 190 sub-tools
    await putTool('big', `type: echo_pack\ndescription: Big\nparameters:\n  ops: [${ops(230)}]\n`)
    await putTool('bigger', `type: echo_pack\ndescription: Bigger\nparameters:\n  ops: [${ops(190, 500)}]\n`)
    await putDoc('engines/wide.yaml', 'allowedTools: ["@echo"]\n')
    await putDoc('recipes/wide.yaml', 'engine: wide\n')
    const wide = (await deps.processes.spawn(T, P, 'alice', { recipe: 'wide' })).process
    const max = WORK_BUDGETS.listedNames.limit
    const seen: string[] = []
    const offsets: (number | undefined)[] = []
    let offset: number | undefined = 0
    while (offset !== undefined) {
      const page = (await call(wide, 'tool_list', { prefix: 'BIG', offset })).content as {
        count: number
        inContext: string[]
        available: string[]
        nextOffset?: number
      }
      expect(page.count).toBe(420)
      expect(page.inContext.length + page.available.length).toBeLessThanOrEqual(max)
      seen.push(...page.inContext, ...page.available)
      offset = page.nextOffset
      offsets.push(offset)
    }
    expect(offsets).toEqual([max, 2 * max, undefined])
    expect(new Set(seen).size).toBe(420)
    expect((await call(wide, 'tool_list', { offset: 10_000 })).content).toMatchObject({ inContext: [], available: [] })
  })
})

describe('tool_description', () => {
  it('describes with the exact entry shape and lists unknown and invisible names', async () => {
    const out = await call(p, 'tool_description', { names: ' stocks, weather ,stocks, secret, nope' })
    expect(out.isError).toBe(false)
    expect(out.content).toEqual({
      tools: [
        {
          name: 'stocks',
          description: 'Quotes for a ticker symbol. Delayed by 15 minutes.',
          paramsSchema: { type: 'object', properties: {}, additionalProperties: false },
          primary: false,
          deferred: true,
          activated: true,
          searchHint: 'stock quotes',
          source: 'project',
        },
        {
          name: 'weather',
          description: 'Current weather for a city. Uses a public API.',
          paramsSchema: { type: 'object', properties: {}, additionalProperties: false },
          primary: true,
          deferred: false,
          activated: false,
          searchHint: 'Current weather for a city.',
          source: 'project',
        },
      ],
      unknown: ['secret', 'nope'],
    })
  })

  it('takes a list as well as a comma-separated string', async () => {
    const out = await call(p, 'tool_description', { names: ['weather', ' tool_list '] })
    expect((out.content as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['weather', 'tool_list'])
  })

  it('answers "Unknown tool(s): a, b" when nothing resolves', async () => {
    expect(await call(p, 'tool_description', { names: 'secret,nope' })).toEqual({
      isError: true,
      content: { message: 'Unknown tool(s): secret, nope. Call tool_list to see the tools you can use.', unknown: ['secret', 'nope'] },
    })
  })

  it('describes at most 25 and puts the rest in skipped with a reason', async () => {
    await putTool(
      'bulk',
      `type: echo_pack\ndescription: Bulk\nparameters:\n  ops: [${Array.from({ length: 30 }, (_, i) => `o${String(i).padStart(2, '0')}`).join(', ')}]\n`,
    )
    await putDoc('engines/wide.yaml', 'allowedTools: ["@echo"]\n')
    await putDoc('recipes/wide.yaml', 'engine: wide\n')
    const wide = (await deps.processes.spawn(T, P, 'alice', { recipe: 'wide' })).process
    const names = Array.from({ length: 30 }, (_, i) => `bulk__o${String(i).padStart(2, '0')}`)
    const out = (await call(wide, 'tool_description', { names })).content as { tools: unknown[]; skipped: string[]; skippedReason: string }
    expect(out.tools).toHaveLength(25)
    expect(out.skipped).toEqual(names.slice(25))
    expect(out.skippedReason).toContain('at most 25')
  })

  it('describes tools while their rendering fits describedBytes; the rest are skipped naming it and not activated', async () => {
    const big = WORK_BUDGETS.describedBytes.limit / 4
    for (const name of ['w1', 'w2', 'w3', 'w4', 'w5'])
      await deps.tools.put(
        T,
        P,
        name,
        JSON.stringify({ type: 'doc_lookup', description: name.padEnd(big, '.'), parameters: { path: 'a.md' } }),
        {
          actor: 't',
        },
      )
    const q = (await deps.processes.spawn(T, P, 'alice', {})).process
    const out = (await call(q, 'tool_description', { names: ['w1', 'w2', 'w3', 'w4', 'w5'] })).content as {
      tools: { name: string }[]
      skipped: string[]
      skippedReason: string
    }
    expect(out.tools.map((t) => t.name)).toEqual(['w1', 'w2', 'w3'])
    expect(out.skipped).toEqual(['w4', 'w5'])
    expect(out.skippedReason).toContain('describedBytes')
    expect(JSON.stringify(out).length).toBeLessThanOrEqual(WORK_BUDGETS.describedBytes.limit + 4096)
    const inManifest = await toolNames(q)
    expect(inManifest).toEqual(expect.arrayContaining(['w1', 'w2', 'w3']))
    expect(inManifest).not.toContain('w4')
    expect(inManifest).not.toContain('w5')
  })

  it('answers a tool error naming describedBytes for a tool that alone renders past it (code mode counts it twice)', async () => {
    // a document is at most 1 MiB, so one tool passes the budget only where it is rendered twice
    const big = Math.ceil(WORK_BUDGETS.describedBytes.limit * 0.6)
    await deps.tools.put(
      T,
      P,
      'huge',
      JSON.stringify({ type: 'doc_lookup', description: 'h'.padEnd(big, '.'), parameters: { path: 'a.md' } }),
      {
        actor: 't',
      },
    )
    await putDoc('recipes/coder.yaml', 'engine: default\nsurface: code\n')
    const plain = (await deps.processes.spawn(T, P, 'alice', {})).process
    expect((await call(plain, 'tool_description', { names: 'huge' })).isError).toBe(false)
    const coder = (await deps.processes.spawn(T, P, 'alice', { recipe: 'coder' })).process
    const out = await call(coder, 'tool_description', { names: 'huge,weather' })
    expect(out).toEqual({
      isError: true,
      content: {
        message: "Tool 'huge' is too large to describe: its description and schema render to more than 1,048,576 bytes (describedBytes).",
        skipped: ['huge', 'weather'],
      },
    })
  })

  it('activates a deferred tool: in the manifest from the next turn until activationTtl passes without use', async () => {
    expect(await toolNames(p)).not.toContain('stocks')
    await call(p, 'tool_description', { names: ['stocks'] })
    expect(await toolNames(p)).toContain('stocks')
    clock.advance(10 * MIN)
    expect(await call(p, 'stocks')).toMatchObject({ isError: false }) // use re-stamps
    clock.advance(10 * MIN)
    expect(await toolNames(p)).toContain('stocks')
    clock.advance(6 * MIN)
    expect(await toolNames(p)).not.toContain('stocks')
  })
})

describe('activation stamps', () => {
  it('rewrites the process for a call to an activated tool only once a tenth of the TTL has passed since its stamp', async () => {
    await call(p, 'tool_description', { names: ['stocks'] })
    const stamped = (await deps.processes.get(key(p))).activations.stocks
    const ttl = (await deps.processes.get(key(p))).activationTtlMs
    clock.advance(ttl * RESTAMP_SHARE - 1)
    expect(await call(p, 'stocks')).toMatchObject({ isError: false })
    expect((await deps.processes.get(key(p))).activations.stocks).toBe(stamped)
    clock.advance(1)
    expect(await call(p, 'stocks')).toMatchObject({ isError: false })
    expect((await deps.processes.get(key(p))).activations.stocks).toBe(clock.now())
  })
})

describe('calls through the process surface', () => {
  it('refuses tools outside the allowed list, even from a sibling call', async () => {
    expect(await call(p, 'secret')).toEqual({
      isError: true,
      content: { message: "Unknown tool 'secret'. Call tool_list to see the tools you can use." },
    })
    const out = (await call(p, 'relay', { target: 'secret' })).content as {
      inner: { isError: boolean }
      hasSurface: boolean
      siblings: string[]
    }
    expect(out.inner.isError).toBe(true)
    expect(out.hasSurface).toBe(true)
    expect(out.siblings).not.toContain('secret')
    expect(out.siblings).toContain('stocks')
  })

  it('auto-activates a deferred tool called directly, through invoke_tool or from a script', async () => {
    expect(await call(p, 'invoke_tool', { name: 'stocks', params: {} })).toMatchObject({ isError: false })
    expect(await toolNames(p)).toContain('stocks')
    await call(p, 'relay', { target: 'mail__read' })
    expect(await toolNames(p)).toContain('mail__read')
  })

  it('gives invoke_tool the same gates as a direct call and refuses to invoke itself', async () => {
    expect((await call(p, 'invoke_tool', { name: 'secret' })).isError).toBe(true)
    expect(await call(p, 'invoke_tool', { name: 'invoke_tool', params: { name: 'weather' } })).toEqual({
      isError: true,
      content: { message: 'invoke_tool cannot invoke itself; pass the name of the tool you want to call.' },
    })
    expect(await call(p, 'invoke_tool', { name: 'weather', params: { extra: 1 } })).toMatchObject({
      isError: true,
      content: { message: expect.stringContaining("Invalid arguments for 'weather'") },
    })
  })

  it('activates a tool demoted by the budget when it is called, so it climbs back', async () => {
    await putDoc('models/tiny/_provider.yaml', 'maxTools: 5\n', '_tenant')
    const tight = (await deps.processes.spawn(T, P, 'alice', { recipe: 'r', models: ['tiny/m'] })).process
    const before = await manifest(tight)
    expect(before.budget).toEqual({ limit: 5, reserved: 1, effective: 4, demoted: 1, demotedFamilies: ['weather'] })
    expect(before.tools.map((t: { name: string }) => t.name)).toEqual(['invoke_tool', 'relay', 'tool_description', 'tool_list'])
    expect(await call(tight, 'weather')).toMatchObject({ isError: false }) // demoted tools stay callable
    const after = await manifest(tight)
    expect(after.tools.map((t: { name: string }) => t.name)).toEqual(['invoke_tool', 'tool_description', 'tool_list', 'weather'])
    expect(after.budget.demotedFamilies).toEqual(['relay'])
  })

  it('tells a caller outside any process that the discovery tools need one', async () => {
    const out = await deps.dispatcher.call(projectGate(deps.tools, T, P), { tenant: T, project: P, subject: 'alice' }, 'tool_list', {})
    expect(out).toMatchObject({ isError: true, content: { message: expect.stringContaining('works inside a process') } })
  })
})
