/**
 * Measured demand for the budget triage (spec §14.2: "measured demand only within a class"):
 * per tool, calls + discoveryHits in one role (only positive ones; the triage sums them per family
 * or split-off group, so a family's demand is the sum of its tools' positive demand). One usage read per
 * (tenant, project, role) at most every `ttlMs` per container, so a manifest stays one read.
 * A failed read is logged and answers "no demand" (the triage then falls back to family names);
 * it is not remembered, so the next manifest tries again.
 */
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import type { ToolUsageRecord, ToolUsageStore } from './ports'

/** The memo may be at most this old (the bound: ≤ 5 min). */
export const MAX_DEMAND_TTL_MS = 5 * 60_000
export const DEFAULT_DEMAND_TTL_MS = 60_000

export const demandOf = (r: Pick<ToolUsageRecord, 'calls' | 'discoveryHits'>) => r.calls + r.discoveryHits

export interface DemandReaderOptions {
  store: ToolUsageStore
  clock: Clock
  log: Logger
  /** Memo lifetime per (tenant, project, role); capped at MAX_DEMAND_TTL_MS. */
  ttlMs?: number
  /** Memo entries kept per container (oldest forgotten first). */
  maxEntries?: number
}

/** Tool name → demand (> 0); an absent name has none. */
export type ToolDemand = ReadonlyMap<string, number>

export class DemandReader {
  private readonly memo = new Map<string, { at: number; value: Promise<ToolDemand> }>()
  private readonly ttlMs: number
  private readonly maxEntries: number
  /** Store reads issued (tests prove the memo). */
  reads = 0

  constructor(private readonly opts: DemandReaderOptions) {
    this.ttlMs = Math.min(Math.max(0, opts.ttlMs ?? DEFAULT_DEMAND_TTL_MS), MAX_DEMAND_TTL_MS)
    this.maxEntries = opts.maxEntries ?? 10_000
  }

  /** Demand per tool of one role; tools without demand are absent (read them as 0). */
  toolDemand(tenant: string, project: string, role: string): Promise<ToolDemand> {
    const key = `${tenant}\u0000${project}\u0000${role}`
    const now = this.opts.clock.now()
    const hit = this.memo.get(key)
    if (hit && now - hit.at < this.ttlMs) return hit.value
    if (hit) this.memo.delete(key)
    if (this.memo.size >= this.maxEntries) this.memo.delete(this.memo.keys().next().value as string)
    this.reads++
    const value = this.opts.store.list(tenant, project, role).then(
      (rows) => {
        const out = new Map<string, number>()
        for (const r of rows) {
          const d = demandOf(r)
          if (d > 0) out.set(r.tool, d)
        }
        return out as ToolDemand
      },
      (e: unknown) => {
        this.memo.delete(key)
        this.opts.log.log('warn', 'usage.demand_read_failed', { tenant, project, role, error: (e as Error).message })
        return new Map() as ToolDemand
      },
    )
    this.memo.set(key, { at: now, value })
    return value
  }
}

/** Demand summed per family (the unit the triage demotes), from a per-tool map. */
export function familyDemand(demand: ToolDemand, familyOf: (name: string) => string): Map<string, number> {
  const out = new Map<string, number>()
  for (const [tool, d] of demand) if (d > 0) out.set(familyOf(tool), (out.get(familyOf(tool)) ?? 0) + d)
  return out
}
