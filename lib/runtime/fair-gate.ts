/**
 * A fair share of the main thread between tenants (issue 21). One event loop serves every
 * tenant and a request that runs cannot be paused, so the lever is when a tenant's next request
 * starts. A tenant alone is never held, and neither is a client that calls one at a time (none of
 * its requests arrived while another of its own was in flight or waiting, in the last
 * `presenceMs`): holding it would cost it latency and give nobody anything.
 *
 * Two decisions, on two signals:
 *  - `held` rests on what the gate counts itself, nothing estimated: a request that arrives while
 *    its tenant already has `d - 1` others in flight or waiting (`d` its demand; a tenant's demand
 *    is the most any of its requests arrived with in the last `presenceMs`) waits while a lighter
 *    tenant — one of smaller demand, in flight now or within the last `maxHoldMs` — has a request
 *    in flight; it starts in that tenant's gaps, and its tenant keeps one request in flight, one
 *    more each `maxHoldMs`. A client calling one at a time (demand 1) is never held, and beside a
 *    flood it has at most the flood's one request running beside each of its own — also when the
 *    flood's connections happen to leave nothing of it in flight for a moment.
 *    (An earlier version estimated each tenant's busy ms per ms in flight from the intervals only
 *    its requests were in flight; a victim calling back to back is never alone while a flood
 *    runs, the estimates blurred together and the flood was rarely held: docs/decisions.md.)
 *  - `limited`, between tenants that both send many requests at once: the main thread's busy
 *    time (a meter port; `performance.eventLoopUtilization`, ~0.1 µs a read) is read at each
 *    admission and release and the time since the last reading is split equally between the
 *    requests in flight over it (`load`, how much of the server's concurrency a tenant holds
 *    while the thread is busy; it decays with a half-life, `halfLifeMs`, and reads as a share of
 *    the thread). Present tenants (a request in flight or waiting, or one ended within
 *    `presenceMs`) share the thread equally; while fewer than two are present, or they use less
 *    than `busyFloor` of it together, everyone is `free` (and nobody is held). A tenant whose load
 *    is over its share is `limited`: one request in flight, one more each `maxHoldMs` its requests
 *    stay in flight (so requests that wait on a worker or an upstream are paced, never stopped);
 *    it stays limited until under `RELEASE_BELOW` of its share, so it does not flip and start its
 *    whole queue at each flip. A free tenant has at most `sharedInFlight` in flight while another
 *    is present: a burst from a tenant not charged yet starts that many.
 *
 * Waiting is bounded: at most `tenantQueue` requests of one tenant (beyond: RATE_LIMITED) and
 * `queue` in all (beyond: OVERLOADED) wait, each at most `maxWaitMs` (then OVERLOADED); a
 * tenant's requests start in the order they came, the least-charged tenant's first, and a
 * cancelled wait (the client went away) gives its place up at once.
 */
import { ServerToolsError } from '../errors'

