/**
 * Code mode (issue 27), in one run: (1) the tokens the model receives per turn for surfaces of 20,
 * 120 and 600 tools — direct manifest vs discovery block vs code declaration — counted with
 * gpt-tokenizer (o200k_base) over the manifest body the route serves; (2) for the task suite,
 * model round trips and the bytes of intermediate results that pass through the model, direct vs
 * code, each task really run through the process surface (direct: one call per step; code: one
 * execute_code script). Counts, not timings.
 */
import { countTokens } from 'gpt-tokenizer'
import { createMemoryDeps } from '../functions/deps'
import type { AppDeps } from '../functions/http/app-deps'
import { success } from '../lib/calls/outcome'
import type { JsonSchema } from '../lib/config/json-schema'
import type { ProcessRecord } from '../lib/recipes/ports'
import type { Tool } from '../lib/tools/contracts'

const T = 'acme'
const P = 'p1'

const SCHEMAS: JsonSchema[] = [
  {
    type: 'object',
    required: ['query'],
    properties: {
      query: { type: 'string', description: 'What to search for.' },
      limit: { type: 'integer', minimum: 1, maximum: 100, description: 'At most this many results.' },
    },
  },
  {
    type: 'object',
    required: ['id'],
    properties: {
      id: { type: 'string', description: 'The record id.' },
      fields: { type: 'array', items: { type: 'string' }, description: 'Fields to return.' },
    },
  },
  {
    type: 'object',
    required: ['id', 'patch'],
    properties: {
      id: { type: 'string' },
      patch: { type: 'object', additionalProperties: { type: 'string' }, description: 'Fields to change.' },
      notify: { type: 'boolean' },
    },
  },
  {
    type: 'object',
    properties: {
      status: { enum: ['open', 'closed', 'pending'] },
      since: { type: 'string', format: 'date-time', description: 'Only items changed since.' },
      owner: { type: ['string', 'null'] },
    },
  },
]

function surfaceTools(n: number): Tool[] {
  const tools: Tool[] = []
  for (let i = 0; i < n; i++) {
    const pack = `svc${i % Math.max(1, Math.floor(n / 10))}`
    tools.push({
      name: `${pack}__op${i}`,
      description: `Operation ${i} of ${pack}: reads or changes ${pack} records. Returns the matching records as JSON.`,
      inputSchema: SCHEMAS[i % SCHEMAS.length],
      labels: ['bench'],
      primary: true,
      deferred: false,
      source: 'builtin',
      typeId: 'builtin',
      searchHint: `${pack} operation ${i}`,
      invoke: async () => success(null),
    })
  }
  return tools
}

const bundledFiles = [
  { path: 'engines/default.yaml', body: '{}\n' },
  { path: 'recipes/default.yaml', body: 'engine: default\n' },
]

async function spawn(deps: AppDeps, recipe: string, body: string): Promise<ProcessRecord> {
  await deps.documents.put(T, P, `recipes/${recipe}.yaml`, body, { actor: 'bench' })
  return (await deps.processes.spawn(T, P, 'bench', { recipe })).process
}

/** What the model reads of a manifest body: tools array, discovery blocks, prompt hints. */
function modelText(body: string): string {
  const m = JSON.parse(body) as { tools: unknown[]; discoveryBlock: string; demotedDiscoveryBlock: string; promptHints: string[] }
  return JSON.stringify(m.tools) + m.discoveryBlock + m.demotedDiscoveryBlock + m.promptHints.join('\n')
}

