/** Raw documents of one layer, read through the cascade. */
import type { MiddlewareHandler } from 'hono'
import { WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import { KeptRenderings, RENDERED_MEMBER_MIN, type RenderedString, withRendered } from '../../../lib/config/json-render'
import type { DocumentKey } from '../../../lib/documents/ports'
import { normalizeDocumentPath } from '../../../lib/documents/service'
import { TENANT_ALLOW_LIST_PATH } from '../../../lib/egress/tenant-allow-list'
import { invalidInput, notFound } from '../../../lib/errors'
import type { AppDeps } from '../app-deps'
import type { AuthEnv } from '../auth'
import { assertTenantAdmin, decodedPathPart, principalOf, requireScope } from '../auth'
import { Hono } from '../hono'
import { jsonAnswer } from '../json-answer'
import { bodyText, etag, preconditionsOf, projectParam, tenantParam } from '../request'

const CONTENT_TYPES: Record<string, string> = {
  md: 'text/markdown; charset=utf-8',
  yaml: 'application/yaml; charset=utf-8',
  yml: 'application/yaml; charset=utf-8',
  json: 'application/json; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
}
const contentTypeOf = (path: string) => CONTENT_TYPES[path.split('.').pop() ?? ''] ?? 'text/plain; charset=utf-8'

/** Exported bodies rendered as JSON, all tenants together (keys name the tenant's scope). */
export const EXPORTED_BODY_BYTES = 32 * 1024 * 1024
export const exportedBodies = new KeptRenderings(EXPORTED_BODY_BYTES)
const SLICE = WORK_BUDGETS.jsonRenderSlice.limit
/**
 * A version names one body forever (lib/documents/ports.ts `DocumentStore.delete`) and its sha256
 * names the bytes: a rendering under both is used without reading the body it came from.
 */
const renderingKey = (d: { key: DocumentKey; version: number; sha256: string }) =>
  `${d.key.scope}\u0000${d.key.path}\u0000${d.version}\u0000${d.sha256}`

export function documentRoutes(deps: AppDeps) {
  const pathOf = (c: { req: { path: string } }) => {
    const marker = '/documents/'
    // one that cannot be decoded is left for normalizeDocumentPath to judge
    return decodedPathPart(c.req.path.slice(c.req.path.indexOf(marker) + marker.length))
  }
  // The tenant's egress allow-list widens what every tool of the tenant may reach (it takes effect
  // in the _tenant layer only, but a write of that name anywhere is held to the same rule).
  const tenantWideDocument: MiddlewareHandler<AuthEnv> = async (c, next) => {
    if (normalizeDocumentPath(pathOf(c)) === TENANT_ALLOW_LIST_PATH) assertTenantAdmin(c, `writing ${TENANT_ALLOW_LIST_PATH}`)
    await next()
  }
  return new Hono<AuthEnv>()
    .get('/projects/:project/documents', requireScope('tools:read'), async (c) => {
      const bodies = c.req.query('bodies')
      if (bodies !== undefined && bodies !== 'true' && bodies !== 'false')
        throw invalidInput('bodies must be true or false', [{ pointer: '/bodies', message: `got '${bodies.slice(0, 20)}'` }])
      // One consistent snapshot of the layer: versions and content hashes (for plans), bodies on
      // request (for exports) while they fit one answer's budget; the rest are read one by one.
      // Sizes come from the store: no body is read (or measured) that the answer will not carry.
      const carry = bodies === 'true'
      // a body rendered before is copied from its rendering, never read again: the store is told
      // which versions are held, and each one it skips is pinned here so that it cannot be
      // evicted between the listing and the answer (issue 21 D3)
      const held = new Map<string, RenderedString>()
      const docs = await deps.documents.listSized(
        tenantParam(c),
        projectParam(c),
        c.req.query('prefix') ?? '',
        carry ? WORK_BUDGETS.documentBodies.limit : 0,
        carry
          ? (d) => {
              const kept = exportedBodies.held(renderingKey(d))
              if (kept) held.set(renderingKey(d), kept)
              return kept !== undefined
            }
          : undefined,
      )
      const documents = []
      for (const d of docs) {
        const key = renderingKey(d)
        // a long body's JSON is kept per document version: each export copies it
        const rendered =
          held.get(key) ??
          (d.body !== undefined && d.body.length >= RENDERED_MEMBER_MIN ? await exportedBodies.of(key, d.body, SLICE) : undefined)
        const body = rendered?.value ?? d.body
        if (d.carried && body === undefined)
          throw new Error(`the store carried ${d.key.path} v${d.version} unread, and no rendering of it is held`)
        const entry = {
          path: d.key.path,
          version: d.version,
          sha256: d.sha256,
          bytes: d.bytes,
          updatedAt: d.updatedAt,
          updatedBy: d.updatedBy,
          ...(carry ? (d.carried ? { body } : { bodyOmitted: true }) : {}),
        }
        documents.push(rendered && d.carried ? withRendered(entry, { body: rendered }) : entry)
      }
      return jsonAnswer(c, { documents })
    })
    .get('/projects/:project/documents/:path{.+}', requireScope('tools:read'), async (c) => {
      const project = projectParam(c)
      const doc = await deps.documents.read(tenantParam(c), project, pathOf(c))
      if (!doc) throw notFound(`no document '${pathOf(c)}' in project '${project}' or any outer layer`)
      const ownLayer = (project === '_tenant' ? 'tenant' : 'project') === doc.source
      return c.body(doc.body, 200, {
        'content-type': contentTypeOf(doc.path),
        'x-document-source': doc.source,
        ...(ownLayer ? { etag: etag(doc.version) } : {}),
      })
    })
    .put('/projects/:project/documents/:path{.+}', requireScope('tools:write'), tenantWideDocument, async (c) => {
      const project = projectParam(c)
      const body = await bodyText(c, { allowAnyText: true })
      const stored = await deps.documents.put(tenantParam(c), project, pathOf(c), body, {
        actor: principalOf(c).subject,
        preconditions: preconditionsOf(c),
      })
      c.header('etag', etag(stored.version))
      return jsonAnswer(
        c,
        { path: stored.key.path, version: stored.version, sha256: stored.sha256, updatedAt: stored.updatedAt, updatedBy: stored.updatedBy },
        stored.created ? 201 : 200,
      )
    })
    .delete('/projects/:project/documents/:path{.+}', requireScope('tools:write'), tenantWideDocument, async (c) => {
      await deps.documents.delete(tenantParam(c), projectParam(c), pathOf(c), preconditionsOf(c))
      return c.body(null, 204)
    })
}