/** Where the gate reads time and sets its timers (system timers in the composition root, a manual one in tests). */
export interface GateClock {
  /** Milliseconds, monotonic. */
  now(): number
  /** Calls `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void
}

/** The main thread's busy time so far, in ms (only differences are used). */
export interface BusyMeter {
  busyMs(): number
}

export interface FairGateLimits {
  /** Half-life of a tenant's charges: how long its past use keeps counting. */
  halfLifeMs: number
  /** How long a tenant counts as present after its last request ended. */
  presenceMs: number
  /** Below this share of the thread used by the present tenants together, nobody is limited. */
  busyFloor: number
  /** Requests one free tenant may have in flight while another tenant is present. */
  sharedInFlight: number
  /** The longest a held request waits behind lighter tenants' requests; also how far apart a limited or held tenant's requests start while its others are in flight. */
  maxHoldMs: number
  /** Requests of one tenant waiting at once. */
  tenantQueue: number
  /** Requests waiting at once across tenants. */
  queue: number
  /** The longest a request waits; past it, OVERLOADED. */
  maxWaitMs: number
}

export const FAIR_GATE_DEFAULTS: FairGateLimits = {
  halfLifeMs: 1_000,
  presenceMs: 1_000,
  busyFloor: 0.05,
  sharedInFlight: 16,
  maxHoldMs: 200,
  tenantQueue: 256,
  queue: 4_096,
  maxWaitMs: 10_000,
}

/** A tenant's standing: free (under its share), limited (one request at a time), held (its concurrent requests behind lighter tenants' too). */
export type GateMode = 'free' | 'limited' | 'held'

/** Ends an admitted request's place; call it once, when the request's work is done (further calls do nothing). */
export type Release = () => void

/** A request that waits: `admitted` gives its release, or undefined once `cancel` was called. */
export interface Waiting {
  readonly admitted: Promise<Release | undefined>
  cancel(): void
}

export interface GateCounts {
  /** Requests started as they came. */
  atOnce: number
  /** Requests started after waiting. */
  waited: number
  /** Requests refused (a full queue, a wait past maxWaitMs). */
  refused: number
  /** Slices of its requests paused behind a lighter tenant's request (see `pause`). */
  paused: number
}

export interface GateTenantView {
  tenant: string
  mode: GateMode
  inFlight: number
  waiting: number
  /** Share of the main thread lately (0–1), split per request in flight. */
  load: number
  /** The most requests of it in flight and waiting at one of its arrivals in the last `presenceMs`. */
  demand: number
  counts: GateCounts
}

interface Waiter {
  since: number
  /** Requests of its tenant in flight or waiting when it arrived, itself included: over 1, it may be held. */
  demand: number
  grant: (release: Release) => void
  cancelTimer: () => void
}

interface TenantState {
  name: string
  inFlight: number
  queue: Waiter[]
  /** Busy ms charged per request in flight, decayed to `chargedAt`. */
  load: number
  chargedAt: number
  /** The most requests of it in flight and waiting at an arrival within `presenceMs` (that one included), and when. */
  demand: number
  demandAt: number
  /** Whether it was last found over its share (see `mode`). */
  limited: boolean
  /** When a request of the tenant last came or ended. */
  seenAt: number
  /** When a request of the tenant last started. */
  startedAt: number
  /** Wall ms a request of the tenant took, smoothed (for Retry-After). */
  wallMs: number
  counts: GateCounts
}

interface Present {
  count: number
  load: number
}

const LN2 = Math.LN2
/** A limited tenant is free again under this part of its share. */
const RELEASE_BELOW = 0.8
const MAX_RETRY_AFTER_S = 30
/** Tenants remembered before a request with nothing else in flight forgets the absent ones. */
const FORGET_ABOVE = 64

export class FairGate {
  private readonly tenants = new Map<string, TenantState>()
  /** Tenants with requests in flight. */
  private readonly running = new Set<TenantState>()
  private inFlight = 0
  private waiting = 0
  private lastBusy: number
  private holdTimer?: { at: number; cancel: () => void }
  /** Requests paused between two slices of their work (see `pause`). */
  private readonly paused = new Set<{ state: TenantState; resume: () => void }>()

  constructor(
    private readonly clock: GateClock,
    private readonly meter: BusyMeter,
    readonly limits: FairGateLimits = FAIR_GATE_DEFAULTS,
  ) {
    for (const [name, v] of Object.entries(limits))
      if (!(typeof v === 'number' && v > 0 && Number.isFinite(v)))
        throw new RangeError(`fair gate limit ${name} must be a positive number, got ${v}`)
    this.lastBusy = meter.busyMs()
  }

