/**
 * Tool-usage insights (spec §14.4, GET …/admin/projects/{p}/insights/tool-usage) and the discovery
 * funnel (beyond the spec). Read-only: the numbers are a consequence of agent behaviour.
 *
 * Shape, per role: `{ role, toolCount, calls, codeCalls, refusals, discoveryHits, listedHits, demand,
 * lastActivityAt, tools: [{ toolName, family, calls, codeCalls, refusals, discoveryHits, listedHits, demand, lastCallAt,
 * lastDiscoveryAt, lastListedAt }], describedNeverCalled, deferredNeverDiscovered,
 * primaryNeverCalled, recommendations, callsPerDay: { from, to, counts: [{ day, calls }] } }` with
 * `demand = calls + discoveryHits`; `callsPerDay` covers the last min(days, USAGE_DAY_RETENTION_DAYS)
 * UTC days up to today and lists only days with calls; tools by demand ↓
 * then name, roles by demand ↓ then role; instants ISO-8601 or null; `[]` when nothing was recorded.
 *
 * Recommendation rule (per role, per family; only for roles whose surface is known):
 * - **promote** a family when its deferred tools were, together, described at least
 *   PROMOTE_MIN_DISCOVERIES times AND called at least once: the model keeps paying the
 *   `tool_description` round trip for something it then uses. (Described but never called is not
 *   a reason to promote: the model looked and chose otherwise.)
 * - **demote** a family when it has primary tools for this role, none of them was called in the
 *   window (`days`), and the role made at least DEMOTE_MIN_ROLE_CALLS calls overall — enough
 *   activity that the silence means something. The capability floor and `invoke_tool` are never
 *   recommended for demotion.
 * Sorted promote before demote, then by family.
 */

import { familyOfName } from './counting'
import { demandOf } from './demand'
import type { ToolUsageRecord, UsageDayRecord } from './ports'
import { laterOf, USAGE_DAY_RETENTION_DAYS, utcDay } from './ports'

export const PROMOTE_MIN_DISCOVERIES = 3
export const DEMOTE_MIN_ROLE_CALLS = 20
export const DEFAULT_WINDOW_DAYS = 30
const NEVER_DEMOTED = new Set(['tool_list', 'tool_description', 'invoke_tool'])
const DAY_MS = 24 * 3600_000

/** What a role's processes are offered before any budget: primary tools and deferred (discovery-only) ones. */
export interface RoleSurface {
  primary: string[]
  deferred: string[]
  /** Family per name when the surface knows better than the name (pack sub-tools). */
  familyOf?: (name: string) => string
}

export interface ToolInsight {
  toolName: string
  family: string
  calls: number
  /** Of `calls`, those a code-mode script made. */
  codeCalls: number
  /** Calls refused before they ran (a quota, the sandbox's capacity). */
  refusals: number
  discoveryHits: number
  listedHits: number
  demand: number
  lastCallAt: string | null
  lastDiscoveryAt: string | null
  lastListedAt: string | null
}

export interface Recommendation {
  kind: 'promote' | 'demote'
  family: string
  reason: string
}

export interface RoleInsight {
  role: string
  toolCount: number
  calls: number
  codeCalls: number
  refusals: number
  discoveryHits: number
  listedHits: number
  demand: number
  lastActivityAt: string | null
  tools: ToolInsight[]
  /** Described at least once, never called. */
  describedNeverCalled: string[]
  /** Allowed and deferred for this role, not described in the window; null when the role's surface is unknown. */
  deferredNeverDiscovered: string[] | null
  /** Primary for this role, not called in the window; null when the role's surface is unknown. */
  primaryNeverCalled: string[] | null
  recommendations: Recommendation[]
  /** Calls per UTC day over the window (days without calls left out), from the day counts. */
  callsPerDay: CallsPerDay
}

export interface CallsPerDay {
  /** First and last day of the window, `YYYY-MM-DD`. */
  from: string
  to: string
  counts: { day: string; calls: number }[]
}

/** The chart's window ending on `now`'s UTC day: min(days, retention) days. */
export function dayWindow(now: number, days: number): { from: string; to: string } {
  const span = Math.max(1, Math.min(days, USAGE_DAY_RETENTION_DAYS))
  return { from: utcDay(now - (span - 1) * DAY_MS), to: utcDay(now) }
}

export interface InsightOptions {
  /** Epoch ms of "now" (the window ends here). */
  now: number
  /** The funnel's window in days (default 30). */
  days?: number
  /** The surface of a role, when the role names a recipe (or engine) that still resolves. */
  surfaces?: ReadonlyMap<string, RoleSurface>
  /** Day rows of the window (`dayWindow(now, days)`). */
  dayRecords?: UsageDayRecord[]
}

const byDemandThenName =
  <T>(demand: (x: T) => number, name: (x: T) => string) =>
  (a: T, b: T) =>
    demand(b) - demand(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0)

