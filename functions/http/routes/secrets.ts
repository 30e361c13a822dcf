/**
 * Secrets by reference. Values are write-only: PUT stores one, DELETE removes one, GET lists
 * names. No response, log line or error ever carries a value.
 * Mounted under `/brain/:tenant`, after `authenticate`.
 */

import { invalidInput } from '../../../lib/errors'
import type { SecretStore } from '../../../lib/secrets/ports'
import { assertSecretName, assertSecretValue } from '../../../lib/secrets/ports'
import type { AuthEnv } from '../auth'
import { principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { bodyText, tenantParam } from '../request'

export function secretRoutes(deps: { secrets: SecretStore }) {
  return new Hono<AuthEnv>()
    .get('/secrets', requireScope('tools:read'), async (c) => {
      const names = await deps.secrets.list(tenantParam(c))
      return jsonAnswer(c, { secrets: names.map((name) => ({ name })) })
    })
    .put('/secrets/:name', requireScope('secrets:write'), async (c) => {
      const name = c.req.param('name')
      assertSecretName(name)
      const body = await secretBody(await bodyText(c))
      const extra = Object.keys(body).filter((k) => k !== 'value')
      if (extra.length)
        throw invalidInput(
          `the body may only hold 'value'`,
          extra.map((k) => ({ pointer: `/${k}`, message: `${k} is not allowed here` })),
        )
      assertSecretValue(body.value)
      const result = await deps.secrets.put(tenantParam(c), name, body.value)
      c.header('cache-control', 'no-store')
      return jsonAnswer(c, { name, updatedBy: principalOf(c).subject }, result === 'created' ? 201 : 200)
    })
    .delete('/secrets/:name', requireScope('secrets:write'), async (c) => {
      const name = c.req.param('name')
      assertSecretName(name)
      await deps.secrets.delete(tenantParam(c), name)
      return c.body(null, 204)
    })
}

/**
 * The body as a JSON object. Parsed here rather than with the YAML-aware reader so that no parser
 * message (which may quote the offending text — possibly the value) reaches the response.
 */
function secretBody(text: string): Record<string, unknown> {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    throw invalidInput('the body must be a JSON object like {"value": "..."}', [{ pointer: '', message: 'not valid JSON' }])
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw invalidInput('the body must be a JSON object like {"value": "..."}', [{ pointer: '', message: 'expected an object' }])
  }
  return data as Record<string, unknown>
}
