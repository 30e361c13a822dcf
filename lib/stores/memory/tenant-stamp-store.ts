import type { TenantStamp, TenantStampStore } from '../../documents/stamped-cache'

/** In-process tenant stamps (lib/documents/stamped-cache.ts): unit tests, and containers modelled in one process. */
export class MemoryTenantStampStore implements TenantStampStore {
  private readonly stamps = new Map<string, TenantStamp>()
  /** Requests served, as the DynamoDB adapter would have sent them. */
  requests = 0

  async read(tenant: string): Promise<TenantStamp> {
    this.requests++
    return copy(this.stamps.get(tenant))
  }

  async begin(tenant: string, writeId: string, now: number): Promise<TenantStamp> {
    this.requests++
    const s = copy(this.stamps.get(tenant))
    s.generation++
    s.writing[writeId] = now
    this.stamps.set(tenant, s)
    return copy(s)
  }

  async end(tenant: string, writeIds: string[]): Promise<void> {
    this.requests++
    const s = copy(this.stamps.get(tenant))
    s.generation++
    for (const id of writeIds) delete s.writing[id]
    this.stamps.set(tenant, s)
  }
}

const copy = (s: TenantStamp | undefined): TenantStamp => ({ generation: s?.generation ?? 0, writing: { ...s?.writing } })
