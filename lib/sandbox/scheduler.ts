/**
 * Fair use of the sandbox between tenants, and cancellation of whole call trees. Wraps a sandbox
 * (workers or inline) that runs whatever it is given:
 *
 * - **Top-level runs** (a script called by a caller, not by another script) take one of `slots`
 *   places of a FairQueue (lib/runtime/fair-queue.ts, shared with the YAML parse workers); one tenant holds at most `tenantSlots` of them, so the others always have a place.
 *   Beyond that a run waits in its tenant's queue (at most `tenantQueue` runs; `queue` across
 *   tenants), served round-robin between tenants — never one tenant's backlog ahead of another's
 *   first run. A full queue, or a wait longer than the run's own timeout, is refused with
 *   OVERLOADED (HTTP 503 with Retry-After; a tool error inside a process turn): never an unbounded wait.
 * - **Nested runs** (a script called through `vance.tools.call`) never wait — a parent waiting on
 *   its child would hold its place meanwhile — and never take a top-level place: they have places
 *   of their own (`nestedSlots`, `tenantNestedSlots` per tenant); past them they are refused
 *   (RESOURCE_EXHAUSTED), which the parent script sees as a failed sibling call.
 * - **Cancellation**: every run gets an AbortSignal that ends with it (whatever ended it: result,
 *   timeout, failure, or its caller's own signal). Its host calls carry that signal, so the nested
 *   dispatch, the nested runs (queued or running) and their host calls all end with it.
 */

import type { SiblingTools } from '../calls/outcome'
import { onAbort } from '../runtime/abort-listener'
import { FairQueue, overloaded } from '../runtime/fair-queue'
import { CANCELLED, type SandboxRequest, type SandboxResult } from './execute'
import { DEFAULT_TIMEOUT_MS } from './limits'

export { overloaded }

export interface FairnessLimits {
  /** Top-level runs at once across tenants: the sandbox's worker (or async engine) count. */
  slots: number
  /** Top-level runs one tenant may have at once. */
  tenantSlots: number
  /** Top-level runs one tenant may have waiting. */
  tenantQueue: number
  /** Top-level runs waiting across tenants. */
  queue: number
  /** Nested runs at once across tenants. */
  nestedSlots: number
  /** Nested runs one tenant may have at once. */
  tenantNestedSlots: number
}

/** What the wrapped sandbox must offer: runs that honour `req.signal`. */
export interface RunsScripts<Stats> {
  run(req: SandboxRequest): Promise<SandboxResult>
  stats(): Promise<Stats>
}

export interface SchedulerStats {
  running: number
  nested: number
  queued: number
}

export class FairSandbox<Stats> {
  /** Top-level places, shared in turn between tenants (lib/runtime/fair-queue.ts). */
  private readonly places: FairQueue
  /** Nested runs per tenant with any in flight. */
  private readonly tenantNested = new Map<string, number>()
  private nested = 0
  /** Each run's signal → its deadline (this thread's performance.now()), inherited by the runs nested under it. */
  private readonly deadlines = new WeakMap<AbortSignal, number>()

  constructor(
    private readonly inner: RunsScripts<Stats>,
    readonly fairness: FairnessLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const [name, v] of Object.entries(fairness))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`sandbox fairness limit ${name} must be a positive integer, got ${v}`)
    const { slots, tenantSlots, tenantQueue, queue } = fairness
    this.places = new FairQueue(
      { slots, tenantSlots, tenantQueue, queue },
      { busy: 'The sandbox is busy', things: 'scripts', late: (ms) => `the script could not start within its ${ms} ms timeout` },
      now,
    )
  }

  async run(req: SandboxRequest): Promise<SandboxResult> {
    if (req.signal?.aborted) return CANCELLED
    const tenant = req.host?.context.tenant ?? ''
    const nested = (req.host?.depth ?? 0) > 0
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS

    if (nested) {
      const mine = this.tenantNested.get(tenant) ?? 0
      if (this.nested >= this.fairness.nestedSlots || mine >= this.fairness.tenantNestedSlots)
        return {
          error: 'RESOURCE_EXHAUSTED',
          message: `no sandbox is free for a nested script: ${mine >= this.fairness.tenantNestedSlots ? `this tenant already runs ${mine} nested scripts, the most allowed` : `all ${this.fairness.nestedSlots} places for nested scripts are taken`}`,
        }
      this.nested++
      this.tenantNested.set(tenant, mine + 1)
      try {
        return await this.execute(req)
      } finally {
        this.nested--
        const left = (this.tenantNested.get(tenant) ?? 1) - 1
        if (left) this.tenantNested.set(tenant, left)
        else this.tenantNested.delete(tenant)
      }
    }

    const release = await this.places.enter(tenant, timeoutMs, req.signal)
    if (!release) return CANCELLED
    try {
      return await this.execute(req)
    } finally {
      release()
    }
  }

  /** Scripts waiting right now (the queue-depth metric reads it without asking the workers). */
  get waiting(): number {
    return this.places.waiting
  }

  async stats(): Promise<Stats & { scheduler: SchedulerStats }> {
    return {
      ...(await this.inner.stats()),
      scheduler: { running: this.places.running, nested: this.nested, queued: this.places.waiting },
    }
  }

  /**
   * Runs `req` with a signal of its own that ends with the run, carried by its host calls. A run
   * nested under another (its signal is that run's) ends by its parent's deadline at the latest:
   * with inline isolation a spinning child holds the thread, so no timer of the parent's could
   * stop it — its own interrupt handler must.
   */
  private async execute(req: SandboxRequest): Promise<SandboxResult> {
    let timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const parentDeadline = req.signal && this.deadlines.get(req.signal)
    if (parentDeadline !== undefined && parentDeadline !== Infinity) {
      // Rounded up, and the parent's deadline is read when its start was reported here (after its
      // clock started): the child never ends before its parent, whose own TIMEOUT then decides.
      const left = Math.ceil(parentDeadline - this.now())
      if (left < 1) return CANCELLED
      timeoutMs = Math.min(timeoutMs, left)
    }
    // The run's own signal is made on its first host call (most runs make none): it is what the
    // host calls carry, and it ends — with its nested runs — when the run ends or its caller's does.
    let run: AbortController | undefined
    let stopListening: (() => void) | undefined
    let deadline = Infinity // until the run's clock starts
    const runSignal = () => {
      if (!run) {
        run = new AbortController()
        this.deadlines.set(run.signal, deadline)
        if (req.signal?.aborted) run.abort(req.signal.reason)
        else if (req.signal) stopListening = onAbort(req.signal, () => run?.abort(req.signal?.reason))
      }
      return run.signal
    }
    const started = () => {
      deadline = this.now() + timeoutMs
      if (run) this.deadlines.set(run.signal, deadline)
      req.onStarted?.()
    }
    try {
      return await this.inner.run({
        ...req,
        timeoutMs,
        onStarted: started,
        ...(req.host ? { host: { ...req.host, tools: carrying(req.host.tools, runSignal) } } : {}),
      })
    } finally {
      if (run) {
        stopListening?.()
        run.abort() // whatever ended the run ends its nested runs and host calls too
      }
    }
  }
}

/** The script's sibling tools, each call carrying the run's signal into the nested dispatch. */
function carrying(tools: SiblingTools, signal: () => AbortSignal): SiblingTools {
  return {
    call: (name, params) => tools.call(name, params, { signal: signal() }),
    delegate: (name, params) => tools.delegate(name, params, { signal: signal() }),
    list: () => tools.list(),
    has: (name) => tools.has(name),
  }
}