  /**
   * A place for one request of `tenant`: its release at once when it may start now, else a
   * waiting ticket. Throws RATE_LIMITED / OVERLOADED when the waiting room is full.
   */
  enter(tenant: string): Release | Waiting {
    const now = this.clock.now()
    this.account(now)
    // the common case on a quiet server, and every request on Lambda: nothing else in flight
    if (this.inFlight === 0 && this.waiting === 0) {
      if (this.tenants.size > FORGET_ABOVE) this.present(now)
      const state = this.tenants.get(tenant) ?? this.state(tenant, now)
      state.seenAt = now
      this.arrive(state, 1, now)
      state.counts.atOnce++
      return this.start(state, now)
    }
    const state = this.tenants.get(tenant) ?? this.state(tenant, now)
    state.seenAt = now
    const demand = this.arrive(state, state.inFlight + state.queue.length + 1, now)
    if (state.queue.length === 0 && this.mayStart(state, now, demand, now)) {
      state.counts.atOnce++
      return this.start(state, now)
    }
    return this.wait(state, now, demand)
  }

  /**
   * Where a long request of `tenant` waits between two slices of its work (lib/runtime/turns.ts):
   * undefined to go on at once; while its tenant would be held (see `mayStart`: demand over a
   * lighter tenant's, the thread over `busyFloor`) and that lighter tenant has a request in
   * flight, a promise that resolves when none has, at most `maxHoldMs` later — to true when it
   * waited all of `maxHoldMs` (the lighter request waits on something slow, not on the thread: the
   * caller should stop pausing that request). A request admitted in a lighter tenant's gap then
   * runs one slice beside each of that tenant's requests, not all of its work.
   */
  pause(tenant: string): Promise<boolean> | undefined {
    const state = this.tenants.get(tenant)
    if (!state || state.inFlight === 0 || state.demand <= 1 || !this.lighterRunning(state)) return undefined
    const now = this.clock.now()
    this.account(now)
    const present = this.present(now)
    if (present.count < 2 || present.load < this.limits.busyFloor) return undefined
    state.counts.paused++
    return new Promise<boolean>((resolve) => {
      const end = (full: boolean) => {
        if (!this.paused.delete(entry)) return
        cancel()
        resolve(full)
      }
      const entry = { state, resume: () => end(false) }
      const cancel = this.clock.after(this.limits.maxHoldMs, () => end(true))
      this.paused.add(entry)
    })
  }

  /** Every present tenant's standing now (for tests and the docs' figures). */
  view(): GateTenantView[] {
    const now = this.clock.now()
    this.account(now)
    const present = this.present(now)
    return [...this.tenants.values()].map((s) => ({
      tenant: s.name,
      mode: this.peekMode(s, now, present),
      inFlight: s.inFlight,
      waiting: s.queue.length,
      load: this.share(s.load, s, now),
      demand: s.demand,
      counts: { ...s.counts },
    }))
  }

  private start(state: TenantState, now: number): Release {
    state.startedAt = now
    if (state.inFlight++ === 0) this.running.add(state)
    this.inFlight++
    let done = false
    return () => {
      if (done) return
      done = true
      const end = this.clock.now()
      this.account(end)
      state.wallMs = state.wallMs * 0.8 + (end - now) * 0.2
      state.seenAt = end
      this.inFlight--
      if (--state.inFlight === 0) this.running.delete(state)
      this.dispatch(end)
    }
  }

  private wait(state: TenantState, now: number, demand: number): Waiting {
    const { tenantQueue, queue, maxWaitMs } = this.limits
    if (state.queue.length >= tenantQueue) {
      state.counts.refused++
      throw new ServerToolsError(
        'RATE_LIMITED',
        `this tenant already has ${state.queue.length} requests waiting (at most ${tenantQueue}) for its share of the server. Retry later.`,
        { retryAfterSeconds: this.retryAfter(state), limit: 'tenantQueue' },
      )
    }
    if (this.waiting >= queue) {
      state.counts.refused++
      throw new ServerToolsError(
        'OVERLOADED',
        `${this.waiting} requests are waiting for their share of the server (at most ${queue}). Retry later.`,
        {
          retryAfterSeconds: this.retryAfter(state),
          limit: 'queue',
        },
      )
    }
    let cancel!: () => void
    const admitted = new Promise<Release | undefined>((resolve, reject) => {
      const waiter: Waiter = {
        since: now,
        demand,
        grant: (release) => {
          waiter.cancelTimer()
          resolve(release)
        },
        cancelTimer: () => {},
      }
      waiter.cancelTimer = this.clock.after(maxWaitMs, () => {
        if (!this.unqueue(state, waiter)) return
        state.counts.refused++
        reject(
          new ServerToolsError(
            'OVERLOADED',
            `this request waited ${maxWaitMs} ms for its tenant's share of the server (at most ${maxWaitMs}). Retry later.`,
            { retryAfterSeconds: this.retryAfter(state), limit: 'maxWaitMs' },
          ),
        )
      })
      cancel = () => {
        if (!this.unqueue(state, waiter)) return
        waiter.cancelTimer()
        resolve(undefined)
      }
      state.queue.push(waiter)
      this.waiting++
    })
    this.armHoldTimer(now)
    return { admitted, cancel }
  }

