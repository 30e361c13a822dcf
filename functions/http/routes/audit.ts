/**
 * GET /brain/:tenant/audit: the tenant's audit log, newest first. Filters: `from`, `to` (ISO-8601),
 * `actor` (token subject), `action` (exact, or a prefix ending in `.`), `target` (exact, or a
 * prefix ending in `/`); `limit` (1–200, default 50) and `cursor` (the `next` of the previous
 * page). Needs `audit:read` or `tenant:admin`. Read-only: no route changes or deletes an entry.
 */
import { type AuditFilter, decodeCursor, MAX_AUDIT_PAGE } from '../../../lib/audit/ports'
import { type Issue, invalidInput, ServerToolsError } from '../../../lib/errors'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { tenantParam } from '../request'

const ISO = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d{1,3})?)?Z)?$/

export function auditRoutes(deps: Pick<AppDeps, 'audit' | 'clock'>) {
  return new Hono<AuthEnv>().get('/audit', async (c) => {
    const scopes = c.get('principal')?.scopes
    if (!scopes?.has('audit:read') && !scopes?.has('tenant:admin'))
      throw new ServerToolsError('FORBIDDEN', "reading the audit log needs the 'audit:read' scope", { requiredScope: 'audit:read' })
    const q = (name: string) => c.req.query(name)
    const issues: Issue[] = []
    const filter: AuditFilter = {}
    for (const bound of ['from', 'to'] as const) {
      const v = q(bound)
      if (v === undefined) continue
      if (!ISO.test(v) || Number.isNaN(Date.parse(v))) issues.push({ pointer: `/query/${bound}`, message: 'expected an ISO-8601 UTC time' })
      else filter[bound] = new Date(Date.parse(v) + (bound === 'to' && v.length === 10 ? 86_399_999 : 0)).toISOString()
    }
    for (const key of ['actor', 'action', 'target'] as const) {
      const v = q(key)
      if (v === undefined) continue
      if (!v || v.length > 512) issues.push({ pointer: `/query/${key}`, message: 'expected 1 to 512 characters' })
      else filter[key] = v
    }
    const rawLimit = q('limit') ?? '50'
    const limit = Number(rawLimit)
    if (!/^\d{1,3}$/.test(rawLimit) || limit < 1 || limit > MAX_AUDIT_PAGE)
      issues.push({ pointer: '/query/limit', message: `expected a whole number from 1 to ${MAX_AUDIT_PAGE}` })
    const cursor = q('cursor')
    if (cursor !== undefined && (cursor.length > 200 || decodeCursor(cursor) === undefined))
      issues.push({ pointer: '/query/cursor', message: 'not a cursor this endpoint returned' })
    if (issues.length) throw invalidInput('the audit query is not valid', issues)
    // entries this container recorded a moment ago are written first: a change is readable at once
    await deps.audit.recorder.flush()
    const page = await deps.audit.store.query(
      tenantParam(c),
      filter,
      { limit, ...(cursor ? { cursor } : {}) },
      Math.floor(deps.clock.now() / 1000),
    )
    return jsonAnswer(c, page)
  })
}
