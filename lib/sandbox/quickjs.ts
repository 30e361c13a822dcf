/**
 * The QuickJS sandbox: a security boundary for scripts other people wrote, in a multi-tenant
 * service. A run always ends in a result:
 *   { value, durationMs }  or  { error: 'TIMEOUT' | 'RESOURCE_EXHAUSTED' | 'GUEST_EXCEPTION' | 'HOST_EXCEPTION', message }
 *
 * Profile: a fresh context per run (nothing carried between runs or tenants); no globals but the
 * standard builtins, the inputs and `vance`; memory, stack, statement ("fuel") and wall-clock
 * limits; results ≤ 1 MiB of JSON nested ≤ 64 deep; values cross the boundary as JSON only.
 *
 * Threads: the engines run in `node:worker_threads` workers (worker.ts, in-process.ts), never on
 * the thread that serves requests. Each worker runs ONE script at a time, so a hard watchdog can
 * end a run by terminating its worker: QuickJS's interrupt handler enforces the deadline inside the
 * worker, but work it does not poll through (e.g. building a ~1,400-frame backtrace for every caught
 * stack overflow in `function f() { try { f() } catch { f() } }`) could hold a thread for seconds;
 * at deadline + WATCHDOG_GRACE_MS the worker is terminated, the run answers TIMEOUT and the next
 * run gets a fresh worker. Host calls (`vance.tools.*`) are posted to this thread, run through the
 * run's own `host.tools`, and answered back while the script stays suspended in its worker.
 *
 * Concurrency: up to `asyncEngines` workers (default 4) serve top-level runs at once, each holding a
 * sync-build engine and one asyncify engine; further top-level runs queue (FIFO) for a free worker.
 * A nested run (a script called by a script's sibling call) never waits: it takes a free worker or
 * starts one, up to asyncEngines × (maxNestingDepth + 1) in all, so a parent waiting on its child
 * can't deadlock the pool; extra workers are stopped when they fall idle.
 *
 * Workers are started lazily, on the first script (never at construction), and don't keep the
 * process alive. A worker is this very module evaluated again with a marker in `workerData` — so it
 * works from the TypeScript source (tsx, vitest: the worker gets `--import tsx`) and from an esbuild
 * bundle (the worker re-evaluates the bundle's top level, then serves).
 */
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads'
import { onAbort } from '../runtime/abort-listener'
import { startWorker } from '../runtime/threads'
import { CANCELLED, type SandboxRequest, type SandboxResult } from './execute'
import type { SandboxStats } from './in-process'
import { DEFAULT_TIMEOUT_MS, resolveLimits, type SandboxLimits } from './limits'
import {
  type FromWorker,
  type HostAnswer,
  type HostOp,
  isWorkerSetup,
  serveWorker,
  type ToWorker,
  WORKER_MARK,
  type WorkerSetup,
} from './worker'

export interface SandboxOptions extends Partial<SandboxLimits> {
  /** Workers (each one script at a time) serving top-level runs at once (default 4); further runs queue. */
  asyncEngines?: number
  /** Unused since runs moved into workers (each times its runs with its own performance.now); kept for compatibility. */
  now?: () => number
  /** false: every run on an async engine (for measurements). Default true. */
  useSyncBuild?: boolean
}

export type { SandboxStats }

/** How long past its deadline a run may hold its worker before the worker is terminated. */
export const WATCHDOG_GRACE_MS = 150
/** Before a run's deadline clock starts, its worker may still be loading (thread start, WebAssembly compile). */
const STARTUP_ALLOWANCE_MS = 30_000
const STATS_WAIT_MS = 1000

/** A run in flight on a worker. */
interface Run {
  id: number
  timeoutMs: number
  host: SandboxRequest['host']
  resolve: (r: SandboxResult) => void
  reject: (e: unknown) => void
  timer: NodeJS.Timeout | undefined
  /** Its signal fired: the worker was told, and gets WATCHDOG_GRACE_MS to answer. */
  cancelled: boolean
  detach?: () => void
  onStarted?: () => void
}

class SandboxWorker {
  busy = false
  dead = false
  /** Engines replaced and retired inside this worker, as of its last stats answer. */
  replacedInside = 0
  retiredInside = 0
  private readonly worker: Worker
  private run: Run | undefined
  private nextId = 1
  private readonly statsWaiters = new Map<number, (s: SandboxStats | undefined) => void>()

  constructor(
    setup: WorkerSetup,
    private readonly onDeath: (w: SandboxWorker, replaced: number) => void,
  ) {
    this.worker = startWorker(import.meta.url, setup)
    this.worker.on('message', (m: FromWorker) => this.receive(m))
    this.worker.on('error', (e) => this.lost(`the sandbox worker failed: ${e instanceof Error ? e.message : String(e)}`))
    this.worker.on('exit', () => this.lost('the sandbox worker stopped'))
    // After the listeners (adding a 'message' listener refs the worker again). A run in flight holds
    // the process open through its watchdog timer; an idle worker never does.
    this.worker.unref()
  }

