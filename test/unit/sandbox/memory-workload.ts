/**
 * The memory test's workload, run in a child process (see memory.test.ts) so that the RSS it
 * reports is this workload's alone, with V8's young generation pinned and a GC before each sample.
 * Prints one JSON line: { sync: { before, after }, async: { before, after } }.
 */

import { type SiblingTools, success } from '../../../lib/calls/outcome'
import { QuickJsSandbox } from '../../../lib/sandbox'

const WARM_UP = Number(process.env.WARM_UP ?? 2_500)
const RUNS = Number(process.env.RUNS ?? 10_000)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')

export interface Sample {
  rss: number
  heapUsed: number
  wasm: number
  quickjs: number
}

async function sample(sandbox: QuickJsSandbox, kind: 'sync' | 'async'): Promise<Sample> {
  gc!()
  const engines = (await sandbox.stats()).engines.filter((e) => e.kind === kind)
  const mem = process.memoryUsage()
  return {
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    wasm: engines.reduce((n, e) => n + e.wasmBytes, 0),
    quickjs: engines.reduce((n, e) => n + e.quickjsBytes, 0),
  }
}

async function main() {
  const sandbox = new QuickJsSandbox({ asyncEngines: 1 })
  let calls = 0
  const tools: SiblingTools = {
    call: async (_name, p) => (calls++, success({ n: (p as { n: number }).n, label: `item ${(p as { n: number }).n}` })),
    delegate: async () => success(null),
    list: async () => ['get'],
    has: async (name) => name === 'get',
  }
  const host = { tools, context: { tenant: 'acme', project: 'p1' }, depth: 0 }
  const workloads = {
    sync: (i: number) =>
      sandbox.run({ source: 'const list = [a, b, a * b]; ({ sum: a + b, list, text: "n=" + a })', inputs: { a: i, b: 2 } }),
    async: (i: number) => sandbox.run({ source: 'const got = vance.tools.call("get", { n }); got.n + 1', inputs: { n: i }, host }),
  }
  const report: Record<string, { before: Sample; after: Sample }> = {}
  let failures = 0
  for (const kind of ['sync', 'async'] as const) {
    for (let i = 0; i < WARM_UP; i++) if ('error' in (await workloads[kind](i))) failures++
    await sample(sandbox, kind) // the first stats() call allocates the engine's system context
    const before = await sample(sandbox, kind)
    for (let i = 0; i < RUNS; i++) if ('error' in (await workloads[kind](i))) failures++
    report[kind] = { before, after: await sample(sandbox, kind) }
  }
  process.stdout.write(`${JSON.stringify({ ...report, failures, calls, runs: 2 * (WARM_UP + RUNS) })}\n`)
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