async function tokensPerTurn(n: number) {
  const deps = createMemoryDeps({ extraBuiltins: surfaceTools(n), bundledFiles, sandbox: { isolation: 'inline' } })
  await deps.documents.put(T, P, 'engines/bench.yaml', 'allowedTools: ["@bench"]\n', { actor: 'bench' })
  const key = (r: ProcessRecord) => ({ tenant: T, project: P, id: r.id, subject: 'bench' })
  const direct = await spawn(deps, 'direct', 'engine: bench\n')
  const discovery = await spawn(deps, 'discovery', 'engine: bench\nallowedToolsDefer: ["@bench"]\n')
  const code = await spawn(deps, 'code', 'engine: bench\nsurface: code\n')
  const count = async (r: ProcessRecord) => countTokens(modelText(await deps.surface.manifest(key(r))))
  const codeFacts = JSON.parse(await deps.surface.manifest(key(code))).code as { declared: number; declarationBytes: number }
  return {
    n,
    direct: await count(direct),
    discovery: await count(discovery),
    code: await count(code),
    codeDeclared: codeFacts.declared,
    codeBytes: codeFacts.declarationBytes,
  }
}

// ────────── the task suite ──────────

const CUSTOMERS = Array.from({ length: 8 }, (_, i) => ({
  id: `c${i}`,
  name: `Customer ${i}`,
  tier: i % 3 === 0 ? 'gold' : 'silver',
  email: `c${i}@example.com`,
  address: `${i} Main Street, Springfield`,
}))
const ORDERS = (id: string) =>
  Array.from({ length: 40 }, (_, j) => ({
    id: `${id}-o${j}`,
    total: ((j * 37) % 200) + 5,
    status: j % 5 === 0 ? 'open' : 'shipped',
    sku: `SKU-${(j * 13) % 97}`,
    note: 'standard delivery',
  }))

