/**
 * Shared quota counters: one row per (rule, window), holding how much of the window's budget
 * containers have reserved. A container reserves a slice (a lease) and spends it locally, so a
 * call costs a storage request only when its container's slice is spent.
 */

export interface QuotaCounterKey {
  tenant: string
  /** The rule's counter within the tenant: `<layer scope>|<rule id>|<window kind>|<window start>`. */
  counter: string
}

export interface Reservation {
  /** How much of `want` the store granted (0 when the window is spent). */
  granted: number
  /** The window's reserved total after this call. */
  used: number
}

export interface QuotaCounterStore {
  /**
   * Adds up to `want` to the counter, never past `limit`: grants what fits (0 when nothing does).
   * `expiresAt` (epoch seconds) lets the row go once its window is over.
   */
  reserve(key: QuotaCounterKey, want: number, limit: number, expiresAt: number): Promise<Reservation>
  /** Reserved totals of counters (absent = 0): what GET /quotas shows. */
  read(tenant: string, counters: readonly string[]): Promise<Map<string, number>>
}
