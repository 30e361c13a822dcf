/**
 * Fair use of the sandbox between tenants, and cancellation of whole call trees. Wraps a sandbox
 * (workers or inline) that runs whatever it is given:
 *
 * - **Top-level runs** (a script called by a caller, not by another script) take one of `slots`
 *   places; one tenant holds at most `tenantSlots` of them, so the others always have a place.
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
import { ServerToolsError } from '../errors'
import { CANCELLED, type SandboxRequest, type SandboxResult } from './execute'
import { DEFAULT_TIMEOUT_MS } from './limits'

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

/** Refused for capacity; `retryAfterSeconds` says when a place is likely to be free. */
export const overloaded = (message: string, retryAfterSeconds: number) => new ServerToolsError('OVERLOADED', message, { retryAfterSeconds })

const MAX_RETRY_AFTER_S = 30

interface Waiter {
  tenant: string
  grant: () => void
  refuse: (e: unknown) => void
}

interface TenantState {
  running: number
  nested: number
  queue: Waiter[]
  /** When each of the tenant's top-level runs will have ended at the latest (its deadline). */
  until: Set<{ at: number }>
}

export class FairSandbox<Stats> {
  private readonly tenants = new Map<string, TenantState>()
  private running = 0
  private nested = 0
  private queued = 0
  /** Tenants with waiting runs, in serving order (the one served last goes to the back). */
  private readonly turns: string[] = []
  /** Each run's signal → its deadline (this thread's performance.now()), inherited by the runs nested under it. */
  private readonly deadlines = new WeakMap<AbortSignal, number>()

  constructor(
    private readonly inner: RunsScripts<Stats>,
    readonly fairness: FairnessLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const [name, v] of Object.entries(fairness))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`sandbox fairness limit ${name} must be a positive integer, got ${v}`)
  }

  async run(req: SandboxRequest): Promise<SandboxResult> {
    if (req.signal?.aborted) return CANCELLED
    const tenant = req.host?.context.tenant ?? ''
    const nested = (req.host?.depth ?? 0) > 0
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const state = this.tenant(tenant)

    if (nested) {
      if (this.nested >= this.fairness.nestedSlots || state.nested >= this.fairness.tenantNestedSlots)
        return {
          error: 'RESOURCE_EXHAUSTED',
          message: `no sandbox is free for a nested script: ${state.nested >= this.fairness.tenantNestedSlots ? `this tenant already runs ${state.nested} nested scripts, the most allowed` : `all ${this.fairness.nestedSlots} places for nested scripts are taken`}`,
        }
      this.nested++
      state.nested++
      try {
        return await this.execute(req)
      } finally {
        this.nested--
        state.nested--
        this.forget(tenant, state)
      }
    }

    const admitted = await this.admit(tenant, state, timeoutMs, req.signal)
    if (!admitted) return CANCELLED
    const until = { at: this.now() + timeoutMs }
    state.until.add(until)
    try {
      return await this.execute(req)
    } finally {
      state.until.delete(until)
      this.running--
      state.running--
      this.dispatch()
      this.forget(tenant, state)
    }
  }

  /** Scripts waiting right now (the queue-depth metric reads it without asking the workers). */
  get waiting(): number {
    return this.queued
  }

  async stats(): Promise<Stats & { scheduler: SchedulerStats }> {
    return { ...(await this.inner.stats()), scheduler: { running: this.running, nested: this.nested, queued: this.queued } }
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
    let deadline = Infinity // until the run's clock starts
    const onAbort = () => run?.abort(req.signal?.reason)
    const runSignal = () => {
      if (!run) {
        run = new AbortController()
        this.deadlines.set(run.signal, deadline)
        if (req.signal?.aborted) run.abort(req.signal.reason)
        else req.signal?.addEventListener('abort', onAbort, { once: true })
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
        req.signal?.removeEventListener('abort', onAbort)
        run.abort() // whatever ended the run ends its nested runs and host calls too
      }
    }
  }

  /** Resolves true once the run holds a top-level place, false when cancelled while waiting; throws OVERLOADED. */
  private admit(tenant: string, state: TenantState, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const { slots, tenantSlots, tenantQueue, queue } = this.fairness
    if (this.running < slots && state.running < tenantSlots && state.queue.length === 0) {
      this.take(state)
      return Promise.resolve(true)
    }
    if (state.queue.length >= tenantQueue)
      throw overloaded(
        `The sandbox is busy: this tenant already has ${state.queue.length} scripts waiting (at most ${tenantQueue}) behind ${state.running} running. Retry later.`,
        this.retryAfter(state),
      )
    if (this.queued >= queue)
      throw overloaded(`The sandbox is busy: ${this.queued} scripts are waiting (at most ${queue}). Retry later.`, this.retryAfter())

    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = {
        tenant,
        grant: () => {
          settle()
          resolve(true)
        },
        refuse: (e) => {
          settle()
          reject(e)
        },
      }
      // Waiting is bounded by the run's own timeout: a run that cannot start within it is refused.
      const timer = setTimeout(() => {
        this.unqueue(tenant, state, waiter)
        waiter.refuse(
          overloaded(
            `The sandbox is busy: the script could not start within its ${timeoutMs} ms timeout. Retry later.`,
            this.retryAfter(state),
          ),
        )
      }, timeoutMs)
      const onAbort = () => {
        this.unqueue(tenant, state, waiter)
        settle()
        resolve(false)
      }
      const settle = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      state.queue.push(waiter)
      this.queued++
      if (!this.turns.includes(tenant)) this.turns.push(tenant)
    })
  }

  private take(state: TenantState) {
    this.running++
    state.running++
  }

  /** Hands free places to waiting runs, one tenant at a time in turn. */
  private dispatch() {
    for (let i = 0; i < this.turns.length && this.running < this.fairness.slots; ) {
      const tenant = this.turns[i]
      const state = this.tenants.get(tenant)!
      if (state.running >= this.fairness.tenantSlots) {
        i++
        continue
      }
      const waiter = state.queue.shift()!
      this.queued--
      this.turns.splice(i, 1)
      if (state.queue.length) this.turns.push(tenant) // to the back: the next tenant goes first
      this.take(state)
      waiter.grant()
      i = 0
    }
  }

  private unqueue(tenant: string, state: TenantState, waiter: Waiter) {
    const i = state.queue.indexOf(waiter)
    if (i < 0) return
    state.queue.splice(i, 1)
    this.queued--
    if (state.queue.length === 0) this.turns.splice(this.turns.indexOf(tenant), 1)
    this.forget(tenant, state)
  }

  /** Seconds until the first of the runs the caller waits for reaches its deadline (1–30). */
  private retryAfter(state?: TenantState): number {
    const runs =
      state && state.running >= this.fairness.tenantSlots ? [...state.until] : [...this.tenants.values()].flatMap((t) => [...t.until])
    const deadlines = runs.map((r) => r.at)
    const first = deadlines.length ? Math.min(...deadlines) : this.now()
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil((first - this.now()) / 1000)))
  }

  private tenant(tenant: string): TenantState {
    let state = this.tenants.get(tenant)
    if (!state) {
      state = { running: 0, nested: 0, queue: [], until: new Set() }
      this.tenants.set(tenant, state)
    }
    return state
  }

  /** Idle tenants are not remembered: the map holds only tenants with runs in flight or waiting. */
  private forget(tenant: string, state: TenantState) {
    if (state.running === 0 && state.nested === 0 && state.queue.length === 0) this.tenants.delete(tenant)
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
