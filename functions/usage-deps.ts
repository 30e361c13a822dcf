/**
 * Composition glue between usage insights and the agent surface: what a role's processes are
 * offered, for the discovery funnel (deferredNeverDiscovered, primaryNeverCalled) and the
 * promote/demote recommendations.
 *
 * A role is a recipe name (spec §14.4). Its surface is what a process spawned from that recipe
 * NOW would see, classified as in a fresh turn (no activations): the spawn and the turn run on a
 * scratch in-memory process store that is dropped after the read, so insights never write a
 * process, and the live cascade (recipe, engine, labels, tool flags) is what is judged.
 */
import { isServerToolsError } from '../lib/errors'
import type { SurfaceDocuments } from '../lib/recipes/catalog'
import { DOC_NAME_PATTERN } from '../lib/recipes/documents'
import { ProcessService } from '../lib/recipes/spawn'
import type { Clock } from '../lib/runtime/clock'
import type { Logger } from '../lib/runtime/logger'
import { silentLogger } from '../lib/runtime/logger'
import { MemoryProcessStore } from '../lib/stores/memory/process-store'
import { familyOf } from '../lib/surface/families'
import type { ObservedLimits } from '../lib/surface/limits'
import { SurfaceService, type SurfaceSettings } from '../lib/surface/surface'
import type { Tool } from '../lib/tools/contracts'
import type { ServerToolService } from '../lib/tools/service'
import type { RoleSurface } from '../lib/usage/insights'
import type { RoleSurfaceLookup } from '../lib/usage/service'

export interface RoleSurfaceOptions {
  tools: ServerToolService
  documents: SurfaceDocuments
  limits: ObservedLimits
  metaTools: readonly Tool[]
  settings: SurfaceSettings
  clock: Clock
  log: Logger
}

export function roleSurfaceLookup(o: RoleSurfaceOptions): RoleSurfaceLookup {
  return async (tenant, project, roles) => {
    const scratch = new MemoryProcessStore()
    let n = 0
    const processes = new ProcessService({ tools: o.tools, documents: o.documents, processes: scratch, clock: o.clock, log: silentLogger, processTtlMs: 60_000, newId: () => `usage-insights-${n++}` })
    const surface = new SurfaceService({ tools: o.tools, documents: o.documents, processes, store: scratch, limits: o.limits, metaTools: o.metaTools, log: silentLogger, clock: o.clock, settings: o.settings })
    const out = new Map<string, RoleSurface>()
    for (const role of roles) {
      if (!DOC_NAME_PATTERN.test(role)) continue // `_unknown` and anything that cannot be a recipe
      try {
        const { process } = await processes.spawn(tenant, project, 'usage-insights', { recipe: role })
        const turn = await (await surface.open({ tenant, project, id: process.id })).turn()
        const primary: string[] = []
        const deferred: string[] = []
        for (const [name, bucket] of turn.bucket) (bucket === 'deferred' ? deferred : primary).push(name)
        out.set(role, { primary, deferred, familyOf })
      } catch (e) {
        // A role whose recipe is gone or broken (or whose budget cannot hold the floor) has no surface to judge.
        if (isServerToolsError(e)) continue
        o.log.log('warn', 'usage.role_surface_failed', { tenant, project, role, error: (e as Error).message })
      }
    }
    return out
  }
}
