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
  private readonly byTenant = new Map<string, AuditEntry[]>()
  /** Writes and reads sent (the bench counts storage requests). */
  requests = 0

  async append(entry: AuditEntry): Promise<void> {
    this.requests++
    const list = this.byTenant.get(entry.tenant) ?? []
    if (list.some((e) => e.id === entry.id)) throw new ServerToolsError('ALREADY_EXISTS', `audit entry ${entry.id} exists`)
    list.push(structuredClone(entry))
    list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    this.byTenant.set(entry.tenant, list)
  }

  async query(tenant: string, filter: AuditFilter, page: { limit: number; cursor?: string }, nowSeconds: number): Promise<AuditPage> {
    this.requests++
    const before = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
    const matching = (this.byTenant.get(tenant) ?? [])
      .filter((e) => e.expiresAt > nowSeconds)
      .filter((e) => (filter.from === undefined || e.at >= filter.from) && (filter.to === undefined || e.at <= filter.to))
      .filter((e) => before === undefined || e.id < before)
      .filter((e) => matchesFilter(e, filter))
      .reverse()
    const entries = matching.slice(0, page.limit).map((e) => structuredClone(e))
    return { entries, ...(matching.length > page.limit ? { next: encodeCursor(entries[entries.length - 1].id) } : {}) }
  }
}
