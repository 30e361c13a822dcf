/**
 * Fair places on a shared resource between tenants: the sandbox's scripts (lib/sandbox/scheduler.ts)
 * and the YAML parse workers (lib/config/yaml-pool.ts) both take their places here.
 *
 * A piece of work takes one of `slots` places; one tenant holds at most `tenantSlots` of them, so
 * the others always have a place. Beyond that it waits in its tenant's queue (at most
 * `tenantQueue`; `queue` across tenants), served round-robin between tenants — never one tenant's
 * backlog ahead of another's first piece. A full queue, or a wait longer than the work's own
 * timeout, is refused with OVERLOADED (HTTP 503 with Retry-After): never an unbounded wait.
 */
import { ServerToolsError } from '../errors'
import { onAbort } from './abort-listener'

export interface FairQueueLimits {
  /** Pieces of work at once across tenants. */
  slots: number
  /** Pieces one tenant may have at once. */
  tenantSlots: number
  /** Pieces one tenant may have waiting. */
  tenantQueue: number
  /** Pieces waiting across tenants. */
  queue: number
}

/** How the refusals name what waits: `{ busy: 'The sandbox is busy', things: 'scripts', late: (ms) => … }`. */
export interface FairQueueWords {
  busy: string
  things: string
  /** Why a piece that waited `timeoutMs` is refused. */
  late: (timeoutMs: number) => string
}

/** Refused for capacity; `retryAfterSeconds` says when a place is likely to be free. */
export const overloaded = (message: string, retryAfterSeconds: number) => new ServerToolsError('OVERLOADED', message, { retryAfterSeconds })

const MAX_RETRY_AFTER_S = 30

interface Waiter {
  grant: () => void
  refuse: (e: unknown) => void
}

interface TenantState {
  running: number
  queue: Waiter[]
  /** When each of the tenant's running pieces will have ended at the latest (its deadline). */
  until: Set<{ at: number }>
}

/** A tenant with nothing running or waiting, as `hasRoom` reads one the queue does not know (never stored). */
const NO_STATE: TenantState = { running: 0, queue: [], until: new Set() }

export class FairQueue {
  private readonly tenants = new Map<string, TenantState>()
  private running_ = 0
  private queued = 0
  /** Tenants with waiting pieces, in serving order (the one served last goes to the back). */
  private readonly turns: string[] = []

  constructor(
    readonly limits: FairQueueLimits,
    private readonly words: FairQueueWords,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const [name, v] of Object.entries(limits))
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`fairness limit ${name} must be a positive integer, got ${v}`)
  }

  /** Pieces holding a place right now. */
  get running(): number {
    return this.running_
  }

  /** Pieces waiting right now. */
  get waiting(): number {
    return this.queued
  }

  /** Whether `tenant` would get a place now or one to wait in: `enter` would not refuse it at once. */
  hasRoom(tenant: string): boolean {
    const state = this.tenants.get(tenant) ?? NO_STATE
    return this.runsNow(state) || (!this.tenantQueueFull(state) && !this.queueFull())
  }

  private runsNow(state: TenantState): boolean {
    return this.running_ < this.limits.slots && state.running < this.limits.tenantSlots && state.queue.length === 0
  }

  private tenantQueueFull(state: TenantState): boolean {
    return state.queue.length >= this.limits.tenantQueue
  }

  private queueFull(): boolean {
    return this.queued >= this.limits.queue
  }

  /**
   * Resolves with the place's release once `tenant` holds one (call it exactly once, when the work
   * ends), or undefined when `signal` fired while waiting; throws OVERLOADED.
   */
  async enter(tenant: string, timeoutMs: number, signal?: AbortSignal): Promise<(() => void) | undefined> {
    const state = this.tenant(tenant)
    if (!(await this.admit(tenant, state, timeoutMs, signal))) return undefined
    const until = { at: this.now() + timeoutMs }
    state.until.add(until)
    let released = false
    return () => {
      if (released) return
      released = true
      state.until.delete(until)
      this.running_--
      state.running--
      this.dispatch()
      this.forget(tenant, state)
    }
  }

  private admit(tenant: string, state: TenantState, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const { tenantQueue, queue } = this.limits
    const { busy, things } = this.words
    if (this.runsNow(state)) {
      this.take(state)
      return Promise.resolve(true)
    }
    if (this.tenantQueueFull(state)) {
      this.forget(tenant, state)
      throw overloaded(
        `${busy}: this tenant already has ${state.queue.length} ${things} waiting (at most ${tenantQueue}) behind ${state.running} running. Retry later.`,
        this.retryAfter(state),
      )
    }
    if (this.queueFull()) {
      this.forget(tenant, state)
      throw overloaded(`${busy}: ${this.queued} ${things} are waiting (at most ${queue}). Retry later.`, this.retryAfter())
    }

    return new Promise<boolean>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          settle()
          resolve(true)
        },
        refuse: (e) => {
          settle()
          reject(e)
        },
      }
      // Waiting is bounded by the work's own timeout: work that cannot start within it is refused.
      const timer = setTimeout(() => {
        this.unqueue(tenant, state, waiter)
        waiter.refuse(overloaded(`${busy}: ${this.words.late(timeoutMs)}. Retry later.`, this.retryAfter(state)))
      }, timeoutMs)
      const stopListening =
        signal &&
        onAbort(signal, () => {
          this.unqueue(tenant, state, waiter)
          settle()
          resolve(false)
        })
      const settle = () => {
        clearTimeout(timer)
        stopListening?.()
      }
      state.queue.push(waiter)
      this.queued++
      if (!this.turns.includes(tenant)) this.turns.push(tenant)
    })
  }

  private take(state: TenantState) {
    this.running_++
    state.running++
  }

  /** Hands free places to waiting pieces, one tenant at a time in turn. */
  private dispatch() {
    for (let i = 0; i < this.turns.length && this.running_ < this.limits.slots; ) {
      const tenant = this.turns[i]
      const state = this.tenants.get(tenant)!
      if (state.running >= this.limits.tenantSlots) {
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

  /** Seconds until the first of the pieces the caller waits for reaches its deadline (1–30). */
  private retryAfter(state?: TenantState): number {
    const runs =
      state && state.running >= this.limits.tenantSlots ? [...state.until] : [...this.tenants.values()].flatMap((t) => [...t.until])
    const deadlines = runs.map((r) => r.at)
    const first = deadlines.length ? Math.min(...deadlines) : this.now()
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil((first - this.now()) / 1000)))
  }

  private tenant(tenant: string): TenantState {
    let state = this.tenants.get(tenant)
    if (!state) {
      state = { running: 0, queue: [], until: new Set() }
      this.tenants.set(tenant, state)
    }
    return state
  }

  /** Idle tenants are not remembered: the map holds only tenants with work in flight or waiting. */
  private forget(tenant: string, state: TenantState) {
    if (state.running === 0 && state.queue.length === 0) this.tenants.delete(tenant)
  }
}
