/**
 * The usage buffer: counts arrive synchronously from the dispatcher and are coalesced per key and
 * UTC day in memory, then written as one atomic increment per key — which also counts the calls
 * under their (role, day) for the calls-per-day chart, in the same write. Nothing on the tool-call
 * path waits for the table, and a failing write never fails a tool call: it is retried with
 * backoff and, when it still fails, logged with the exact numbers that were lost (error
 * `usage.write_failed`).
 *
 * When flushes happen:
 * - `flush()` — the Lambda edge calls it before an invocation returns, so nothing is left in
 *   memory when the container freezes; it writes every pending key and waits for flushes
 *   already under way.
 * - `flushDelayMs` after the first count enters an empty buffer, and again that long after a
 *   flush that left keys pending (long-running servers);
 * - at once when `maxPendingKeys` keys are pending and no timer or flush is under way (with
 *   automatic flushing off, the Lambda edge's case).
 *
 * The writes a tenant's traffic causes are bounded per flush, not per call (issue 21 D1): one
 * `tool_list` answer is up to 200 counters, and a model paging through a 1,000-operation pack
 * touched 1,000 keys a second — 26.8 ms of the shared thread per call, the store's client signing
 * and sending one UpdateItem per key, in bursts every other tenant waited behind. An automatic
 * flush writes at most `tenantKeysPerFlush` keys of each tenant, the oldest first; the rest stay
 * pending and keep adding up (coalesced, so no count is lost, only written later). A tenant holds
 * at most `tenantPendingKeys` keys pending: counts for a new key past that are dropped and logged
 * with their numbers (`usage.dropped`), as failed writes are.
 */
import { randomBytes } from 'node:crypto'
import type { Clock } from '../runtime/clock'
import { iso } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import type { ToolUsageStore, UsageIncrement, UsageKey } from './ports'
import { utcDay } from './ports'

export interface UsageDelta {
  calls?: number
  /** Of `calls`, how many came from code (never more than `calls`). */
  codeCalls?: number
  discoveryHits?: number
  listedHits?: number
  refusals?: number
}

export interface UsageRecorderOptions {
  store: ToolUsageStore
  clock: Clock
  log: Logger
  /** Delay between the first pending count and the automatic flush (default 1000 ms; 0 = explicit flushes only). */
  flushDelayMs?: number
  /** Flush at once when this many keys are pending and no timer or flush is under way (default 500). */
  maxPendingKeys?: number
  /** Keys of one tenant an automatic flush writes (default 50, the oldest first); the rest wait for the next. */
  tenantKeysPerFlush?: number
  /** Keys of one tenant kept pending (default 5,000): counts for a new key past that are dropped and logged (`usage.dropped`). */
  tenantPendingKeys?: number
  /** Pauses between attempts of a failing write; their count + 1 is the number of attempts (default 50, 200, 800 ms). */
  retryDelaysMs?: number[]
  /** Increments written at the same time during one flush (default 16). */
  writeConcurrency?: number
  sleep?: (ms: number) => Promise<void>
}

export interface FlushReport {
  /** Keys written. */
  written: number
  /** Keys given up on after every attempt failed (their counts are in the error log). */
  failed: number
}

/** A pending key: counts, and the instants as epoch ms (formatted once, when written). */
interface Pending {
  key: UsageKey
  day: string
  family: string
  calls: number
  codeCalls: number
  discoveryHits: number
  listedHits: number
  refusals: number
  lastCallMs: number
  lastDiscoveryMs: number
  lastListedMs: number
}

const NEVER = -Infinity

function incrementOf(p: Pending): UsageIncrement {
  return {
    ...p.key,
    // one per flush of the key, kept by writeOne's retries: the store adds it once
    flushId: randomBytes(12).toString('base64url'),
    family: p.family,
    day: p.day,
    calls: p.calls,
    discoveryHits: p.discoveryHits,
    listedHits: p.listedHits,
    // in the same UpdateItem as the other counters: no write of their own
    ...(p.codeCalls > 0 ? { codeCalls: p.codeCalls } : {}),
    ...(p.refusals > 0 ? { refusals: p.refusals } : {}),
    ...(p.lastCallMs !== NEVER ? { lastCallAt: iso(p.lastCallMs) } : {}),
    ...(p.lastDiscoveryMs !== NEVER ? { lastDiscoveryAt: iso(p.lastDiscoveryMs) } : {}),
    ...(p.lastListedMs !== NEVER ? { lastListedAt: iso(p.lastListedMs) } : {}),
  }
}