const shopTool = (name: string, props: Record<string, JsonSchema>, run: (p: Record<string, any>) => unknown): Tool => ({
  name,
  description: `${name} (bench shop tool).`,
  inputSchema: { type: 'object', properties: props, required: Object.keys(props), additionalProperties: false },
  labels: ['shop'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  async invoke(params) {
    return success(run(params))
  },
})

const SHOP = [
  shopTool('customer_find', { name: { type: 'string' } }, (p) => ({ id: CUSTOMERS.find((c) => c.name === p.name)?.id ?? null })),
  shopTool('customer_get', { id: { type: 'string' } }, (p) => CUSTOMERS.find((c) => c.id === p.id) ?? null),
  shopTool('orders_list', { customerId: { type: 'string' } }, (p) => ({ orders: ORDERS(p.customerId) })),
  shopTool('discount_quote', { tier: { type: 'string' }, amount: { type: 'number' } }, (p) => ({
    discount: p.tier === 'gold' ? Math.round(p.amount * 0.1) : 0,
  })),
  shopTool('ticket_open', { customerId: { type: 'string' }, text: { type: 'string' } }, (p) => ({
    ticket: `t-${p.customerId}`,
    text: p.text,
  })),
]

/** A task: the one script of code mode; its direct steps are in DIRECT. */
interface Task {
  name: string
  script: string
}

const TASKS: Task[] = [
  {
    name: 'chain of 4 (find → get → orders → discount)',
    script: `const { id } = await tools.customer_find({ name: 'Customer 3' })
const c = await tools.customer_get({ id })
const { orders } = await tools.orders_list({ customerId: id })
const amount = orders.filter((o) => o.status === 'open').reduce((s, o) => s + o.total, 0)
const { discount } = await tools.discount_quote({ tier: c.tier, amount })
;({ customer: c.name, openAmount: amount, discount })`,
  },
  {
    name: 'fan-out over 8 customers (Promise.all)',
    script: `const ids = ['c0','c1','c2','c3','c4','c5','c6','c7']
const lists = await Promise.all(ids.map((customerId) => tools.orders_list({ customerId })))
lists.map((l, i) => ({ id: ids[i], open: l.orders.filter((o) => o.status === 'open').length }))`,
  },
  {
    name: 'error handling (a missing customer, then a ticket)',
    script: `let id
try { id = (await tools.customer_find({ name: 'Nobody' })).id ?? 'c0' } catch (e) { id = 'c0' }
const t = await tools.ticket_open({ customerId: id, text: 'follow up' })
;({ ticket: t.ticket })`,
  },
]

/** Direct: the calls a model would make, step by step (independent calls of one step in one round trip). */
const DIRECT: Record<string, { name: string; params: (prev: any[]) => Record<string, unknown> }[][]> = {
  [TASKS[0].name]: [
    [{ name: 'customer_find', params: () => ({ name: 'Customer 3' }) }],
    [{ name: 'customer_get', params: (prev) => ({ id: prev[0].id }) }],
    [{ name: 'orders_list', params: (prev) => ({ customerId: prev[0].id }) }],
    [
      {
        name: 'discount_quote',
        params: (prev) => ({
          tier: prev[1].tier,
          amount: prev[2].orders.filter((o: any) => o.status === 'open').reduce((s: number, o: any) => s + o.total, 0),
        }),
      },
    ],
  ],
  [TASKS[1].name]: [CUSTOMERS.map((c) => ({ name: 'orders_list', params: () => ({ customerId: c.id }) }))],
  [TASKS[2].name]: [
    [{ name: 'customer_find', params: () => ({ name: 'Nobody' }) }],
    [{ name: 'ticket_open', params: (prev) => ({ customerId: prev[0].id ?? 'c0', text: 'follow up' }) }],
  ],
}

async function taskSuite() {
  const deps = createMemoryDeps({ extraBuiltins: SHOP, bundledFiles, sandbox: { isolation: 'inline' } })
  await deps.documents.put(T, P, 'engines/shop.yaml', 'allowedTools: ["@shop"]\n', { actor: 'bench' })
  const direct = await spawn(deps, 'direct', 'engine: shop\n')
  const code = await spawn(deps, 'code', 'engine: shop\nsurface: code\n')
  const key = (r: ProcessRecord) => ({ tenant: T, project: P, id: r.id, subject: 'bench' })
  const rows = []
  for (const task of TASKS) {
    let bytes = 0
    let trips = 0
    const prev: any[] = []
    for (const step of DIRECT[task.name]) {
      trips++
      const outs = await Promise.all(step.map((c) => deps.surface.call(deps.dispatcher, key(direct), c.name, c.params(prev))))
      for (const o of outs) {
        if (o.isError) throw new Error(`${task.name}: ${JSON.stringify(o.content)}`)
        bytes += JSON.stringify(o.content).length
        prev.push(o.content)
      }
    }
    trips++ // the final answer
    const out = await deps.surface.call(deps.dispatcher, key(code), 'execute_code', { code: task.script })
    if (out.isError) throw new Error(`${task.name} (code): ${JSON.stringify(out.content)}`)
    const codeBytes = JSON.stringify(out.content).length
    rows.push({ task: task.name, directTrips: trips, codeTrips: 2, directBytes: bytes, codeBytes, scriptTokens: countTokens(task.script) })
  }
  return rows
}

export async function benchCodeMode() {
  const summary: string[] = []
  const lines = [
    'tokens per turn (gpt-tokenizer o200k_base): tools | direct manifest | discovery block | code declaration (declared, bytes)',
  ]
  for (const n of [20, 120, 600]) {
    const r = await tokensPerTurn(n)
    lines.push(`  ${n} | ${r.direct} | ${r.discovery} | ${r.code} (${r.codeDeclared} declared, ${r.codeBytes} B)`)
    summary.push(
      `codemode tokens/turn ${n} tools: direct ${r.direct}, discovery ${r.discovery}, code ${r.code} (${r.codeDeclared} declared)`,
    )
  }
  lines.push(
    'task suite: task | round trips direct → code | intermediate bytes through the model direct → code | tokens of the script the model writes',
  )
  for (const r of await taskSuite()) {
    lines.push(`  ${r.task} | ${r.directTrips} → ${r.codeTrips} | ${r.directBytes} → ${r.codeBytes} | ${r.scriptTokens}`)
    summary.push(`codemode ${r.task}: trips ${r.directTrips}→${r.codeTrips}, bytes ${r.directBytes}→${r.codeBytes}`)
  }
  process.stdout.write(`${lines.join('\n')}\n`)
  return { summary }
}
