/**
 * Audit entries are handed over synchronously, kept in memory, and written one PutItem each at
 * `flush()`: the Lambda edge flushes after the response has gone and before the invocation ends
 * (as usage counts), a long-running server a short delay after the first pending entry. Nothing a
 * caller waits for depends on the audit table; an entry is never dropped silently: a failing write
 * is retried with backoff and, when every attempt failed, logged whole (`audit.write_failed`, at
 * error level, so the entry is in the logs) and counted (metric AuditWriteFailures).
 */
import { isServerToolsError } from '../errors'
import type { Clock } from '../runtime/clock'
import { iso } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { type Metrics, noopMetrics } from '../runtime/metrics'
import type { AuditEntry, AuditStore } from './ports'

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
}

export class AuditRecorder {
  private pending: AuditEntry[] = []
  private readonly inFlight = new Set<Promise<number>>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly retentionSeconds: number
  private readonly retryDelaysMs: number[]
  private readonly sleep: (ms: number) => Promise<void>
  private readonly random: () => string
  private readonly metrics: Metrics
  private sequence = 0

  constructor(private readonly opts: AuditRecorderOptions) {
    this.retentionSeconds = Math.round((opts.retentionDays ?? 365) * 86_400)
    this.retryDelaysMs = opts.retryDelaysMs ?? [50, 200, 800]
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
    this.random = opts.random ?? (() => Math.random().toString(36).slice(2, 8).padEnd(6, '0'))
    this.metrics = opts.metrics ?? noopMetrics
  }

  /** Stamps the entry (time, id, expiry) and queues it. Never throws. */
  record(draft: AuditDraft): void {
    const now = this.opts.clock.now()
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

  /** Writes everything pending and waits for writes under way; resolves with the number given up on. */
  async flush(): Promise<number> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.pending.length) {
      const batch = this.pending
      this.pending = []
      const run = Promise.all(batch.map((e) => this.writeOne(e))).then((ok) => ok.filter((x) => !x).length)
      this.inFlight.add(run)
      void run.finally(() => this.inFlight.delete(run))
    }
    const failed = await Promise.all([...this.inFlight])
    return failed.reduce((a, b) => a + b, 0)
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
        const base = this.retryDelaysMs[attempt]
        await this.sleep(base + Math.floor(Math.random() * (base / 2)))
      }
    }
  }
}