export const USAGE_TENANT_KEYS_PER_FLUSH = 50
export const USAGE_TENANT_PENDING_KEYS = 5_000

/** Counts not kept for one tenant since the last flush (its pending keys were at the cap). */
interface Dropped {
  records: number
  calls: number
  discoveryHits: number
  listedHits: number
  refusals: number
}

export class UsageRecorder {
  private pending = new Map<string, Pending>()
  /** Pending keys per tenant. */
  private readonly tenantKeys = new Map<string, number>()
  private dropped = new Map<string, Dropped>()
  private readonly inFlight = new Set<Promise<FlushReport>>()
  private timer: ReturnType<typeof setTimeout> | undefined
  /** An automatic flush is writing (the next one waits for it, then for the delay). */
  private autoRunning = false
  private readonly flushDelayMs: number
  private readonly maxPendingKeys: number
  private readonly tenantKeysPerFlush: number
  private readonly tenantPendingKeys: number
  /** Increments sent to the store since start, retries included (tests count them). */
  writes = 0
  private readonly retryDelaysMs: number[]
  private readonly writeConcurrency: number
  private readonly sleep: (ms: number) => Promise<void>

  constructor(private readonly opts: UsageRecorderOptions) {
    this.flushDelayMs = opts.flushDelayMs ?? 1000
    this.maxPendingKeys = opts.maxPendingKeys ?? 500
    this.tenantKeysPerFlush = Math.max(1, opts.tenantKeysPerFlush ?? USAGE_TENANT_KEYS_PER_FLUSH)
    this.tenantPendingKeys = Math.max(1, opts.tenantPendingKeys ?? USAGE_TENANT_PENDING_KEYS)
    this.retryDelaysMs = opts.retryDelaysMs ?? [50, 200, 800]
    this.writeConcurrency = Math.max(1, opts.writeConcurrency ?? 16)
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
  }

  /** Adds to a key's pending counts; stamps the matching last-…-at instants with the clock. Never throws. */
  record(key: UsageKey, family: string, delta: UsageDelta): void {
    this.recordEach(key, [key.tool], family, delta)
  }

  /**
   * record() for several tools of one (tenant, project, role) with the same delta: one clock read
   * and one key prefix for all — a tool_list answer is up to 200 names, and an object, a key and
   * a clock read per name was a third of a millisecond of the shared thread per answer.
   * `family` is the family of every tool, or how to find each one's (asked once per pending key).
   */
  recordEach(base: Omit<UsageKey, 'tool'>, tools: readonly string[], family: string | ((tool: string) => string), delta: UsageDelta): void {
    const calls = delta.calls ?? 0
    const discoveryHits = delta.discoveryHits ?? 0
    const listedHits = delta.listedHits ?? 0
    const refusals = delta.refusals ?? 0
    if (calls <= 0 && discoveryHits <= 0 && listedHits <= 0 && refusals <= 0) return
    const codeCalls = Math.min(calls, Math.max(0, delta.codeCalls ?? 0))
    const at = this.opts.clock.now()
    const day = this.dayOf(at)
    const prefix = `${base.tenant}\u0000${base.project}\u0000${base.role}\u0000`
    for (const tool of tools) {
      // a key's calls of two UTC days (a flush across midnight) are two increments: each day's count is exact
      const id = `${prefix}${tool}\u0000${day}`
      let entry = this.pending.get(id)
      if (!entry) {
        const held = this.tenantKeys.get(base.tenant) ?? 0
        if (held >= this.tenantPendingKeys) {
          const d = this.dropped.get(base.tenant) ?? { records: 0, calls: 0, discoveryHits: 0, listedHits: 0, refusals: 0 }
          d.records++
          d.calls += Math.max(0, calls)
          d.discoveryHits += Math.max(0, discoveryHits)
          d.listedHits += Math.max(0, listedHits)
          d.refusals += Math.max(0, refusals)
          this.dropped.set(base.tenant, d)
          continue
        }
        this.tenantKeys.set(base.tenant, held + 1)
        entry = {
          key: { tenant: base.tenant, project: base.project, role: base.role, tool },
          day,
          family: typeof family === 'string' ? family : family(tool),
          calls: 0,
          codeCalls: 0,
          discoveryHits: 0,
          listedHits: 0,
          refusals: 0,
          lastCallMs: NEVER,
          lastDiscoveryMs: NEVER,
          lastListedMs: NEVER,
        }
        this.pending.set(id, entry)
      } else if (typeof family === 'string') entry.family = family
      if (calls > 0) {
        entry.calls += calls
        entry.codeCalls += codeCalls
        if (at > entry.lastCallMs) entry.lastCallMs = at
      }
      if (discoveryHits > 0) {
        entry.discoveryHits += discoveryHits
        if (at > entry.lastDiscoveryMs) entry.lastDiscoveryMs = at
      }
      if (refusals > 0) entry.refusals += refusals
      if (listedHits > 0) {
        entry.listedHits += listedHits
        if (at > entry.lastListedMs) entry.lastListedMs = at
      }
    }
    if (this.pending.size >= this.maxPendingKeys && this.timer === undefined && !this.autoRunning) this.autoFlush()
    else if (!this.autoRunning) this.schedule()
  }