export function computeInsights(records: ToolUsageRecord[], opts: InsightOptions): RoleInsight[] {
  const days = opts.days ?? DEFAULT_WINDOW_DAYS
  const since = new Date(opts.now - days * DAY_MS).toISOString()
  const window = dayWindow(opts.now, days)
  const countsByRole = new Map<string, { day: string; calls: number }[]>()
  for (const d of opts.dayRecords ?? []) {
    if (d.day < window.from || d.day > window.to || d.calls <= 0) continue
    const list = countsByRole.get(d.role)
    if (list) list.push({ day: d.day, calls: d.calls })
    else countsByRole.set(d.role, [{ day: d.day, calls: d.calls }])
  }
  const byRole = new Map<string, ToolUsageRecord[]>()
  for (const r of records) {
    const list = byRole.get(r.role)
    if (list) list.push(r)
    else byRole.set(r.role, [r])
  }
  const roles: RoleInsight[] = []
  for (const [role, rows] of byRole) {
    const tools: ToolInsight[] = rows.map((r) => ({
      toolName: r.tool,
      family: r.family,
      calls: r.calls,
      codeCalls: r.codeCalls ?? 0,
      refusals: r.refusals ?? 0,
      discoveryHits: r.discoveryHits,
      listedHits: r.listedHits,
      demand: demandOf(r),
      lastCallAt: r.lastCallAt ?? null,
      lastDiscoveryAt: r.lastDiscoveryAt ?? null,
      lastListedAt: r.lastListedAt ?? null,
    }))
    tools.sort(
      byDemandThenName(
        (t) => t.demand,
        (t) => t.toolName,
      ),
    )
    let lastActivity: string | undefined
    for (const r of rows) lastActivity = laterOf(laterOf(lastActivity, r.lastCallAt), r.lastDiscoveryAt)
    const calls = sum(tools, (t) => t.calls)
    const discoveryHits = sum(tools, (t) => t.discoveryHits)
    const byName = new Map(tools.map((t) => [t.toolName, t]))
    const surface = opts.surfaces?.get(role)
    const describedNeverCalled = tools
      .filter((t) => t.discoveryHits > 0 && t.calls === 0)
      .map((t) => t.toolName)
      .sort()
    let deferredNeverDiscovered: string[] | null = null
    let primaryNeverCalled: string[] | null = null
    let recommendations: Recommendation[] = []
    if (surface) {
      const deferred = [...new Set(surface.deferred)].sort()
      const primary = [...new Set(surface.primary)].sort()
      deferredNeverDiscovered = deferred.filter((n) => !((byName.get(n)?.lastDiscoveryAt ?? '') >= since))
      primaryNeverCalled = primary.filter((n) => !((byName.get(n)?.lastCallAt ?? '') >= since))
      recommendations = recommend({
        deferred,
        primary,
        primaryNeverCalled,
        byName,
        roleCalls: calls,
        days,
        familyOf: surface.familyOf ?? ((n) => byName.get(n)?.family ?? familyOfName(n)),
      })
    }
    roles.push({
      role,
      toolCount: tools.length,
      calls,
      codeCalls: sum(tools, (t) => t.codeCalls),
      refusals: sum(tools, (t) => t.refusals),
      discoveryHits,
      listedHits: sum(tools, (t) => t.listedHits),
      demand: calls + discoveryHits,
      lastActivityAt: lastActivity ?? null,
      tools,
      describedNeverCalled,
      deferredNeverDiscovered,
      primaryNeverCalled,
      recommendations,
      callsPerDay: { ...window, counts: (countsByRole.get(role) ?? []).sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0)) },
    })
  }
  return roles.sort(
    byDemandThenName(
      (r) => r.demand,
      (r) => r.role,
    ),
  )
}

function recommend(x: {
  deferred: string[]
  primary: string[]
  primaryNeverCalled: string[]
  byName: Map<string, ToolInsight>
  roleCalls: number
  days: number
  familyOf: (name: string) => string
}): Recommendation[] {
  const out: Recommendation[] = []
  const group = (names: string[]) => {
    const m = new Map<string, string[]>()
    for (const n of names) {
      const f = x.familyOf(n)
      m.set(f, [...(m.get(f) ?? []), n])
    }
    return m
  }
  for (const [family, names] of group(x.deferred)) {
    const described = sum(names, (n) => x.byName.get(n)?.discoveryHits ?? 0)
    const called = sum(names, (n) => x.byName.get(n)?.calls ?? 0)
    if (described >= PROMOTE_MIN_DISCOVERIES && called > 0) {
      out.push({
        kind: 'promote',
        family,
        reason: `deferred, yet described ${times(described)} and called ${times(called)}: each use costs a tool_description round trip`,
      })
    }
  }
  if (x.roleCalls >= DEMOTE_MIN_ROLE_CALLS) {
    const silent = new Set(x.primaryNeverCalled)
    for (const [family, names] of group(x.primary.filter((n) => !NEVER_DEMOTED.has(n)))) {
      if (!names.every((n) => silent.has(n))) continue
      out.push({
        kind: 'demote',
        family,
        reason: `${names.length} primary tool${names.length > 1 ? 's' : ''} (${names.slice(0, 5).join(', ')}${names.length > 5 ? ', …' : ''}) not called in the last ${x.days} days while this role made ${x.roleCalls} calls: ${names.length > 1 ? 'they take' : 'it takes'} manifest slots for nothing`,
      })
    }
  }
  return out.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'promote' ? -1 : 1) : a.family < b.family ? -1 : a.family > b.family ? 1 : 0))
}

const times = (n: number) => (n === 1 ? 'once' : `${n} times`)

function sum<T>(xs: T[], f: (x: T) => number) {
  let s = 0
  for (const x of xs) s += f(x)
  return s
}
