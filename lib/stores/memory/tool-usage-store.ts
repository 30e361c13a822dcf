/** In-process ToolUsageStore with the same promises as the DynamoDB adapter. */
import type { ToolUsageRecord, ToolUsageStore, UsageDayRecord, UsageIncrement } from '../../usage/ports'
import { compareRecords, USAGE_DAY_RETENTION_DAYS, usageScope, usageSortKey } from '../../usage/ports'

const DAY_MS = 86_400_000

export class MemoryToolUsageStore implements ToolUsageStore {
  /** scope → sort key → row */
  private readonly rows = new Map<string, Map<string, ToolUsageRecord>>()
  /** scope → `<day>#<role>` → row */
  private readonly days = new Map<string, Map<string, UsageDayRecord>>()
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
    if (inc.codeCalls) row.codeCalls = (row.codeCalls ?? 0) + inc.codeCalls
    if (inc.refusals) row.refusals = (row.refusals ?? 0) + inc.refusals
    if (inc.lastCallAt !== undefined) row.lastCallAt = inc.lastCallAt
    if (inc.lastDiscoveryAt !== undefined) row.lastDiscoveryAt = inc.lastDiscoveryAt
    if (inc.lastListedAt !== undefined) row.lastListedAt = inc.lastListedAt
    partition.set(key, row)
    if (inc.calls > 0) this.addDay(scope, inc.role, inc.day, inc.calls)
  }

  async list(tenant: string, project: string, role?: string): Promise<ToolUsageRecord[]> {
    this.roundTrips++
    const partition = this.rows.get(usageScope(tenant, project))
    if (!partition) return []
    const out: ToolUsageRecord[] = []
    for (const row of partition.values()) if (role === undefined || row.role === role) out.push({ ...row })
    return out.sort(compareRecords)
  }

  private addDay(scope: string, role: string, day: string, calls: number): void {
    let partition = this.days.get(scope)
    if (!partition) this.days.set(scope, (partition = new Map()))
    const key = `${day}#${role}`
    const row = partition.get(key)
    if (row) {
      row.calls += calls
      return
    }
    partition.set(key, { role, day, calls })
    // A new row is the moment to forget the expired ones (DynamoDB's TTL does it there): a
    // project holds at most retention × roles day rows.
    const oldest = new Date(Date.parse(`${day}T00:00:00.000Z`) - USAGE_DAY_RETENTION_DAYS * DAY_MS).toISOString().slice(0, 10)
    for (const [k, r] of partition) if (r.day < oldest) partition.delete(k)
  }

  async listDays(tenant: string, project: string, from: string, to: string): Promise<UsageDayRecord[]> {
    this.roundTrips++
    const partition = this.days.get(usageScope(tenant, project))
    if (!partition) return []
    return [...partition.values()]
      .filter((r) => r.day >= from && r.day <= to)
      .map((r) => ({ ...r }))
      .sort((a, b) => (a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.role < b.role ? -1 : a.role > b.role ? 1 : 0))
  }
}
