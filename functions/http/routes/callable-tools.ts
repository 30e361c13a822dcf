/**
 * What a project can call: every tool after the cascade with packs expanded into their sub-tools,
 * each with the input schema an agent would send. The admin listing (server-tools) shows
 * documents; this shows what they turn into (the console's pack rows and parameter schemas).
 */

import type { Tool } from '../../../lib/tools/contracts'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { projectParam, tenantParam } from '../request'

export function callableToolRoutes(deps: Pick<AppDeps, 'tools'>) {
  return new Hono<AuthEnv>().get('/projects/:project/tools', requireScope('tools:read'), async (c) => {
    const { tools, problems } = await deps.tools.listAll(tenantParam(c), projectParam(c))
    return jsonAnswer(c, { tools: tools.map(callableView), problems })
  })
}

function callableView(t: Tool) {
  return {
    name: t.name,
    description: t.description,
    labels: t.labels,
    primary: t.primary,
    deferred: t.deferred,
    source: t.source,
    typeId: t.typeId,
    ...(t.pack !== undefined ? { pack: t.pack } : {}),
    ...(t.aliases?.length ? { aliases: t.aliases } : {}),
    ...(t.promptHint !== undefined ? { promptHint: t.promptHint } : {}),
    ...(t.searchHint !== undefined ? { searchHint: t.searchHint } : {}),
    inputSchema: t.inputSchema,
  }
}
