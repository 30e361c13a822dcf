/** The model catalog's learned side: an endpoint's tool limit, learned from its rejection (spec §14.1). */

import { type Issue, invalidInput } from '../../../lib/errors'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { isValidProjectId, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { objectBody, tenantParam } from '../request'

/** No provider takes a request with more tools than this; a count above it is not an observation. */
const MAX_REQUESTED_TOOLS = 100_000

export function modelRoutes(deps: AppDeps) {
  return new Hono<AuthEnv>().post('/models/observed-limits', requireScope('limits:report'), async (c) => {
    const body = await objectBody(c, deps.yaml)
    const issues: Issue[] = []
    const str = (k: string, max = 200) => {
      const v = body[k]
      if (typeof v !== 'string' || !v.trim() || v.length > max)
        issues.push({ pointer: `/${k}`, message: `${k} must be a non-empty string (at most ${max} characters)` })
      return typeof v === 'string' ? v.trim() : ''
    }
    const instance = str('instance')
    const model = str('model')
    const errorMessage = str('errorMessage', 20_000)
    const count = body.requestedToolCount
    // a safe integer within what any endpoint could be sent: 2^53 and beyond cannot be stored exactly
    if (count !== undefined && (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0 || count > MAX_REQUESTED_TOOLS))
      issues.push({
        pointer: '/requestedToolCount',
        message: `requestedToolCount must be a whole number from 0 to ${MAX_REQUESTED_TOOLS}`,
      })
    const project = body.project
    if (project !== undefined && (typeof project !== 'string' || !isValidProjectId(project)))
      issues.push({ pointer: '/project', message: 'project must be a project id' })
    if (issues.length) throw invalidInput(`the observation is invalid (${issues.map((i) => i.message).join('; ')})`, issues)
    const answer = await deps.observedLimits.learn(tenantParam(c), {
      instance,
      model,
      errorMessage,
      ...(typeof count === 'number' ? { requestedToolCount: count } : {}),
      ...(typeof project === 'string' ? { project } : {}),
    })
    return jsonAnswer(c, answer)
  })
}
