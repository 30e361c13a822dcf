/**
 * The read-only web console (spec §11) at /console: page shells and their script and style sheet,
 * all public — nothing here carries tenant data; the browser fetches it with the user's token.
 */

import { gzipSync } from 'node:zlib'
import type { Context, MiddlewareHandler } from 'hono'
import { headerOf } from '../headers'
import { Hono } from '../hono'
import type { PageId } from './pages'

export interface ConsoleAsset {
  body: string
  type: string
  /** Content hash: the pages link `?v=<etag>`, so an asset can be cached for good. */
  etag: string
}

/**
 * Only this origin's script and style, no inline code, no framing, no referrer: tool names,
 * descriptions and YAML are tenant-written, and the script draws them with DOM text APIs — the
 * policy is the second line should one ever reach markup.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next()
  c.header('content-security-policy', CONSOLE_CSP)
  c.header('x-content-type-options', 'nosniff')
  c.header('referrer-policy', 'no-referrer')
  c.header('x-frame-options', 'DENY')
  c.header('cross-origin-opener-policy', 'same-origin')
}

const PAGE_PATHS: [string, PageId][] = [
  ['/', 'signin'],
  ['/tools', 'tools'],
  ['/tool', 'tool'],
  ['/agent', 'agent'],
  ['/usage', 'usage'],
  ['/activity', 'activity'],
]

/** `assets` reads the files on first use: an API cold start never touches them. */
export function consoleRoutes(
  assets: () => Map<string, ConsoleAsset>,
  loadPages: () => Promise<{ renderPage: typeof import('./pages')['renderPage'] }>,
) {
  const url = (file: string) => `/console/assets/${file}?v=${encodeURIComponent(assets().get(file)?.etag.replace(/"/g, '') ?? '')}`
  let built: { script: string; style: string; icon: string } | undefined
  const urls = () => (built ??= { script: url('console.js'), style: url('console.css'), icon: url('favicon.svg') })
  // Shells depend only on the asset hashes, assets only on the files: each is rendered and
  // gzipped once per container (compressing per request measured ~8× the cost of GET /health).
  // The page code (hono/jsx) loads with the first page: API cold starts never pay for it.
  const bodies = new Map<string, Promise<Body>>()
  const once = (key: string, make: () => Promise<string> | string) => {
    let body = bodies.get(key)
    if (!body) bodies.set(key, (body = Promise.resolve(make()).then((text) => ({ text, gzip: gzipSync(text) }))))
    return body
  }
  const app = new Hono().use('*', securityHeaders)
  for (const [path, page] of PAGE_PATHS) {
    app.get(path, async (c) => {
      c.header('cache-control', 'no-cache')
      return send(c, await once(`page:${page}`, async () => (await loadPages()).renderPage(page, urls())), 'text/html; charset=UTF-8')
    })
  }
  app.get('/assets/:file', async (c) => {
    const asset = assets().get(c.req.param('file'))
    if (!asset) return c.text('not found', 404)
    c.header('etag', asset.etag)
    c.header('cache-control', c.req.query('v') ? 'public, max-age=31536000, immutable' : 'no-cache')
    if (headerOf(c, 'if-none-match') === asset.etag) return c.body(null, 304)
    return send(c, await once(`asset:${c.req.param('file')}`, () => asset.body), asset.type)
  })
  return app
}

interface Body {
  text: string
  gzip: Uint8Array
}

/** gzip for a client that accepts it (the Lambda adapter base64-encodes a compressed body). */
function send(c: Context, body: Body, type: string) {
  c.header('content-type', type)
  c.header('vary', 'accept-encoding')
  if (!/\bgzip\b/.test(headerOf(c, 'accept-encoding') ?? '')) return c.body(body.text)
  c.header('content-encoding', 'gzip')
  return c.body(body.gzip as Uint8Array<ArrayBuffer>)
}
