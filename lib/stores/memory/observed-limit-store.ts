/** In-process ObservedLimitStore: keeps the minimum live limit per (tenant, endpoint), like the DynamoDB adapter. */
import type { LearnedLimit, ObservedLimitRecord, ObservedLimitStore } from '../../surface/limits'
import { endpointKey } from '../../surface/limits'

export class MemoryObservedLimitStore implements ObservedLimitStore {
  private readonly items = new Map<string, ObservedLimitRecord>()
  /** Round trips served (getMany must be one per chain). */
  roundTrips = 0

  async lower(record: ObservedLimitRecord, nowSec: number) {
    this.roundTrips++
    const key = `${record.tenant}\u0000${endpointKey(record.endpoint)}`
    const current = this.items.get(key)
    const live = current && current.expiresAt > nowSec && current.catalog === record.catalog
    if (live && current.maxTools <= record.maxTools) return { maxTools: current.maxTools, lowered: false }
    this.items.set(key, { ...record, endpoint: endpointKey(record.endpoint) })
    return { maxTools: record.maxTools, lowered: true }
  }

  async getMany(tenant: string, endpoints: readonly string[], nowSec: number) {
    this.roundTrips++
    const out = new Map<string, LearnedLimit>()
    for (const e of endpoints) {
      const r = this.items.get(`${tenant}\u0000${endpointKey(e)}`)
      if (r && r.expiresAt > nowSec) out.set(e, { maxTools: r.maxTools, catalog: r.catalog })
    }
    return out
  }
}
