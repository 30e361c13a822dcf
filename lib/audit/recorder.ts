/**
 * Audit entries are handed over synchronously, kept in memory, and written one PutItem each at
 * `flush()`: the Lambda edge flushes after the response has gone and before the invocation ends
 * (as usage counts), a long-running server a short delay after the first pending entry. Nothing a
 * caller waits for depends on the audit table; an entry is never dropped silently: a failing write
 * is retried with backoff and, when every attempt failed, logged whole (`audit.write_failed`, at
 * error level, so the entry is in the logs) and counted (metric AuditWriteFailures).
 *
 * At most `writesInFlight` writes run at once, whatever a flush holds (issue 21 N4): a tenant
 * sending ~200 refused writes a second queued ~50 entries per 250 ms flush, and writing them all at
 * once put ~50 store requests (signing, sending, and under `npm start` the embedded store's own
 * work) on the event loop in one burst, ahead of every other tenant's request — victims' p99 ×12
 * while each attack cost ~2 CPU ms. A few lanes drain the same queue instead, so another request
 * waits behind at most that many writes.
 *
 * Where the store writes batches (`appendMany`: `npm start`'s embedded store, lib/stores/aws/audit-store.ts
 * `batchWrites`), a lane takes up to 25 queued entries to one store request: a refusal flood's
 * entries then cost the process a fifth of what one request each cost, and the event loop a
 * tenth (measured on dynalite: 0.6–1.9 → 0.2–0.4 ms of the process, 0.23–0.58 → 0.03–0.04 ms of
 * the calling thread, per entry). What a batch leaves unwritten is tried again on the same
 * schedule, then logged entry by entry like a failed single write.
 *
 * Refusals and failed writes past a window's first few are counted into one digest entry per
 * kind instead of one entry each (lib/audit/refusal-digest.ts): a refusal costs its sender
 * nothing, and was an entry kept a year.
 */
import { isServerToolsError } from '../errors'
import type { Clock } from '../runtime/clock'
import { iso } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { type Metrics, noopMetrics } from '../runtime/metrics'
import { type AuditEntry, type AuditStore, MAX_AUDIT_BATCH } from './ports'
import { REFUSAL_DIGEST_LIMITS, RefusalDigest, type RefusalDigestLimits } from './refusal-digest'

export type AuditDraft = Omit<AuditEntry, 'id' | 'at' | 'expiresAt'>

export interface AuditRecorderOptions {
  store: AuditStore
  clock: Clock
  log: Logger
  metrics?: Metrics
  /** How long an entry is kept (AUDIT_RETENTION_DAYS; default 365). */
  retentionDays?: number
  /** Delay before an automatic flush (long-running servers; default 250 ms, 0 = explicit flushes only). */
  flushDelayMs?: number
  retryDelaysMs?: number[]
  sleep?: (ms: number) => Promise<void>
  /** Source of the id's random part (tests pass a counter). */
  random?: () => string
  /** Writes (with their retries) running at once (default 4). */
  writesInFlight?: number
  /** Entries one write carries where the store writes batches (`appendMany`; default and most 25). */
  batchSize?: number
  /** How many entries refusals and failed writes may cost a window (lib/audit/refusal-digest.ts). */
  refusals?: RefusalDigestLimits
}