  /** Resumes the paused slices no lighter tenant's request holds any more, then starts the waiting requests that may start now: the least-charged tenant's first, each tenant's in order. */
  private dispatch(now: number) {
    for (const p of this.paused) if (!this.lighterRunning(p.state)) p.resume()
    if (this.waiting === 0) return
    const waiting = [...this.tenants.values()]
      .filter((s) => s.queue.length > 0)
      .sort((a, b) => this.share(a.load, a, now) - this.share(b.load, b, now))
    for (const state of waiting) {
      while (state.queue.length > 0 && this.mayStart(state, now, state.queue[0].demand, state.queue[0].since)) {
        const waiter = state.queue.shift()!
        this.waiting--
        state.counts.waited++
        waiter.grant(this.start(state, now))
      }
    }
    this.armHoldTimer(now)
  }

  private mayStart(state: TenantState, now: number, demand: number, since: number): boolean {
    if (this.running.size === 0) return true
    const present = this.present(now)
    if (present.count < 2) return true
    const mode = this.mode(state, now, present)
    const held = demand > 1 && present.load >= this.limits.busyFloor && this.lighter(state, demand, now)
    if (mode === 'free' && !held) return state.inFlight < this.limits.sharedInFlight
    // Busy time is charged to whatever is in flight, so a tenant whose requests wait on a worker,
    // a store or an upstream (a stalled script, a slow REST tool) is charged the loop's other work
    // too: its next request starts at most `maxHoldMs` after its previous one started, so its
    // concurrency is paced, never stopped (a flood still gains only one request in flight per
    // `maxHoldMs`, and waits past `maxWaitMs` are refused).
    if (state.inFlight > 0) return now - Math.max(since, state.startedAt) >= this.limits.maxHoldMs
    if (!held || now - since >= this.limits.maxHoldMs) return true
    return !this.lighterRunning(state, demand)
  }

  /** Whether a tenant of smaller demand than `demand` has a request in flight. */
  private lighterRunning(state: TenantState, demand = state.demand): boolean {
    for (const other of this.running) if (other !== state && other.demand < demand) return true
    return false
  }

  /** Records an arrival with `count` requests of its tenant in flight and waiting; the tenant's demand now. */
  private arrive(state: TenantState, count: number, now: number): number {
    if (count >= state.demand || now - state.demandAt > this.limits.presenceMs) {
      state.demand = count
      state.demandAt = now
    }
    return state.demand
  }

  /** Whether a tenant whose requests arrive with less demand than `demand` is active: in flight, or seen within `maxHoldMs`. */
  private lighter(state: TenantState, demand: number, now: number): boolean {
    for (const other of this.tenants.values())
      if (other !== state && other.demand < demand && (other.inFlight > 0 || now - other.seenAt <= this.limits.maxHoldMs)) return true
    return false
  }

  private mode(state: TenantState, now: number, present: Present): Exclude<GateMode, 'held'> {
    if (present.count < 2 || present.load < this.limits.busyFloor) {
      state.limited = false
      return 'free'
    }
    const load = this.share(state.load, state, now)
    if (load <= (present.load / present.count) * (state.limited ? RELEASE_BELOW : 1)) {
      state.limited = false
      return 'free'
    }
    state.limited = true
    return 'limited'
  }

