/** GET /brain/{t}/quotas: the rules that apply to a project (default `_tenant`), their use and time to reset. */

import { invalidInput } from '../../../lib/errors'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { ID_PATTERN, isValidProjectId, requireScope, TENANT_LAYER_ID } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { tenantParam } from '../request'

export function quotaRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>().get('/quotas', requireScope('tools:read'), async (c) => {
    const tenant = tenantParam(c)
    const project = c.req.query('project') || TENANT_LAYER_ID
    if (!isValidProjectId(project))
      throw invalidInput(`project '${project.slice(0, 80)}' must match ${ID_PATTERN} or be '${TENANT_LAYER_ID}'`, [
        { pointer: '/project', message: 'invalid project id' },
      ])
    return jsonAnswer(c, { project, rules: await deps.quotas.limiter.status(tenant, project) })
  })
}
