/**
 * bench/sandbox — what a scripted-tool invocation costs over bare QuickJS, measured side by side
 * in one run (in process, no HTTP):
 *
 *   scripted `a + b`       ScriptedToolFactory tool.invoke({ a, b }) — argument validation, a fresh
 *                          context on the long-lived sync-build runtime, limits, inputs, result check
 *      vs  bare floor      sync build: runtime.newContext() + a, b set + evalCode("a + b") + dump   goal ≤ 1.5×
 *   scripted + 1 sibling   tool.invoke of `vance.tools.call("get", { a }).a + b` (async engine, vance bound)
 *      vs  bare floor      asyncify build: newContext() + one asyncified host function + a, b set +
 *                          evalCodeAsync of the same call + dump                                  goal ≤ 2.5×
 *
 * Both isolations are measured against the same floors: `inline` (what Lambda runs; the goals
 * apply to it) and `worker` (what `npm start` runs: the watchdog's thread hop is the difference).
 * Samples of each operation and its floor alternate, so drift and GC hit both alike; the statistic
 * is the median. Run with `npm run bench` or `npx tsx bench/sandbox.ts`. Invocations/s through
 * the HTTP invoke route: bench/scripted-http.ts.
 */
import { cpus, loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import {
  newQuickJSAsyncWASMModuleFromVariant,
  newQuickJSWASMModuleFromVariant,
  type QuickJSAsyncRuntime,
  type QuickJSRuntime,
  RELEASE_ASYNC,
  RELEASE_SYNC,
} from 'quickjs-emscripten'
import type { SiblingTools } from '../lib/calls/outcome'
import { success } from '../lib/calls/outcome'
import type { ServerToolConfig } from '../lib/config/server-tool'
import { systemClock } from '../lib/runtime/clock'
import { silentLogger } from '../lib/runtime/logger'
import { createSandbox } from '../lib/sandbox'
import type { InvocationContext, ToolSpec } from '../lib/tools/contracts'
import { type ScriptedParameters, ScriptedToolFactory, type ScriptSandbox } from '../lib/tools/types/scripted'

export interface SandboxBenchOptions {
  /** Measured samples per operation (default 3000), after warmUp (default 1000). */
  samples?: number
  warmUp?: number
  log?: (line: string) => void
}

export interface Stats {
  name: string
  n: number
  p50: number
  p90: number
  p99: number
}

export interface SandboxBenchResult {
  stats: Stats[]
  ratios: { name: string; value: number; goal: number }[]
  summary: string[]
}

const SIBLING_SOURCE = 'vance.tools.call("get", { a }).a + b'

function scripted(name: string, source: string): ServerToolConfig<ScriptedParameters> {
  return {
    name,
    type: 'scripted',
    description: 'bench',
    enabled: true,
    primary: false,
    labels: [],
    disabledSubTools: [],
    defaultDeferred: false,
    parameters: {
      engine: 'javascript',
      timeoutMs: 1000,
      inputs: [
        { name: 'a', type: 'number' },
        { name: 'b', type: 'number' },
      ],
      source,
    },
  }
}

/** The tools and invocation context this bench drives; reusable by an HTTP-route bench. */
export async function sandboxBenchTools(sandbox: ScriptSandbox = createSandbox('inline')): Promise<{
  sandbox: ScriptSandbox
  add: ToolSpec
  addWithSibling: ToolSpec
  ctx: InvocationContext
}> {
  const factory = new ScriptedToolFactory({ sandbox })
  const env = {
    tenant: 'bench',
    project: 'p',
    documents: { read: async () => undefined },
    log: silentLogger,
    clock: systemClock,
    problem() {},
  }
  const [add] = await factory.create(scripted('add_numbers', 'a + b'), env)
  const [addWithSibling] = await factory.create(scripted('add_via_sibling', SIBLING_SOURCE), env)
  const tools: SiblingTools = {
    call: async (_name, params) => success(params),
    delegate: async (_name, params) => success(params),
    list: async () => ['get'],
    has: async (name) => name === 'get',
  }
  const ctx: InvocationContext = { tenant: 'bench', project: 'p', subject: 'bench', tools, depth: 0 }
  return { sandbox, add, addWithSibling, ctx }
}

/** Bare QuickJS, sync build: the least any run of `a + b` with bound inputs can cost. */
function syncFloor(runtime: QuickJSRuntime) {
  return () => {
    const ctx = runtime.newContext()
    const a = ctx.newNumber(5)
    const b = ctx.newNumber(7)
    ctx.setProp(ctx.global, 'a', a)
    ctx.setProp(ctx.global, 'b', b)
    a.dispose()
    b.dispose()
    const r = ctx.evalCode('a + b')
    const value = ctx.dump(ctx.unwrapResult(r))
    ctx.dispose()
    if (value !== 12) throw new Error(`floor computed ${value}`)
  }
}

/** Bare QuickJS, asyncify build: the least a run making one host call can cost. */
function asyncFloor(runtime: QuickJSAsyncRuntime) {
  return async () => {
    const ctx = runtime.newContext()
    const call = ctx.newAsyncifiedFunction('call', async (_name, params) => {
      const a = ctx.getNumber(ctx.getProp(params, 'a'))
      const reply = await Promise.resolve({ a })
      const out = ctx.newObject()
      const n = ctx.newNumber(reply.a)
      ctx.setProp(out, 'a', n)
      n.dispose()
      return out
    })
    const a = ctx.newNumber(5)
    const b = ctx.newNumber(7)
    ctx.setProp(ctx.global, 'call', call)
    ctx.setProp(ctx.global, 'a', a)
    ctx.setProp(ctx.global, 'b', b)
    for (const h of [call, a, b]) h.dispose()
    const r = await ctx.evalCodeAsync('call("get", { a }).a + b')
    const value = ctx.dump(ctx.unwrapResult(r))
    ctx.dispose()
    if (value !== 12) throw new Error(`floor computed ${value}`)
  }
}

function stats(name: string, samples: number[]): Stats {
  const sorted = [...samples].sort((x, y) => x - y)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
  return { name, n: sorted.length, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
}

async function time(fn: () => unknown): Promise<number> {
  const t = performance.now()
  await fn()
  return performance.now() - t
}

/** Alternates the operations (A B B A …) and returns the samples of each in µs. */
async function interleaved(ops: (() => unknown)[], warmUp: number, samples: number): Promise<number[][]> {
  for (let i = 0; i < warmUp; i++) for (const op of ops) await op()
  const out = ops.map(() => [] as number[])
  for (let i = 0; i < samples; i++) {
    const order = i % 2 === 0 ? ops.map((_, k) => k) : ops.map((_, k) => ops.length - 1 - k)
    for (const k of order) out[k].push((await time(ops[k])) * 1000)
  }
  return out
}

export async function benchSandbox(options: SandboxBenchOptions = {}): Promise<SandboxBenchResult> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const samples = options.samples ?? 3000
  const warmUp = options.warmUp ?? 1000

  const syncRuntime = (await newQuickJSWASMModuleFromVariant(RELEASE_SYNC)).newRuntime()
  const asyncRuntime = (await newQuickJSAsyncWASMModuleFromVariant(RELEASE_ASYNC)).newRuntime()
  const table: Stats[] = []
  const ratios: { name: string; value: number; goal: number }[] = []

  // Both isolations against the same floors: `inline` is what Lambda runs, `worker` what npm start runs.
  for (const isolation of ['inline', 'worker'] as const) {
    const { add, addWithSibling, ctx } = await sandboxBenchTools(createSandbox(isolation))
    const invoke = (tool: ToolSpec) => async () => {
      const outcome = await tool.invoke({ a: 5, b: 7 }, ctx)
      if (outcome.isError || (outcome.content as { value: unknown }).value !== 12)
        throw new Error(`tool answered ${JSON.stringify(outcome)}`)
    }
    const [scriptedAdd, floorAdd] = await interleaved([invoke(add), syncFloor(syncRuntime)], warmUp, samples)
    const [scriptedSibling, floorSibling] = await interleaved([invoke(addWithSibling), asyncFloor(asyncRuntime)], warmUp, samples)
    const rows = [
      stats(`${isolation}: scripted a + b (tool.invoke)`, scriptedAdd),
      stats(`${isolation}: bare QuickJS floor, sync build`, floorAdd),
      stats(`${isolation}: scripted a + b + 1 sibling call`, scriptedSibling),
      stats(`${isolation}: bare floor, asyncify + 1 host call`, floorSibling),
    ]
    table.push(...rows)
    ratios.push(
      { name: `${isolation}: scripted a + b vs bare floor (p50)`, value: rows[0].p50 / rows[1].p50, goal: 1.5 },
      { name: `${isolation}: scripted + 1 sibling vs bare asyncify floor (p50)`, value: rows[2].p50 / rows[3].p50, goal: 2.5 },
    )
  }

  log(`bench/sandbox — ${samples} samples per operation after ${warmUp} warm-up, alternating with the floor`)
  log(
    `machine: ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
  log('')
  log(`${'operation'.padEnd(46)} ${'p50 µs'.padStart(9)} ${'p90 µs'.padStart(9)} ${'p99 µs'.padStart(9)}`)
  for (const s of table)
    log(`${s.name.padEnd(46)} ${s.p50.toFixed(1).padStart(9)} ${s.p90.toFixed(1).padStart(9)} ${s.p99.toFixed(1).padStart(9)}`)
  log('')
  const summary = ratios.map((r) =>
    r.name.startsWith('inline')
      ? `sandbox: ${r.name} = ${r.value.toFixed(2)}× (goal ≤ ${r.goal}×)${r.value <= r.goal ? '' : ' — ABOVE GOAL'}`
      : `sandbox: ${r.name} = ${r.value.toFixed(2)}× (the watchdog's thread hop; no goal)`,
  )
  for (const line of summary) log(line)
  return { stats: table, ratios, summary }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchSandbox().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      process.exit(1)
    },
  )
}
