/**
 * The usage port (spec §14.4): cross-session demand per (tenant, project, role, tool).
 *
 * Counters only ever grow (atomic adds); there is no retention (spec §14.4 waives it: the table
 * is small — roles × tools per project — and the numbers are the project's history). Instants are
 * ISO-8601 strings so they sort as text and read the same in DynamoDB and in the API.
 *
 * Beside the totals, calls per (role, UTC day) — read as one record each, not per tool, so a day
 * costs a project one row per active role — kept USAGE_DAY_RETENTION_DAYS days (beyond the spec:
 * the console's calls-per-day chart). They are written by the same increment as the totals: one
 * write per key and flush, however many days a store keeps (docs/decisions.md, usage writes).
 */

/** The role a process counts under: its recipe name, else its engine name, else this. */
export const UNKNOWN_ROLE = '_unknown'

export interface UsageKey {
  tenant: string
  project: string
  role: string
  tool: string
}

/** What one flush adds to one key. Zero deltas are allowed (a timestamp-only touch). */
export interface UsageIncrement extends UsageKey {
  /** The tool's family (stored beside the counters so insights need no tool lookup). */
  family: string
  calls: number
  discoveryHits: number
  listedHits: number
  /** Of `calls`, those a code-mode script made (origin `code`); absent = 0. */
  codeCalls?: number
  /** Calls refused before they ran (a quota, the sandbox's capacity); absent = 0. */
  refusals?: number
  /** `YYYY-MM-DD` (UTC) the calls were made: the store also counts `calls` under (role, day). */
  day: string
  /** ISO-8601; set when `calls` > 0. */
  lastCallAt?: string
  /** ISO-8601; set when `discoveryHits` > 0. */
  lastDiscoveryAt?: string
  /** ISO-8601; set when `listedHits` > 0. */
  lastListedAt?: string
  /**
   * Chosen by the writer once per flush of this key and kept across its retries: a store that
   * sees the same id again (an attempt applied whose answer was lost) does not add it twice.
   */
  flushId?: string
}

/** Day counts are kept this long; the chart's window is at most this. */
export const USAGE_DAY_RETENTION_DAYS = 366

export interface UsageDayRecord {
  role: string
  day: string
  calls: number
}

/** `YYYY-MM-DD` (UTC) of an epoch-ms instant. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** Epoch seconds after which a day row may be deleted. */
export const dayExpiry = (day: string) => Math.floor(Date.parse(`${day}T00:00:00.000Z`) / 1000) + (USAGE_DAY_RETENTION_DAYS + 1) * 86_400

/** One stored row. */
export interface ToolUsageRecord {
  role: string
  tool: string
  family: string
  calls: number
  discoveryHits: number
  listedHits: number
  /** Of `calls`, those made from code (absent on rows written before it was counted: 0). */
  codeCalls?: number
  /** Calls refused before they ran (absent: 0). */
  refusals?: number
  lastCallAt?: string
  lastDiscoveryAt?: string
  lastListedAt?: string
}

export interface ToolUsageStore {
  /**
   * Adds the deltas atomically (concurrent increments of the same key never lose a count) and
   * sets the given timestamps and `family` (last writer wins: writers flush within about a second
   * of the event, so a timestamp is at most that stale); adds `calls` to (role, `day`) as well.
   * Rejects on a backend failure. An increment whose `flushId` the row already holds among its
   * last 4 is not added again.
   */
  increment(inc: UsageIncrement): Promise<void>
  /** Every row of a project (optionally one role), sorted by role then tool. */
  list(tenant: string, project: string, role?: string): Promise<ToolUsageRecord[]>
  /** A project's calls per (role, day) with `from` ≤ day ≤ `to` (`YYYY-MM-DD`), sorted by day then role; kept for the retention. */
  listDays(tenant: string, project: string, from: string, to: string): Promise<UsageDayRecord[]>
}

/** `<tenant>#<project>#day`: the partition of a project's day rows (tenant and project ids hold no '#'). */
export const usageDayScope = (tenant: string, project: string) => `${tenant}#${project}#day`
/** `<day>#<role>`: day first, so a window is one key range. */
export const usageDaySortKey = (day: string, role: string) => `${day}#${role}`

/** `<tenant>#<project>`, the partition of one project's usage. */
export const usageScope = (tenant: string, project: string) => `${tenant}#${project}`
/** `<role>#<tool>`, the sort key inside a project's partition. */
export const usageSortKey = (role: string, tool: string) => `${role}#${tool}`

/** The later of two optional ISO-8601 instants. */
export const laterOf = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined ? a : a >= b ? a : b)

export const compareRecords = (a: ToolUsageRecord, b: ToolUsageRecord) =>
  a.role < b.role ? -1 : a.role > b.role ? 1 : a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0
