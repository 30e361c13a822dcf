/** Calling a tool outside any process: the allow-set is the project's callable tools. */
import { Hono } from 'hono'
import { projectGate } from '../../../lib/tools/project-gate'
import type { AppDeps } from '../app'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { objectBody, projectParam, tenantParam } from '../request'

export function invokeRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>().post('/projects/:project/tools/:name/invoke', requireScope('tools:invoke'), async (c) => {
    const tenant = tenantParam(c)
    const project = projectParam(c)
    const body = await objectBody(c)
    const outcome = await deps.dispatcher.call(projectGate(deps.tools, tenant, project), { tenant, project, subject: principalOf(c).subject }, c.req.param('name'), body.params ?? {})
    return c.json(outcome)
  })
}
