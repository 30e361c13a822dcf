/** Calling a tool outside any process: the allow-set is the project's callable tools. */

import { projectGate } from '../../../lib/tools/project-gate'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { objectBody, projectParam, requestSignal, tenantParam } from '../request'

export function invokeRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>().post('/projects/:project/tools/:name/invoke', requireScope('tools:invoke'), async (c) => {
    const tenant = tenantParam(c)
    const project = projectParam(c)
    const body = await objectBody(c, deps.yaml)
    // The request's signal ends the whole call tree when the client goes away; a tool refused for
    // capacity is this request's 503, not a tool result.
    const outcome = await deps.dispatcher.call(
      projectGate(deps.tools, tenant, project),
      { tenant, project, subject: principalOf(c).subject },
      c.req.param('name'),
      body.params ?? {},
      {
        signal: requestSignal(c),
        overloaded: 'throw',
        refused: 'throw',
      },
    )
    return jsonAnswer(c, outcome)
  })
}
