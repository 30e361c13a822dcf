/**
 * The QuickJS engines of one thread, driven run by run. This is what runs inside each sandbox
 * worker (see quickjs.ts, which owns the workers and the watchdog); nothing here knows about threads.
 *
 * Which build runs a script: one that never mentions `vance` runs on the sync build (cheaper);
 * should it reach `vance` anyway (e.g. `globalThis["va" + "nce"]`), that speculative run is
 * abandoned — it can have had no effect outside itself — and redone on an async engine within the
 * same deadline. Everything else runs on an async engine, where `vance.tools.call` suspends.
 *
 * After an `await` (in a promise job) WebAssembly can't suspend — this build instruments only
 * QTS_Eval for asyncify — so there a host call returns a Promise instead; `await` it. Used without
 * `await`, that Promise throws a TypeError naming the fix rather than reading as `undefined`.
 *
 * Budgets are enforced by QuickJS's interrupt handler, which it polls once per ~10,000 backward
 * jumps or calls. Work between polls that is not bytecode — chiefly building a backtrace of the
 * whole stack for every caught stack overflow (`function f() { try { f() } catch { f() } }`) — is
 * not seen, so such a script can hold this thread for seconds past its deadline. That is why this
 * thread is a worker: the main thread terminates it at deadline + grace.
 */
import { onAbort } from '../runtime/abort-listener'
import {
  AsyncEnginePool,
  type Engine,
  type EngineStats,
  engineStats,
  NoEngineFreeError,
  outgrown,
  type SyncEngine,
  SyncEngineHolder,
} from './engines'
import {
  CANCELLED,
  EngineFailure,
  RETRY_ASYNC,
  type RunOutcome,
  RunState,
  runOnEngine,
  type SandboxRequest,
  type SandboxResult,
} from './execute'
import { DEFAULT_TIMEOUT_MS, resolveLimits, type SandboxLimits, ticksFor } from './limits'

export interface InProcessOptions extends Partial<SandboxLimits> {
  /** Async engines serving top-level runs at once (default 4); further runs queue. */
  asyncEngines?: number
  /** Monotonic milliseconds for deadlines and durationMs (default performance.now). */
  now?: () => number
  /** false: every run on an async engine (for measurements). Default true. */
  useSyncBuild?: boolean
  /** Told when a run's deadline clock starts (its engine is loaded and acquired): the watchdog arms then. */
  onStarted?: (req: SandboxRequest) => void
}

export interface SandboxStats {
  engines: EngineStats[]
  /** Engines dropped because WebAssembly failed inside them (with worker isolation: plus workers terminated by the watchdog or lost). */
  enginesReplaced: number
  /** Engines dropped after a run that grew their memory past the margin or left pending jobs behind. */
  enginesRetired: number
  /** Worker threads alive (worker isolation only). */
  workers?: number
}

const MENTIONS_VANCE = /\bvance\b/

/** Runs `work` with the request's signal cancelling `state` (interrupting the script, ending its waits). */
async function metered<T>(req: SandboxRequest, state: RunState, work: (state: RunState) => Promise<T>): Promise<T> {
  const stop = req.signal && onAbort(req.signal, () => state.cancel())
  try {
    return await work(state)
  } finally {
    stop?.()
  }
}

export class InProcessSandbox {
  readonly limits: SandboxLimits
  private readonly now: () => number
  private readonly sync: SyncEngineHolder
  private readonly pool: AsyncEnginePool
  private readonly useSyncBuild: boolean
  private replaced = 0
  private retired = 0
  private syncTurn: Promise<unknown> = Promise.resolve()
  private readonly onStarted: (req: SandboxRequest) => void

  constructor(options: InProcessOptions = {}) {
    const { asyncEngines = 4, now = () => performance.now(), useSyncBuild = true, onStarted = () => {}, ...limits } = options
    this.onStarted = onStarted
    this.limits = resolveLimits(limits)
    if (!Number.isInteger(asyncEngines) || asyncEngines < 1)
      throw new RangeError(`asyncEngines must be a positive integer, got ${asyncEngines}`)
    this.now = now
    this.useSyncBuild = useSyncBuild
    this.sync = new SyncEngineHolder(this.limits)
    // A chain of nested scripts holds one engine per level; top-level runs are capped at asyncEngines.
    this.pool = new AsyncEnginePool(this.limits, asyncEngines, asyncEngines * (this.limits.maxNestingDepth + 1))
  }

