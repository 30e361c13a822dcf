import type { QuotaCounterKey, QuotaCounterStore, Reservation } from '../../quotas/ports'

/** Quota counters in one process (tests, `npm start` without emulators). */
export class MemoryQuotaCounterStore implements QuotaCounterStore {
  private readonly rows = new Map<string, number>()
  /** Reservations asked for: what lease tests count. */
  reservations = 0

  async reserve(key: QuotaCounterKey, want: number, limit: number): Promise<Reservation> {
    this.reservations++
    const id = `${key.tenant}\u0000${key.counter}`
    const used = this.rows.get(id) ?? 0
    const granted = Math.max(0, Math.min(want, limit - used))
    this.rows.set(id, used + granted)
    return { granted, used: used + granted }
  }

  async read(tenant: string, counters: readonly string[]) {
    const out = new Map<string, number>()
    for (const c of counters) {
      const v = this.rows.get(`${tenant}\u0000${c}`)
      if (v !== undefined) out.set(c, v)
    }
    return out
  }
}
