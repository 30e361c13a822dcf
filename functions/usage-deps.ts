/**
 * Composition glue between usage insights and the agent surface: what a role's processes are
 * offered, for the discovery funnel (deferredNeverDiscovered, primaryNeverCalled) and the
 * promote/demote recommendations.
 *
 * A role is a recipe name (spec §14.4). Its surface is what a process spawned from that recipe
 * NOW would see, classified as in a fresh turn (no activations): the spawn is drafted and never
 * stored (ProcessService.draft + SurfaceService.detached, the same code as the surface preview),
 * so insights never write a process, and the live cascade (recipe, engine, labels, tool flags) is
 * what is judged.
 */
import { isServerToolsError } from '../lib/errors'
import { DOC_NAME_PATTERN } from '../lib/recipes/documents'
import type { ProcessService } from '../lib/recipes/spawn'
import type { Logger } from '../lib/runtime/logger'
import { familyOf } from '../lib/surface/families'
import type { SurfaceService } from '../lib/surface/surface'
import type { RoleSurface } from '../lib/usage/insights'
import type { RoleSurfaceLookup } from '../lib/usage/service'

export interface RoleSurfaceOptions {
  processes: ProcessService
  surface: SurfaceService
  log: Logger
}

export function roleSurfaceLookup(o: RoleSurfaceOptions): RoleSurfaceLookup {
  return async (tenant, project, roles) => {
    const out = new Map<string, RoleSurface>()
    for (const role of roles) {
      if (!DOC_NAME_PATTERN.test(role)) continue // `_unknown` and anything that cannot be a recipe
      try {
        const { process } = await o.processes.draft(tenant, project, 'usage-insights', { recipe: role })
        const turn = await o.surface.detached(process).turn()
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
