/**
 * Code mode (issue 27) end to end on the memory composition: a recipe with `surface: code`, the
 * real QuickJS sandbox, sucrase, the process gate and the egress guard. The business tools are
 * test built-ins with fixed data (the scripts' results are checked against it); nothing is mocked.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import type { AppDeps } from '../../../functions/http/app-deps'
import { success, toolError } from '../../../lib/calls/outcome'
import { parseRecipe } from '../../../lib/recipes/documents'
import type { ProcessRecord } from '../../../lib/recipes/ports'
import type { Tool } from '../../../lib/tools/contracts'
import { echoPackFactory } from '../../support/pack-factory'

const T = 'acme'
const P = 'p1'

const CUSTOMERS: Record<string, { id: string; name: string; tier: string }> = {
  c1: { id: 'c1', name: 'Ada', tier: 'gold' },
  c2: { id: 'c2', name: 'Bob', tier: 'silver' },
}
const ORDERS: Record<string, { id: string; total: number }[]> = {
  c1: [
    { id: 'o1', total: 120 },
    { id: 'o2', total: 80 },
  ],
  c2: [{ id: 'o3', total: 15 }],
}

const builtin = (
  name: string,
  description: string,
  props: Record<string, unknown>,
  run: (p: any) => unknown,
  labels: string[] = [],
): Tool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: props, required: Object.keys(props), additionalProperties: false },
  labels,
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  async invoke(params) {
    const out = run(params)
    return out instanceof Error ? toolError(out.message) : success(out)
  },
})

const shop = [
  builtin('customer_find', 'Find a customer id by name.', { name: { type: 'string' } }, (p) => {
    const c = Object.values(CUSTOMERS).find((x) => x.name === p.name)
    return c ? { id: c.id } : new Error(`no customer named ${p.name}`)
  }),
  builtin('customer_get', 'A customer by id.', { id: { type: 'string' } }, (p) => CUSTOMERS[p.id] ?? new Error(`no customer ${p.id}`)),
  builtin('orders_list', 'Orders of a customer.', { customerId: { type: 'string' } }, (p) => ({ orders: ORDERS[p.customerId] ?? [] })),
  builtin('discount_quote', 'The discount for a tier and an amount.', { tier: { type: 'string' }, amount: { type: 'number' } }, (p) => ({
    discount: p.tier === 'gold' ? p.amount * 0.1 : 0,
  })),
  builtin('orders_purge', 'Delete every order of a customer.', { customerId: { type: 'string' } }, () => ({ purged: true }), [
    'destructive',
  ]),
  builtin('secret_read', 'Not for this role.', {}, () => ({ secret: 42 })),
]

let deps: AppDeps
let p: ProcessRecord
const key = (r: ProcessRecord) => ({ tenant: T, project: P, id: r.id, subject: 'alice' })
const call = (name: string, params: unknown = {}, r = p) => deps.surface.call(deps.dispatcher, key(r), name, params)
const run = (code: string, r = p) => call('execute_code', { code }, r)
const manifest = async (r = p) => JSON.parse(await deps.surface.manifest(key(r)))
const putDoc = (path: string, body: string) => deps.documents.put(T, P, path, body, { actor: 't' })

beforeEach(async () => {
  deps = createMemoryDeps({
    extraFactories: [echoPackFactory],
    extraBuiltins: shop,
    sandbox: { isolation: 'inline' },
    bundledFiles: [
      { path: 'engines/default.yaml', body: '{}\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
    ],
  })
  await deps.tools.put(
    T,
    P,
    'crm',
    'type: echo_pack\ndescription: CRM\npromptHint: Use crm for customer notes.\nparameters:\n  ops: [note, tag]\n  deferredOps: [tag]\n',
    { actor: 't' },
  )
  await deps.tools.put(T, P, 'local', 'type: rest\ndescription: Loopback.\nparameters:\n  url: http://127.0.0.1:9/x\n', { actor: 't' })
  await putDoc(
    'engines/shop.yaml',
    'allowedTools: [customer_find, customer_get, orders_list, discount_quote, orders_purge, local, "@echo", invoke_tool]\n',
  )
  await putDoc('recipes/coder.yaml', 'engine: shop\nsurface: code\nallowedToolsAdd: [crm__note]\n')
  p = (await deps.processes.spawn(T, P, 'alice', { recipe: 'coder' })).process
})

afterAll(async () => {
  await (deps as { sandbox?: { close?: () => Promise<void> } }).sandbox?.close?.()
})

describe('the code surface', () => {
  it('offers the floor and one code tool whose description declares the tools callable now', async () => {
    const m = await manifest()
    expect(m.tools.map((t: { name: string }) => t.name)).toEqual(['execute_code', 'invoke_tool', 'tool_description', 'tool_list'])
    const description: string = m.tools[0].description
    expect(description).toContain('customer_get(params: {\n    id: string\n  }): Promise<unknown>')
    expect(description).toContain('readonly crm: {')
    expect(description).not.toContain('secret_read')
    expect(description).not.toContain('tag(') // deferred: in the discovery block, not declared
    expect(m.discoveryBlock).toContain('crm__tag')
    expect(m.code).toMatchObject({ tool: 'execute_code', declared: 6, overBudget: [] })
    expect(m.code.declarationBytes).toBe(new TextEncoder().encode(description.slice(description.indexOf('```ts\n') + 6, -3)).length)
  })

  it('leaves a native recipe’s manifest as it was', async () => {
    await putDoc('recipes/plain.yaml', 'engine: shop\n')
    const plain = (await deps.processes.spawn(T, P, 'alice', { recipe: 'plain' })).process
    const m = await manifest(plain)
    expect(m.code).toBeUndefined()
    expect(m.tools.map((t: { name: string }) => t.name)).toContain('customer_get')
    expect((await call('execute_code', { code: '1' }, plain)).isError).toBe(true)
  })

  it('sets tools over the declaration budget aside in the demoted block, where describing them brings them back', async () => {
    deps = createMemoryDeps({
      extraBuiltins: shop,
      sandbox: { isolation: 'inline' },
      surface: { codeDeclarationBytes: 400 },
      bundledFiles: [
        { path: 'engines/default.yaml', body: '{}\n' },
        { path: 'recipes/default.yaml', body: 'engine: default\n' },
      ],
    })
    await putDoc('engines/shop.yaml', 'allowedTools: [customer_find, customer_get, orders_list, discount_quote]\n')
    await putDoc('recipes/coder.yaml', 'engine: shop\nsurface: code\n')
    p = (await deps.processes.spawn(T, P, 'alice', { recipe: 'coder' })).process
    const m = await manifest()
    expect(m.code.declarationBytes).toBeLessThanOrEqual(400)
    expect(m.code.overBudget.length).toBeGreaterThan(0)
    for (const n of m.code.overBudget) expect(m.demotedDiscoveryBlock).toContain(`\`${n}\``)
  })
})

describe('scripts against the declaration', () => {
  it('runs a chain of four calls and returns only the result', async () => {
    const out = await run(`
      const { id } = await tools.customer_find({ name: 'Ada' })
      const customer = await tools.customer_get({ id })
      const { orders } = await tools.orders_list({ customerId: id })
      const amount = orders.reduce((s, o) => s + o.total, 0)
      const { discount } = await tools.discount_quote({ tier: customer.tier, amount })
      ;({ name: customer.name, amount, discount })
    `)
    expect(out).toMatchObject({ isError: false, content: { value: { name: 'Ada', amount: 200, discount: 20 } } })
  })

  it('fans out with Promise.all and strips TypeScript types', async () => {
    const out = await run(`
      interface Order { id: string; total: number }
      const ids: string[] = ['c1', 'c2']
      const lists = await Promise.all(ids.map((customerId) => tools.orders_list({ customerId })))
      const totals = lists.map((l: { orders: Order[] }) => l.orders.reduce((s: number, o: Order) => s + o.total, 0))
      totals as number[]
    `)
    expect(out).toMatchObject({ isError: false, content: { value: [200, 15] } })
  })

  it('calls pack tools through their namespace', async () => {
    const out = await run(`(await tools.crm.note({ text: 'hi' })).text`)
    expect(out).toMatchObject({ isError: false, content: { value: 'hi' } })
  })

  it('lets a script catch a failing call and go on', async () => {
    const out = await run(`
      let found
      try { found = await tools.customer_find({ name: 'Zed' }) } catch (e) { found = { error: e.message } }
      found
    `)
    expect(out).toMatchObject({ isError: false, content: { value: { error: expect.stringContaining('no customer named Zed') } } })
  })

  it('names the line of the model’s own code in an uncaught error and in a syntax error', async () => {
    const thrown = await run(`const a = 1\nconst b = 2\nawait tools.customer_get({ id: 'nope' })\n`)
    expect(thrown).toMatchObject({ isError: true, content: { message: expect.stringMatching(/line 3: no customer nope$/) } })
    const syntax = await run(`const a = 1\nconst b: = 2\n`)
    expect(syntax).toMatchObject({ isError: true, content: { error: 'SYNTAX_ERROR', message: expect.stringMatching(/^line 2: /) } })
  })

  it('returns console.log lines beside the result, at most 100 of them', async () => {
    const out = await run(`console.log('start', { n: 1 }); for (let i = 0; i < 150; i++) console.log('x' + i); 7`)
    expect(out.content).toMatchObject({ value: 7 })
    const content = out.content as { value: number; logs: string[]; logsDropped: number }
    expect(content.value).toBe(7)
    expect(content.logs[0]).toBe('start {"n":1}')
    expect(content.logs).toHaveLength(100)
    expect(content.logsDropped).toBe(51)
  })
})

describe('the gates, from code', () => {
  const fromCode = async (name: string, params: unknown) => {
    const out = await run(
      `let r; try { await vance.tools.call(${JSON.stringify(name)}, ${JSON.stringify(params)}); r = 'called' } catch (e) { r = e.message }; r`,
    )
    expect(out.isError).toBe(false)
    return (out.content as { value: string }).value
  }

  it('refuses a tool outside the allow-set with the words of a direct call', async () => {
    const direct = await call('secret_read')
    expect(direct.isError).toBe(true)
    expect(await fromCode('secret_read', {})).toBe((direct.content as { message: string }).message)
    expect((await run('tools.secret_read === undefined')).content).toMatchObject({ value: true })
  })

  it('refuses a deferred tool until tool_description loads it, and declares it the next turn', async () => {
    expect(await fromCode('crm__tag', { text: 'x' })).toContain('is not in your code API yet')
    const described = await call('tool_description', { names: ['crm__tag'] })
    expect((described.content as { tools: { declaration: string }[] }).tools[0].declaration).toContain('tag(params?: {')
    expect((await manifest()).tools[0].description).toContain('tag(params?: {')
    expect(await run(`(await tools.crm.tag({ text: 'v' })).op`)).toMatchObject({ isError: false, content: { value: 'tag' } })
  })

  it('refuses a destructive tool unless the recipe allows it', async () => {
    expect(await fromCode('orders_purge', { customerId: 'c1' })).toContain('labelled destructive and is refused from code')
    expect((await call('orders_purge', { customerId: 'c1' })).isError).toBe(false) // a direct call is the model's own decision
    await putDoc('recipes/bold.yaml', 'engine: shop\nsurface: code\ncodeAllowDestructive: true\n')
    const bold = (await deps.processes.spawn(T, P, 'alice', { recipe: 'bold' })).process
    expect(await run(`(await tools.orders_purge({ customerId: 'c1' })).purged`, bold)).toMatchObject({ content: { value: true } })
  })

  it('refuses a call over the role’s quota with the words of a direct call, and counts calls from code against it', async () => {
    await putDoc('quotas.yaml', 'rules:\n  - match: { tool: customer_get }\n    volume: { requests: 2, per: day }\n')
    expect(await fromCode('customer_get', { id: 'c1' })).toBe('called') // 1 of 2, from code
    expect((await call('customer_get', { id: 'c1' })).isError).toBe(false) // 2 of 2, direct
    const direct = await call('customer_get', { id: 'c1' })
    expect(direct.isError).toBe(true)
    expect(JSON.stringify(direct.content)).toMatch(/quota/i)
    // the wait is counted on the wall clock, so the two answers may be a second apart
    const wait = (m: string) => m.replace(/Retry in \d+ s/, 'Retry in N s')
    expect(wait(await fromCode('customer_get', { id: 'c1' }))).toBe(wait((direct.content as { message: string }).message))
  })

  it('refuses a REST call to a private address with the egress guard’s words', async () => {
    const direct = await call('local')
    expect(direct).toMatchObject({ isError: true, content: { reason: 'denied' } })
    expect(await fromCode('local', {})).toBe((direct.content as { message: string }).message)
  })
})

describe('the code rendering of endpoint profiles', () => {
  const spawn = async (recipe: string, models: string[]) => (await deps.processes.spawn(T, P, 'alice', { recipe, models })).process
  const toolNames = (m: { tools: { name: string }[] }) => m.tools.map((t) => t.name)
  /** The tools array's bytes exactly as a provider receives them (JSON escapes counted). */
  const wire = (m: { tools: { name: string; description: string; inputSchema: unknown }[] }) =>
    m.tools.reduce(
      (sum, t) =>
        sum + new TextEncoder().encode(JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema })).length,
      0,
    )

  beforeEach(async () => {
    await putDoc('models/big/_provider.yaml', 'surface: code\n')
    await putDoc('models/small/_provider.yaml', 'surface: native\n')
    await putDoc('recipes/auto.yaml', 'engine: shop\n')
  })

  it('makes the same recipe code on a model whose profile chooses code and direct on one whose profile says native', async () => {
    const onBig = await manifest(await spawn('auto', ['big/m']))
    expect(toolNames(onBig)).toEqual(['execute_code', 'invoke_tool', 'tool_description', 'tool_list'])
    expect(onBig.code).toMatchObject({ chosenBy: 'endpoint', declared: 5 })
    const big = await spawn('auto', ['big/m'])
    expect(await run('(await tools.customer_get({ id: "c2" })).name', big)).toMatchObject({ isError: false, content: { value: 'Bob' } })

    const coderOnSmall = await spawn('coder', ['small/m'])
    const onSmall = await manifest(coderOnSmall)
    expect(onSmall.code).toBeUndefined()
    expect(toolNames(onSmall)).toContain('customer_get')
    expect(JSON.stringify(await run('1', coderOnSmall))).toContain("Unknown tool 'execute_code'")

    expect((await manifest(await spawn('coder', ['big/m']))).code).toMatchObject({ chosenBy: 'recipe' })
    // a model document wins over its provider's
    await putDoc('models/big/mini.yaml', 'surface: native\n')
    expect((await manifest(await spawn('coder', ['big/mini']))).code).toBeUndefined()
  })

  it('stays direct where the recipe says native or one model of the chain does, and follows a profile changed mid-life', async () => {
    await putDoc('recipes/plain.yaml', 'engine: shop\nsurface: native\n')
    expect((await manifest(await spawn('plain', ['big/m']))).code).toBeUndefined()
    expect((await manifest(await spawn('auto', ['big/m', 'small/m']))).code).toBeUndefined()
    const running = await spawn('auto', ['big/m'])
    expect((await manifest(running)).code).toBeDefined()
    await putDoc('models/big/_provider.yaml', 'surface: native\n')
    expect((await manifest(running)).code).toBeUndefined()
  })

  it('keeps the declaration within the profile’s codeDeclarationBytes and the whole tools array within its maxSchemaBytes', async () => {
    const full = await manifest(await spawn('coder', ['big/m']))
    expect(full.code.overBudget).toEqual([])

    await putDoc('models/short/_provider.yaml', 'codeDeclarationBytes: 400\n')
    const short = await manifest(await spawn('coder', ['short/m']))
    expect(short.code).toMatchObject({ budgetBytes: 400, budgetBy: 'codeDeclarationBytes' })
    expect(short.code.declarationBytes).toBeLessThanOrEqual(400)
    expect(short.code.overBudget.length).toBeGreaterThan(0)

    // the six members take about 350 bytes of the array: cut one byte, one member, about half of them
    for (const cut of [1, 60, 180]) {
      const maxSchemaBytes = wire(full) - cut
      await putDoc('models/narrow/_provider.yaml', `maxSchemaBytes: ${maxSchemaBytes}\n`)
      const narrow = await manifest(await spawn('coder', ['narrow/m']))
      expect(wire(narrow)).toBeLessThanOrEqual(maxSchemaBytes)
      expect(narrow.code).toMatchObject({ budgetBy: 'maxSchemaBytes' })
      expect(narrow.code.overBudget.length).toBeGreaterThan(0)
      for (const n of narrow.code.overBudget) expect(narrow.demotedDiscoveryBlock).toContain(n)
    }

    await putDoc('models/narrow/_provider.yaml', 'maxSchemaBytes: 600\n')
    const tooSmall = await spawn('coder', ['narrow/m'])
    await expect(deps.surface.manifest(key(tooSmall))).rejects.toMatchObject({ code: 'BUDGET_TOO_SMALL' })
  })

  it('keeps every bundled endpoint profile’s limits on the code surface', async () => {
    const instances = readdirSync('defaults/models')
    expect(instances.length).toBeGreaterThanOrEqual(9)
    for (const instance of instances) {
      const profile = readFileSync(`defaults/models/${instance}/_provider.yaml`, 'utf8')
      await putDoc(`models/${instance}/_provider.yaml`, profile)
      const m = await manifest(await spawn('coder', [`${instance}/m`]))
      expect(m.code, instance).toMatchObject({ chosenBy: 'recipe', overBudget: [] })
      expect(m.code.declarationBytes).toBeLessThanOrEqual(m.code.budgetBytes)
      const maxSchemaBytes = /^maxSchemaBytes: (\d+)/m.exec(profile)?.[1]
      if (maxSchemaBytes) expect(wire(m), instance).toBeLessThanOrEqual(Number(maxSchemaBytes))
      const maxName = Number(/^maxToolNameLength: (\d+)/m.exec(profile)?.[1] ?? Infinity)
      for (const n of toolNames(m)) expect(n.length, instance).toBeLessThanOrEqual(maxName)
      const maxTools = /^maxTools: (\d+)/m.exec(profile)?.[1]
      if (maxTools) expect(m.tools.length, instance).toBeLessThanOrEqual(Number(maxTools))
    }
  })
})

describe('the recipe field', () => {
  it('accepts surface: code or native, leaves it unset when absent, and refuses other values and codeAllowDestructive beside native with their line', () => {
    const ok = parseRecipe('engine: e\nsurface: code\ncodeAllowDestructive: true\n', 'r')
    expect(ok).toMatchObject({ ok: true, config: { surface: 'code', codeAllowDestructive: true } })
    const unset = parseRecipe('engine: e\n', 'r')
    expect(unset).toMatchObject({ ok: true, config: { codeAllowDestructive: false } })
    expect(unset.ok && 'surface' in unset.config).toBe(false)
    // a recipe without surface may still run in code mode where a profile chooses it
    expect(parseRecipe('engine: e\ncodeAllowDestructive: true\n', 'r')).toMatchObject({ ok: true })
    const bad = parseRecipe('engine: e\nsurface: cod\n', 'r')
    expect(bad).toMatchObject({ ok: false, issues: [{ pointer: '/surface', line: 2 }] })
    const stray = parseRecipe('engine: e\nsurface: native\ncodeAllowDestructive: true\n', 'r')
    expect(stray).toMatchObject({ ok: false, issues: [{ pointer: '/codeAllowDestructive', line: 3 }] })
  })
})
