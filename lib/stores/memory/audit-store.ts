import {
  type AuditEntry,
  type AuditFilter,
  type AuditPage,
  type AuditStore,
  decodeCursor,
  encodeCursor,
  matchesFilter,
} from '../../audit/ports'
import { ServerToolsError } from '../../errors'

/** AuditStore in memory: tests, benches. Entries per tenant, kept sorted by id. */
export class MemoryAuditStore implements AuditStore {
  /** Per tenant, sorted by id (appends arrive nearly in order: the insert point is found from the end). */
  private readonly byTenant = new Map<string, { ids: Set<string>; list: AuditEntry[] }>()
  /** Writes and reads sent (the bench counts storage requests). */
  requests = 0

  async append(entry: AuditEntry): Promise<void> {
    this.requests++
    let tenant = this.byTenant.get(entry.tenant)
    if (!tenant) this.byTenant.set(entry.tenant, (tenant = { ids: new Set(), list: [] }))
    if (tenant.ids.has(entry.id)) throw new ServerToolsError('ALREADY_EXISTS', `audit entry ${entry.id} exists`)
    tenant.ids.add(entry.id)
    let at = tenant.list.length
    while (at > 0 && tenant.list[at - 1].id > entry.id) at--
    tenant.list.splice(at, 0, structuredClone(entry))
  }

  async query(tenant: string, filter: AuditFilter, page: { limit: number; cursor?: string }, nowSeconds: number): Promise<AuditPage> {
    this.requests++
    const before = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
    const matching = (this.byTenant.get(tenant)?.list ?? [])
      .filter((e) => e.expiresAt > nowSeconds)
      .filter((e) => (filter.from === undefined || e.at >= filter.from) && (filter.to === undefined || e.at <= filter.to))
      .filter((e) => before === undefined || e.id < before)
      .filter((e) => matchesFilter(e, filter))
      .reverse()
    const entries = matching.slice(0, page.limit).map((e) => structuredClone(e))
    return { entries, ...(matching.length > page.limit ? { next: encodeCursor(entries[entries.length - 1].id) } : {}) }
  }
}