  execute(req: SandboxRequest, timeoutMs: number): Promise<SandboxResult> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++
      const run: Run = { id, timeoutMs, host: req.host, resolve, reject, timer: undefined, cancelled: false, onStarted: req.onStarted }
      this.run = run
      this.arm(run, timeoutMs + WATCHDOG_GRACE_MS + STARTUP_ALLOWANCE_MS)
      if (req.signal) run.detach = onAbort(req.signal, () => this.cancel(run))
      this.post({
        t: 'run',
        id,
        req: {
          source: req.source,
          inputs: req.inputs === undefined ? undefined : JSON.stringify(req.inputs),
          timeoutMs,
          filename: req.filename,
          host: req.host && { context: { ...req.host.context }, depth: req.host.depth },
        },
      })
    })
  }

  stats(): Promise<SandboxStats | undefined> {
    if (this.dead) return Promise.resolve(undefined)
    const id = -this.nextId++
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(undefined), STATS_WAIT_MS)
      const finish = (s: SandboxStats | undefined) => {
        clearTimeout(timer)
        this.statsWaiters.delete(id)
        resolve(s)
      }
      this.statsWaiters.set(id, finish)
      this.post({ t: 'stats', id })
    })
  }

  /** Stops the thread (idle extra worker, or a run past its deadline). */
  stop() {
    if (this.dead) return
    this.dead = true
    void this.worker.terminate()
  }

  private post(m: ToWorker) {
    this.worker.postMessage(m)
  }

  private arm(run: Run, ms: number) {
    if (run.timer) clearTimeout(run.timer)
    run.timer = setTimeout(() => this.watchdog(run), ms)
  }

  private watchdog(run: Run) {
    if (this.run !== run) return
    this.finish(
      run.cancelled ? CANCELLED : { error: 'TIMEOUT', message: `the script did not finish within its ${run.timeoutMs} ms timeout` },
    )
    this.die(1)
  }

  /** The run's call tree ended: the worker interrupts the script, or is terminated after the grace. */
  private cancel(run: Run) {
    if (this.run !== run || run.cancelled) return
    run.cancelled = true
    this.post({ t: 'cancel', id: run.id })
    this.arm(run, WATCHDOG_GRACE_MS)
  }

  private finish(result: SandboxResult | { failed: string }) {
    const run = this.run
    if (!run) return
    this.run = undefined
    clearTimeout(run.timer)
    run.detach?.()
    if ('failed' in result) run.reject(new Error(result.failed))
    else run.resolve(result)
  }

  private lost(message: string) {
    if (this.dead) return
    this.finish({
      error: 'RESOURCE_EXHAUSTED',
      message: `the script exhausted the engine (${message})`,
    })
    this.die(1)
  }

  private die(replaced: number) {
    if (this.dead) return
    this.stop()
    for (const finish of this.statsWaiters.values()) finish(undefined)
    this.onDeath(this, replaced)
  }

  private receive(m: FromWorker) {
    if (m.t === 'stats') {
      this.replacedInside = m.stats.enginesReplaced
      this.retiredInside = m.stats.enginesRetired
      this.statsWaiters.get(m.id)?.(m.stats)
      return
    }
    const run = this.run
    if (!run || run.id !== m.id) return // a late message of a run already answered
    if (m.t === 'started') {
      if (!run.cancelled) this.arm(run, run.timeoutMs + WATCHDOG_GRACE_MS)
      run.onStarted?.()
    } else if (m.t === 'done') this.finish(m.result)
    else if (m.t === 'failed') this.finish({ failed: m.message })
    else if (m.t === 'host') void this.host(run, m.callId, m.call)
  }

  /** Runs a script's host call on this thread, through the tools of that run. */
  private async host(run: Run, callId: number, call: HostOp) {
    let answer: HostAnswer
    try {
      const tools = run.host?.tools
      if (!tools) throw new Error('no host tools') // unreachable: a run without host gets no proxy tools
      if (call.op === 'list') answer = { json: JSON.stringify(await tools.list()) }
      else if (call.op === 'has') answer = { json: JSON.stringify((await tools.has(call.name)) === true) }
      else {
        const outcome = await tools.call(call.name, JSON.parse(call.params) as Record<string, unknown>)
        let content: string | undefined
        try {
          content = JSON.stringify(outcome.content ?? null)
        } catch {
          content = undefined
        }
        answer = {
          json:
            content === undefined
              ? JSON.stringify({ isError: outcome.isError === true, notJson: true })
              : `{"isError":${outcome.isError === true},"content":${content}}`,
        }
      }
    } catch (e) {
      answer = { thrown: e instanceof Error ? e.message : String(e) }
    }
    if (this.run === run && !this.dead) this.post({ t: 'answer', id: run.id, callId, answer })
  }
}

