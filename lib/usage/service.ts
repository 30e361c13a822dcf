/**
 * The usage module assembled: the buffer, the counting listener the dispatcher calls, the demand
 * reader for the triage, and the insights read. Built once per container by the composition root.
 */
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { UsageCounter } from './counting'
import { DemandReader } from './demand'
import type { RoleInsight, RoleSurface } from './insights'
import { computeInsights, DEFAULT_WINDOW_DAYS, dayWindow } from './insights'
import type { ToolUsageStore } from './ports'
import type { UsageRecorderOptions } from './recorder'
import { UsageRecorder } from './recorder'

/** The surfaces of a project's roles (role = recipe, else engine); roles that resolve to nothing are absent. */
export type RoleSurfaceLookup = (tenant: string, project: string, roles: string[]) => Promise<ReadonlyMap<string, RoleSurface>>

export interface UsageServiceOptions {
  store: ToolUsageStore
  clock: Clock
  log: Logger
  recorder?: Partial<Omit<UsageRecorderOptions, 'store' | 'clock' | 'log'>>
  demandTtlMs?: number
  surfaces?: RoleSurfaceLookup
}

export const MAX_WINDOW_DAYS = 3650

export class UsageService {
  readonly recorder: UsageRecorder
  readonly counter: UsageCounter
  readonly demand: DemandReader

  constructor(private readonly opts: UsageServiceOptions) {
    this.recorder = new UsageRecorder({ ...opts.recorder, store: opts.store, clock: opts.clock, log: opts.log })
    this.counter = new UsageCounter(this.recorder)
    this.demand = new DemandReader({ store: opts.store, clock: opts.clock, log: opts.log, ttlMs: opts.demandTtlMs })
  }

  /** Writes every pending count (the Lambda edge awaits this before an invocation returns). */
  flush() {
    return this.recorder.flush()
  }

  /** Spec §14.4 insights plus the discovery funnel, per role (see insights.ts for shapes and rules). */
  async insights(tenant: string, project: string, opts: { days?: number } = {}): Promise<RoleInsight[]> {
    const days = opts.days ?? DEFAULT_WINDOW_DAYS
    const now = this.opts.clock.now()
    const window = dayWindow(now, days)
    const [records, dayRecords] = await Promise.all([
      this.opts.store.list(tenant, project),
      this.opts.store.listDays(tenant, project, window.from, window.to),
    ])
    if (records.length === 0) return []
    const roles = [...new Set(records.map((r) => r.role))]
    let surfaces: ReadonlyMap<string, RoleSurface> = new Map()
    if (this.opts.surfaces) {
      try {
        surfaces = await this.opts.surfaces(tenant, project, roles)
      } catch (e) {
        // The counters are still worth showing when a recipe no longer resolves.
        this.opts.log.log('warn', 'usage.surface_unavailable', { tenant, project, error: (e as Error).message })
      }
    }
    return computeInsights(records, { now, days, surfaces, dayRecords })
  }
}