  /** The mode without moving the limited flag: looking must not change what the gate decides next. */
  private peekMode(state: TenantState, now: number, present: Present): GateMode {
    const limited = state.limited
    const mode = this.mode(state, now, present)
    state.limited = limited
    if (present.count >= 2 && present.load >= this.limits.busyFloor && this.lighter(state, Math.max(2, state.demand), now)) return 'held'
    return mode
  }

  /** A decayed charge of `state` read as a share of the thread (steady state: charge = rate × halfLife / ln 2). */
  private share(charge: number, state: TenantState, now: number): number {
    return (charge * this.decay(state, now) * LN2) / this.limits.halfLifeMs
  }

  private decay(state: TenantState, now: number): number {
    const dt = now - state.chargedAt
    return dt > 0 ? 2 ** (-dt / this.limits.halfLifeMs) : 1
  }

  /** Charges the busy time since the last reading to the requests in flight over it (see the module comment). */
  private account(now: number) {
    const busy = this.meter.busyMs()
    const spent = busy - this.lastBusy
    this.lastBusy = busy
    if (spent <= 0 || this.inFlight === 0) return
    for (const s of this.running) this.charge(s, (spent * s.inFlight) / this.inFlight, now)
  }

  private charge(s: TenantState, load: number, now: number) {
    const keep = this.decay(s, now)
    s.load = s.load * keep + load
    s.chargedAt = now
  }

  /** The tenants present now and their shares together; forgets those gone for longer than `presenceMs`. */
  private present(now: number): Present {
    const p: Present = { count: 0, load: 0 }
    for (const s of this.tenants.values()) {
      if (s.inFlight > 0 || s.queue.length > 0 || now - s.seenAt <= this.limits.presenceMs) {
        p.count++
        p.load += this.share(s.load, s, now)
      } else this.tenants.delete(s.name)
    }
    return p
  }

  private state(tenant: string, now: number): TenantState {
    const s: TenantState = {
      name: tenant,
      inFlight: 0,
      queue: [],
      load: 0,
      chargedAt: now,
      demand: 1,
      demandAt: now,
      limited: false,
      seenAt: now,
      startedAt: Number.NEGATIVE_INFINITY,
      wallMs: 0,
      counts: { atOnce: 0, waited: 0, refused: 0, paused: 0 },
    }
    this.tenants.set(tenant, s)
    return s
  }

  private unqueue(state: TenantState, waiter: Waiter): boolean {
    const i = state.queue.indexOf(waiter)
    if (i < 0) return false
    state.queue.splice(i, 1)
    this.waiting--
    // the request behind it may start now
    this.dispatch(this.clock.now())
    return true
  }

  /** Wakes the gate when the first held or paced request has waited `maxHoldMs` (see `mayStart`). */
  private armHoldTimer(now: number) {
    let first = Number.POSITIVE_INFINITY
    for (const s of this.tenants.values())
      if (s.queue.length > 0) first = Math.min(first, s.inFlight > 0 ? Math.max(s.queue[0].since, s.startedAt) : s.queue[0].since)
    const at = first + this.limits.maxHoldMs
    if (this.holdTimer?.at === at) return
    this.holdTimer?.cancel()
    this.holdTimer = undefined
    if (!Number.isFinite(at)) return
    const cancel = this.clock.after(Math.max(0, at - now), () => {
      this.holdTimer = undefined
      const t = this.clock.now()
      this.account(t)
      this.dispatch(t)
    })
    this.holdTimer = { at, cancel }
  }

  /** Seconds until the tenant's waiting requests are likely through (1–30). */
  private retryAfter(state: TenantState): number {
    const s = Math.ceil(((state.queue.length + 1) * Math.max(state.wallMs, 1)) / 1000)
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, s))
  }
}
