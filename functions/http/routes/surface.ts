/** The surface preview: what a process spawned now would get, computed by the spawn's own code and never stored. */

import { SPAWN_ITEM_LIMITS } from '../../../lib/recipes/spawn-limits'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { objectBody, projectParam, tenantParam } from '../request'

export function surfaceRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>().post('/projects/:project/surface/preview', requireScope('tools:read'), async (c) => {
    const preview = await deps.surface.preview(
      tenantParam(c),
      projectParam(c),
      principalOf(c).subject,
      await objectBody(c, deps.yaml, SPAWN_ITEM_LIMITS),
    )
    c.header('cache-control', 'no-store')
    return jsonAnswer(c, preview)
  })
}