  private schedule() {
    if (this.timer !== undefined || this.flushDelayMs <= 0) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.autoFlush()
    }, this.flushDelayMs)
    this.timer.unref?.()
  }

  /** Writes at most tenantKeysPerFlush keys of each tenant, the oldest first; what is left waits for the next. */
  private autoFlush() {
    if (this.autoRunning) return
    const taken = new Map<string, number>()
    const batch: UsageIncrement[] = []
    for (const [id, p] of this.pending) {
      const n = taken.get(p.key.tenant) ?? 0
      if (n >= this.tenantKeysPerFlush) continue
      taken.set(p.key.tenant, n + 1)
      this.take(id, p)
      batch.push(incrementOf(p))
    }
    this.reportDropped()
    if (!batch.length) return
    this.autoRunning = true
    const run = this.writeAll(batch)
    this.inFlight.add(run)
    void run.finally(() => {
      this.inFlight.delete(run)
      this.autoRunning = false
      if (this.pending.size) this.schedule()
    })
  }

  private take(id: string, p: Pending) {
    this.pending.delete(id)
    const held = (this.tenantKeys.get(p.key.tenant) ?? 1) - 1
    if (held > 0) this.tenantKeys.set(p.key.tenant, held)
    else this.tenantKeys.delete(p.key.tenant)
  }

  private reportDropped() {
    if (!this.dropped.size) return
    for (const [tenant, d] of this.dropped)
      this.opts.log.log('error', 'usage.dropped', { tenant, pendingKeysCap: this.tenantPendingKeys, ...d })
    this.dropped = new Map()
  }

  /** The UTC day of an instant; formatted once per day, not once per call (this is the tool-call path). */
  private dayOf(at: number): string {
    const c = this.dayCache
    if (at >= c.start && at < c.start + 86_400_000) return c.day
    const start = at - (((at % 86_400_000) + 86_400_000) % 86_400_000)
    this.dayCache = { start, day: utcDay(start) }
    return this.dayCache.day
  }
  private dayCache = { start: Number.NaN, day: '' }

  /** Keys (per UTC day of their counts) waiting to be written. */
  get pendingKeys(): number {
    return this.pending.size
  }

  /**
   * Writes everything pending and waits for every flush under way. Resolves (never rejects) once
   * nothing recorded before the call is still in memory.
   */
  async flush(): Promise<FlushReport> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    this.reportDropped()
    if (this.pending.size > 0) {
      const batch = [...this.pending.values()].map(incrementOf)
      this.pending = new Map()
      this.tenantKeys.clear()
      const run = this.writeAll(batch)
      this.inFlight.add(run)
      void run.finally(() => this.inFlight.delete(run))
    }
    const reports = await Promise.all([...this.inFlight])
    return reports.reduce((a, r) => ({ written: a.written + r.written, failed: a.failed + r.failed }), { written: 0, failed: 0 })
  }

  private async writeAll(batch: UsageIncrement[]): Promise<FlushReport> {
    let next = 0
    let written = 0
    let failed = 0
    const worker = async () => {
      while (next < batch.length) {
        const inc = batch[next++]
        if (await this.writeOne(inc)) written++
        else failed++
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.writeConcurrency, batch.length) }, worker))
    return { written, failed }
  }

  private async writeOne(inc: UsageIncrement): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.writes++
        await this.opts.store.increment(inc)
        if (attempt > 0)
          this.opts.log.log('info', 'usage.write_recovered', {
            tenant: inc.tenant,
            project: inc.project,
            role: inc.role,
            tool: inc.tool,
            attempts: attempt + 1,
          })
        return true
      } catch (e) {
        if (attempt >= this.retryDelaysMs.length) {
          this.opts.log.log('error', 'usage.write_failed', { ...inc, attempts: attempt + 1, error: (e as Error).message })
          return false
        }
        const base = this.retryDelaysMs[attempt]
        await this.sleep(base + Math.floor(Math.random() * (base / 2)))
      }
    }
  }
}
