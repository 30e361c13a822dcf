/**
 * The sandbox as the composition roots hand it to the tool types: created on the first script.
 * Until then neither QuickJS's engines and workers nor the sandbox's own code (a chunk of its own
 * in the Lambda bundle) are loaded — most requests run no script (docs/operations/cold-start-and-latency.md).
 */
import type { SandboxRequest, SandboxResult } from './execute'
import type { SandboxStats } from './in-process'
import type { FairnessOptions } from './index'
import type { SandboxIsolation } from './isolation'
import type { SandboxOptions } from './quickjs'
import type { SchedulerStats } from './scheduler'

export interface LazySandbox {
  run(req: SandboxRequest): Promise<SandboxResult>
  /** Engines, workers and the scheduler's counts (operational metrics); all empty before the first script. */
  stats(): Promise<SandboxStats & { scheduler: SchedulerStats }>
  /** Scripts waiting for a place right now (0 before the first script). */
  waiting(): number
}

const NOTHING_YET: SandboxStats & { scheduler: SchedulerStats } = {
  engines: [],
  enginesReplaced: 0,
  enginesRetired: 0,
  scheduler: { running: 0, nested: 0, queued: 0 },
}

/**
 * The sandbox's code (lib/sandbox/index.ts), loaded by the caller: the composition root owns the
 * dynamic import, and so where the bundle's chunks are cut (functions/lazy/).
 */
export type SandboxModule = () => Promise<{
  createSandbox(
    isolation: SandboxIsolation,
    options: SandboxOptions & FairnessOptions,
  ): Omit<LazySandbox, 'waiting'> & { readonly waiting: number }
}>

export function lazySandbox(load: SandboxModule, isolation: SandboxIsolation, options: SandboxOptions & FairnessOptions = {}): LazySandbox {
  type Built = ReturnType<Awaited<ReturnType<SandboxModule>>['createSandbox']>
  let sandbox: Promise<Built> | undefined
  let built: Built | undefined
  const get = () => (sandbox ??= load().then((m) => (built = m.createSandbox(isolation, options))))
  return {
    run: async (req) => (await get()).run(req),
    stats: async () => (sandbox ? (await sandbox).stats() : NOTHING_YET),
    waiting: () => built?.waiting ?? 0,
  }
}
