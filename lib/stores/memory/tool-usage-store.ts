/** In-process ToolUsageStore with the same promises as the DynamoDB adapter. */
import type { ToolUsageRecord, ToolUsageStore, UsageIncrement } from '../../usage/ports'
import { compareRecords, usageScope, usageSortKey } from '../../usage/ports'

export class MemoryToolUsageStore implements ToolUsageStore {
  /** scope → sort key → row */
  private readonly rows = new Map<string, Map<string, ToolUsageRecord>>()
  /** Backend requests served (increments and reads), so tests can prove coalescing. */
  roundTrips = 0
  /** Per row, the flush ids of its last 4 increments (the DynamoDB adapter's write-id slots). */
  private readonly recentFlushes = new Map<string, string[]>()

  async increment(inc: UsageIncrement): Promise<void> {
    this.roundTrips++
    const scope = usageScope(inc.tenant, inc.project)
    let partition = this.rows.get(scope)
    if (!partition) this.rows.set(scope, (partition = new Map()))
    const key = usageSortKey(inc.role, inc.tool)
    if (inc.flushId !== undefined) {
      const seen = this.recentFlushes.get(`${scope}\u0000${key}`) ?? []
      if (seen.includes(inc.flushId)) return
      this.recentFlushes.set(`${scope}\u0000${key}`, [inc.flushId, ...seen].slice(0, 4))
    }
    const row = partition.get(key) ?? { role: inc.role, tool: inc.tool, family: inc.family, calls: 0, discoveryHits: 0, listedHits: 0 }
    row.family = inc.family
    row.calls += inc.calls
    row.discoveryHits += inc.discoveryHits
    row.listedHits += inc.listedHits
    if (inc.lastCallAt !== undefined) row.lastCallAt = inc.lastCallAt
    if (inc.lastDiscoveryAt !== undefined) row.lastDiscoveryAt = inc.lastDiscoveryAt
    if (inc.lastListedAt !== undefined) row.lastListedAt = inc.lastListedAt
    partition.set(key, row)
  }

  async list(tenant: string, project: string, role?: string): Promise<ToolUsageRecord[]> {
    this.roundTrips++
    const partition = this.rows.get(usageScope(tenant, project))
    if (!partition) return []
    const out: ToolUsageRecord[] = []
    for (const row of partition.values()) if (role === undefined || row.role === role) out.push({ ...row })
    return out.sort(compareRecords)
  }
}