class NoWorkerFreeError extends Error {}

export class QuickJsSandbox {
  readonly limits: SandboxLimits
  private readonly setup: WorkerSetup
  private readonly size: number
  private readonly hardCap: number
  private readonly workers: SandboxWorker[] = []
  private readonly waiters: ((w: SandboxWorker) => void)[] = []
  private replaced = 0
  private retired = 0
  /** Top-level runs holding or waiting for a worker. */
  private topLevel = 0

  constructor(options: SandboxOptions = {}) {
    const { asyncEngines = 4, now: _now, useSyncBuild = true, ...limits } = options
    this.limits = resolveLimits(limits)
    if (!Number.isInteger(asyncEngines) || asyncEngines < 1)
      throw new RangeError(`asyncEngines must be a positive integer, got ${asyncEngines}`)
    this.setup = { [WORKER_MARK]: true, limits: this.limits, useSyncBuild }
    this.size = asyncEngines
    // A chain of nested scripts holds one worker per level; top-level runs are capped at asyncEngines.
    this.hardCap = asyncEngines * (this.limits.maxNestingDepth + 1)
  }

  async run(req: SandboxRequest): Promise<SandboxResult> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > this.limits.maxTimeoutMs)
      throw new RangeError(`timeoutMs must be an integer from 1 to ${this.limits.maxTimeoutMs}, got ${timeoutMs}`)
    if (req.signal?.aborted) return CANCELLED
    const nested = (req.host?.depth ?? 0) > 0
    let worker
    try {
      worker = this.acquire(nested)
    } catch (e) {
      if (e instanceof NoWorkerFreeError)
        return { error: 'RESOURCE_EXHAUSTED', message: `no sandbox is free for a nested script: ${e.message}` }
      throw e
    }
    if (!nested) this.topLevel++
    try {
      const acquired = await worker
      try {
        if (req.signal?.aborted) return CANCELLED
        return await acquired.execute(req, timeoutMs)
      } finally {
        this.release(acquired)
      }
    } finally {
      if (!nested) this.topLevel--
    }
  }

  /** Engines and their memory, across workers: for the memory test and operational metrics. */
  async stats(): Promise<SandboxStats> {
    const live = this.workers.filter((w) => !w.dead)
    const answers = await Promise.all(live.map((w) => w.stats()))
    return {
      engines: answers.flatMap((s) => s?.engines ?? []),
      enginesReplaced: this.replaced + live.reduce((n, w) => n + w.replacedInside, 0),
      enginesRetired: this.retired + live.reduce((n, w) => n + w.retiredInside, 0),
      workers: live.length,
    }
  }

  private acquire(nested: boolean): SandboxWorker | Promise<SandboxWorker> {
    const free = this.workers.find((w) => !w.busy && !w.dead)
    if (free) {
      free.busy = true
      return free
    }
    // Top-level runs may have `size` workers whatever the nested ones hold: a run that finished
    // nested work never makes a top-level one wait.
    const live = this.workers.length
    if (live < this.hardCap && (nested || this.topLevel < this.size)) return this.start(!nested)
    if (nested) throw new NoWorkerFreeError(`all ${this.hardCap} sandbox engines are busy`)
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /** `prepare`: load the sync engine as the thread starts (a base worker; one started for a nested run loads only what it runs). */
  private start(prepare = true): SandboxWorker {
    const worker = new SandboxWorker({ ...this.setup, prepare }, (w, replaced) => this.died(w, replaced))
    worker.busy = true
    this.workers.push(worker)
    return worker
  }

  private release(worker: SandboxWorker) {
    if (worker.dead) return // died() already handed its place on
    const waiter = this.waiters.shift()
    if (waiter) return waiter(worker) // stays busy: handed straight over
    if (this.workers.length > this.size) {
      this.remove(worker)
      this.replaced += worker.replacedInside
      this.retired += worker.retiredInside
      worker.stop()
      return
    }
    worker.busy = false
  }

  private died(worker: SandboxWorker, replaced: number) {
    this.replaced += replaced + worker.replacedInside
    this.retired += worker.retiredInside
    this.remove(worker)
    const waiter = this.waiters.shift()
    if (waiter) waiter(this.start())
  }

  private remove(worker: SandboxWorker) {
    const i = this.workers.indexOf(worker)
    if (i >= 0) this.workers.splice(i, 1)
  }
}

// In a sandbox worker this module is the entry point: serve the main thread.
if (!isMainThread && parentPort && isWorkerSetup(workerData)) serveWorker(parentPort, workerData)