export class AuditRecorder {
  /** Entries waiting for a lane: recorded since the last flush, and flushed but not yet started. */
  private pending: AuditEntry[] = []
  private queued: AuditEntry[] = []
  private lanes = 0
  private givenUp = 0
  private drained: (() => void)[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private windowTimer: ReturnType<typeof setTimeout> | undefined
  private readonly refusals: RefusalDigest
  private readonly retentionSeconds: number
  private readonly retryDelaysMs: number[]
  private readonly sleep: (ms: number) => Promise<void>
  private readonly random: () => string
  private readonly metrics: Metrics
  private readonly writesInFlight: number
  private readonly batchSize: number
  private sequence = 0

  constructor(private readonly opts: AuditRecorderOptions) {
    this.retentionSeconds = Math.round((opts.retentionDays ?? 365) * 86_400)
    this.retryDelaysMs = opts.retryDelaysMs ?? [50, 200, 800]
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
    this.random = opts.random ?? (() => Math.random().toString(36).slice(2, 8).padEnd(6, '0'))
    this.metrics = opts.metrics ?? noopMetrics
    this.writesInFlight = Math.max(1, opts.writesInFlight ?? 4)
    this.batchSize = Math.min(MAX_AUDIT_BATCH, Math.max(1, opts.batchSize ?? MAX_AUDIT_BATCH))
    this.refusals = new RefusalDigest(opts.refusals ?? REFUSAL_DIGEST_LIMITS)
  }

  /**
   * Stamps the entry (time, id, expiry) and queues it; a refusal or failed write past what its
   * window records one by one is counted into its kind's digest instead. Never throws.
   */
  record(draft: AuditDraft): void {
    const now = this.opts.clock.now()
    this.endWindow(now)
    if (draft.outcome !== 'ok' && !this.refusals.admit(draft, now)) {
      this.whenWindowEnds(now)
      return
    }
    this.stamp(draft, now)
  }

  private stamp(draft: AuditDraft, now: number): void {
    const at = iso(now)
    // the sequence keeps one container's entries of the same millisecond in the order they happened
    const seq = (this.sequence++).toString(36).padStart(8, '0')
    this.pending.push({ ...draft, id: `${at}#${seq}${this.random()}`, at, expiresAt: Math.floor(now / 1000) + this.retentionSeconds })
    const delay = this.opts.flushDelayMs ?? 250
    if (this.timer === undefined && delay > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        void this.flush()
      }, delay)
      this.timer.unref?.()
    }
  }

  get pendingEntries(): number {
    return this.pending.length
  }

  /**
   * Queues the digests of a refusal window that has ended by `now` (every one, with `force`), and
   * reports what went past its digests.
   */
  private endWindow(now: number, force = false): void {
    const closed = this.refusals.close(now, force)
    if (!closed) return
    if (this.windowTimer !== undefined) {
      clearTimeout(this.windowTimer)
      this.windowTimer = undefined
    }
    for (const digest of closed.digests) this.stamp(digest, now)
    if (closed.uncounted > 0) {
      const window = { from: iso(closed.startedAt), to: iso(closed.endedAt) }
      this.opts.log.log('warn', 'audit.refusals_uncounted', { refusals: closed.uncounted, ...window, kinds: this.refusals.limits.kinds })
      this.metrics.record('AuditRefusalsUncounted', closed.uncounted, {})
    }
  }

  /**
   * A long-running server writes a window's digests when it ends; a Lambda container (explicit
   * flushes only) at its first flush after that.
   */
  private whenWindowEnds(now: number): void {
    const until = this.refusals.pendingUntil
    if (this.windowTimer !== undefined || until === undefined || (this.opts.flushDelayMs ?? 250) <= 0) return
    this.windowTimer = setTimeout(
      () => {
        this.windowTimer = undefined
        // a timer may run a millisecond before the clock reads the window's end
        void this.flush({ endWindow: true })
      },
      Math.max(0, until - now),
    )
    this.windowTimer.unref?.()
  }

  /**
   * Writes everything pending and waits until no write is queued or running; resolves with the
   * number of entries given up on meanwhile. A refusal window that has ended is written with it;
   * `endWindow` ends the current one too (a server stopping).
   */
  async flush(opts: { endWindow?: boolean } = {}): Promise<number> {
    this.endWindow(this.opts.clock.now(), opts.endWindow)
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    const givenUpBefore = this.givenUp
    if (this.pending.length) {
      this.queued.push(...this.pending)
      this.pending = []
      const writes = this.opts.store.appendMany ? Math.ceil(this.queued.length / this.batchSize) : this.queued.length
      while (this.lanes < this.writesInFlight && this.lanes < writes) void this.lane()
    }
    if (this.lanes > 0) await new Promise<void>((r) => this.drained.push(r))
    return this.givenUp - givenUpBefore
  }

  /** One lane: takes the next queued entry, or the next batch where the store writes batches, until none is left. */
  private async lane(): Promise<void> {
    this.lanes++
    try {
      for (;;) {
        const batch = this.queued.splice(0, this.opts.store.appendMany ? this.batchSize : 1)
        if (batch.length === 0) break
        this.givenUp += batch.length === 1 ? Number(!(await this.writeOne(batch[0]))) : await this.writeMany(batch)
      }
    } finally {
      if (--this.lanes === 0) for (const done of this.drained.splice(0)) done()
    }
  }

  /** A batch through `appendMany`, what the store left unwritten tried again; answers how many were given up on. */
  private async writeMany(entries: AuditEntry[]): Promise<number> {
    let left = entries
    for (let attempt = 0; ; attempt++) {
      let error = 'left unwritten by the store (throttled)'
      try {
        left = await this.opts.store.appendMany!(left)
        if (left.length === 0) return 0
      } catch (e) {
        error = (e as Error).message
      }
      if (attempt >= this.retryDelaysMs.length) {
        for (const entry of left) this.opts.log.log('error', 'audit.write_failed', { entry, attempts: attempt + 1, error })
        this.metrics.record('AuditWriteFailures', left.length, {})
        return left.length
      }
      await this.backoff(attempt)
    }
  }

  /** The wait before retry `attempt + 1`: its delay plus up to half of it again. */
  private backoff(attempt: number): Promise<void> {
    const base = this.retryDelaysMs[attempt]
    return this.sleep(base + Math.floor(Math.random() * (base / 2)))
  }

  private async writeOne(entry: AuditEntry): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.opts.store.append(entry)
        return true
      } catch (e) {
        // an earlier attempt that timed out on our side may have been written: the id is ours alone
        if (attempt > 0 && isServerToolsError(e, 'ALREADY_EXISTS')) return true
        if (attempt >= this.retryDelaysMs.length) {
          this.opts.log.log('error', 'audit.write_failed', { entry, attempts: attempt + 1, error: (e as Error).message })
          this.metrics.record('AuditWriteFailures', 1, {})
          return false
        }
        await this.backoff(attempt)
      }
    }
  }
}