  async run(req: SandboxRequest): Promise<SandboxResult> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > this.limits.maxTimeoutMs)
      throw new RangeError(`timeoutMs must be an integer from 1 to ${this.limits.maxTimeoutMs}, got ${timeoutMs}`)
    const settings = { limits: this.limits, timeoutMs }
    const ticks = ticksFor(this.limits.maxStatements)

    if (req.signal?.aborted) return CANCELLED

    if (this.useSyncBuild && !MENTIONS_VANCE.test(req.source)) {
      let started = 0
      const outcome = await this.onSyncEngine(async (engine) => {
        if (req.signal?.aborted) return CANCELLED
        started = this.now()
        this.started(req)
        return this.guard(engine, () =>
          metered(req, new RunState(started + timeoutMs, ticks, this.now), (state) => runOnEngine(engine, req, state, settings)),
        )
      })
      if (outcome !== RETRY_ASYNC) return this.finish(outcome, started)
      // Redone with a fresh statement budget (the sync run was speculative) but the same deadline.
      return this.runAsync(req, settings, started + timeoutMs, ticks, started)
    }
    return this.runAsync(req, settings, undefined, ticks, undefined)
  }

  /**
   * One run at a time on the sync engine. A run awaits between creating its context and disposing
   * it (settling a promise), and the interrupt handler reads the engine's *current* run: two runs
   * interleaved there would meter each other — and the first to finish would leave the other
   * unmetered. Runs are short (their deadline bounds them), so a queue costs little.
   */
  private onSyncEngine<T>(work: (engine: SyncEngine) => Promise<T>): Promise<T> {
    const turn = this.syncTurn.then(async () => {
      const engine = await this.sync.get()
      engine.busy = true
      try {
        return await work(engine)
      } finally {
        engine.busy = false
        engine.current = undefined
        if (!engine.broken && (engine.retire || outgrown(engine))) {
          this.retired++
          this.sync.discard(engine)
        }
      }
    })
    this.syncTurn = turn.catch(() => undefined)
    return turn
  }

  private started(req: SandboxRequest) {
    this.onStarted(req)
    req.onStarted?.()
  }

  /**
   * Loads the sync engine ahead of the first run (a worker does this as it starts, so that its
   * first script does not wait for WebAssembly). Failures surface on the first run instead.
   */
  prepare(): Promise<void> {
    return this.useSyncBuild
      ? this.sync.get().then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve()
  }

  /** Engines and their memory: for the memory test and operational metrics. */
  async stats(): Promise<SandboxStats> {
    const engines: Engine[] = [...(await this.sync.all()), ...this.pool.all()]
    return { engines: engines.filter((e) => !e.broken).map(engineStats), enginesReplaced: this.replaced, enginesRetired: this.retired }
  }

  private async runAsync(
    req: SandboxRequest,
    settings: { limits: SandboxLimits; timeoutMs: number },
    deadline: number | undefined,
    ticks: number,
    startedAt: number | undefined,
  ): Promise<SandboxResult> {
    const nested = (req.host?.depth ?? 0) > 0
    let engine
    try {
      engine = await this.pool.acquire(nested)
    } catch (e) {
      if (e instanceof NoEngineFreeError)
        return { error: 'RESOURCE_EXHAUSTED', message: `no sandbox is free for a nested script: ${e.message}` }
      throw e
    }
    try {
      if (req.signal?.aborted) return CANCELLED
      const started = startedAt ?? this.now()
      if (startedAt === undefined) this.started(req)
      const state = new RunState(deadline ?? started + settings.timeoutMs, ticks, this.now)
      const acquired = engine
      const outcome = await this.guard(acquired, () => metered(req, state, (s) => runOnEngine(acquired, req, s, settings)))
      // An async engine never asks for a retry; treat it as the engine misbehaving.
      if (outcome === RETRY_ASYNC) return { error: 'HOST_EXCEPTION', message: 'the sandbox could not run the script' }
      return this.finish(outcome, started)
    } finally {
      if (this.pool.release(engine, nested)) this.retired++
    }
  }

  /** WebAssembly failed mid-run (e.g. the host stack overflowed in native recursion): drop the engine, answer. */
  private async guard(engine: Engine, run: () => Promise<RunOutcome>): Promise<RunOutcome> {
    try {
      return await run()
    } catch (e) {
      if (!(e instanceof EngineFailure)) throw e
      engine.broken = true
      this.replaced++
      if (engine.kind === 'sync') this.sync.discard(engine)
      return {
        error: 'RESOURCE_EXHAUSTED',
        message:
          'the script exhausted the engine (native recursion too deep, e.g. a deeply nested JSON.stringify, JSON.parse or expression)',
      }
    }
  }

  private finish(outcome: SandboxResult, started: number): SandboxResult {
    if ('error' in outcome) return outcome
    return { value: outcome.value, durationMs: Math.round(this.now() - started) }
  }
}
