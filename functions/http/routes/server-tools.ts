/** Server-tool documents: cascade listing, lookup, write, delete; and the type registry. */

import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { bodyText, etag, preconditionsOf, projectParam, tenantParam } from '../request'

export function serverToolRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>()
    .get('/tool-types', requireScope('tools:read'), (c) =>
      jsonAnswer(
        c,
        deps.tools.listTypes().map((f) => ({ typeId: f.typeId, kind: f.kind, parametersSchema: f.parametersSchema })),
      ),
    )
    .get('/projects/:project/server-tools', requireScope('tools:read'), async (c) => {
      const label = c.req.query('label')
      const includeDisabled = c.req.query('includeDisabled') === 'true'
      return jsonAnswer(c, await deps.tools.listViews(tenantParam(c), projectParam(c), { label, includeDisabled }))
    })
    .get('/projects/:project/server-tools/:name', requireScope('tools:read'), async (c) => {
      const view = await deps.tools.getView(tenantParam(c), projectParam(c), c.req.param('name'))
      c.header('etag', etag(view.version))
      return jsonAnswer(c, view)
    })
    .put('/projects/:project/server-tools/:name', requireScope('tools:write'), async (c) => {
      const project = projectParam(c)
      const text = await bodyText(c)
      const { view, created } = await deps.tools.put(tenantParam(c), project, c.req.param('name'), text, {
        actor: principalOf(c).subject,
        preconditions: preconditionsOf(c),
      })
      c.header('etag', etag(view.version))
      if (created) c.header('location', `/brain/${tenantParam(c)}/projects/${project}/server-tools/${view.name}`)
      return jsonAnswer(c, view, created ? 201 : 200)
    })
    .delete('/projects/:project/server-tools/:name', requireScope('tools:write'), async (c) => {
      await deps.tools.delete(tenantParam(c), projectParam(c), c.req.param('name'), preconditionsOf(c))
      return c.body(null, 204)
    })
}
