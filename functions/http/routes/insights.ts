/** Spec §14.4 insights: per role, what the agents called and looked up. Read-only. */

import { invalidInput } from '../../../lib/errors'
import { MAX_WINDOW_DAYS } from '../../../lib/usage/service'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { projectParam, tenantParam } from '../request'

export function insightRoutes(deps: Pick<AppDeps, 'usage'>) {
  return new Hono<AuthEnv>().get('/admin/projects/:project/insights/tool-usage', requireScope('insights:read'), async (c) => {
    const raw = c.req.query('days')
    let days: number | undefined
    if (raw !== undefined) {
      days = Number(raw)
      if (!/^\d{1,4}$/.test(raw) || days < 1 || days > MAX_WINDOW_DAYS) {
        throw invalidInput(`days must be a whole number from 1 to ${MAX_WINDOW_DAYS}, got '${raw.slice(0, 20)}'`, [
          { pointer: '/days', message: 'invalid window' },
        ])
      }
    }
    return jsonAnswer(c, await deps.usage.insights(tenantParam(c), projectParam(c), { days }))
  })
}
