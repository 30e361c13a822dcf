/** The HTTP app, built from its dependencies: no AWS, no env, no globals. */

import { MAX_DOCUMENT_BYTES } from '../../lib/documents/ports'
import type { AppDeps } from './app-deps'
import type { AuthEnv } from './auth'
import { authenticate, tenantLayerWrites } from './auth'
import { consoleRoutes } from './console/routes'
import { problem, toProblem } from './errors'
import { fairShare } from './fair-share'
import { headerOf } from './headers'
import { Hono } from './hono'
import { observe } from './observe'
import { bearerChallenge, PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from './protected-resource'
import { bodyTooLarge } from './request'
import { auditRoutes } from './routes/audit'
import { callableToolRoutes } from './routes/callable-tools'
import { documentRoutes } from './routes/documents'
import { insightRoutes } from './routes/insights'
import { invokeRoutes } from './routes/invoke'
import { mcpRoutes } from './routes/mcp'
import { modelRoutes } from './routes/models'
import { processRoutes } from './routes/processes'
import { quotaRoutes } from './routes/quotas'
import { secretRoutes } from './routes/secrets'
import { serverToolRoutes } from './routes/server-tools'
import { surfaceRoutes } from './routes/surface'

export function createApp(deps: AppDeps) {
  const app = new Hono<AuthEnv>() // a LinearRouter: ./hono.ts
    // the server span, the request's log context, request metrics and the audit entry (./observe.ts)
    .use('*', observe(deps))
    // Declared sizes are refused before any byte is read; bodies without a declared size are
    // capped while they are read (functions/http/request.ts), so nothing reads past the limit.
    .use('*', (c, next) => {
      if (Number(headerOf(c, 'content-length') ?? 0) > MAX_DOCUMENT_BYTES + 64 * 1024) throw bodyTooLarge(c)
      return next()
    })
    // built on request (and, in the Lambda bundle, its code loaded then): no cold start pays for it
    .get('/openapi.json', async (c) => c.json((await deps.modules.openapi()).openApiDocument()))
    .get('/health', (c) => c.json({ ok: true }))
    .route('/console', consoleRoutes(deps.consoleAssets, deps.modules.consolePages))
    .get(PROTECTED_RESOURCE_PATH, protectedResourceMetadata(deps.auth))
    .get(`${PROTECTED_RESOURCE_PATH}/*`, protectedResourceMetadata(deps.auth))
    .use('/brain/*', bearerChallenge(deps.auth))
    // '/brain/*', not '/brain/:tenant/*': the router takes no parameter before a wildcard (./hono.ts)
    .use('/brain/*', authenticate(deps.auth, deps.log))
    .use('/brain/*', tenantLayerWrites)
    // a tenant over its share of the main thread waits behind the others (lib/runtime/fair-gate.ts)
    .use('/brain/*', fairShare(deps.fairShare))
    .route('/brain/:tenant', serverToolRoutes(deps))
    .route('/brain/:tenant', callableToolRoutes(deps))
    .route('/brain/:tenant', documentRoutes(deps))
    .route('/brain/:tenant', invokeRoutes(deps))
    .route('/brain/:tenant', quotaRoutes(deps))
    .route('/brain/:tenant', processRoutes(deps))
    .route('/brain/:tenant', mcpRoutes(deps))
    .route('/brain/:tenant', surfaceRoutes(deps))
    .route('/brain/:tenant', modelRoutes(deps))
    .route('/brain/:tenant', secretRoutes(deps))
    .route('/brain/:tenant', insightRoutes(deps))
    .route('/brain/:tenant', auditRoutes(deps))
  app.onError(toProblem(deps.log))
  app.notFound((c) => problem(c, 404, `no route ${c.req.method} ${c.req.path}`))
  return app
}
