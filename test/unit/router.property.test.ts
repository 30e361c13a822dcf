/**
 * The app's router (functions/http/hono.ts) parses each pattern once and keeps a route list per
 * method; it must match exactly as Hono's LinearRouter does. Both routers get every route of the
 * app (middleware included, in the app's order) and are asked the same questions: paths built
 * from the patterns with random segment values, trailing slashes, extra and missing segments,
 * and arbitrary paths, for every method and an unlisted one.
 */
import fc from 'fast-check'
import { LinearRouter } from 'hono/router/linear-router'
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { RememberingLinearRouter } from '../../functions/http/hono'

const app = createApp(createMemoryDeps())
const routes = app.routes.map((r, i) => ({ method: r.method, path: r.path, id: i }))

function routers() {
  const hono = new LinearRouter<number>()
  const ours = new RememberingLinearRouter<number>()
  for (const r of routes) {
    hono.add(r.method, r.path, r.id)
    ours.add(r.method, r.path, r.id)
  }
  return { hono, ours }
}

const answer = (router: { match: (m: string, p: string) => unknown }, method: string, path: string) => {
  try {
    const [handlers] = router.match(method, path) as [[number, Record<string, string>][]]
    return { handlers: handlers.map(([id, params]) => [id, { ...params }]) }
  } catch (e) {
    return { threw: (e as Error).constructor.name }
  }
}

const segment = fc.oneof(
  fc.constantFrom('acme', '_tenant', 'p1', 'x.yaml', 'a%2Fb', '%E0%A4%A', 'processes', 'tools', 'documents', '*', ':id', ''),
  fc.stringMatching(/^[a-z0-9_.%-]{1,12}$/),
)

/** A path made from one of the app's patterns: parameters and wildcards filled, sometimes bent. */
const fromPattern = fc
  .tuple(
    fc.constantFrom(...routes.map((r) => r.path)),
    fc.array(segment, { minLength: 1, maxLength: 4 }),
    fc.constantFrom('', '/', '/extra', '/a/b.yaml'),
    fc.boolean(),
  )
  .map(([pattern, values, tail, dropLast]) => {
    let k = 0
    const parts = pattern
      .split('/')
      .map((p) => (p.startsWith(':') ? values[k++ % values.length] : p === '*' ? values.slice(0, 2).join('/') : p))
    return (dropLast ? parts.slice(0, -1) : parts).join('/') + tail || '/'
  })

const anyPath = fc.array(segment, { maxLength: 8 }).map((parts) => `/${parts.join('/')}`)

describe('the app router', () => {
  it('matches every route of the app as Hono’s LinearRouter does, handlers and parameters alike', () => {
    const { hono, ours } = routers()
    fc.assert(
      fc.property(
        fc.oneof(fromPattern, anyPath),
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PURGE'),
        (path, method) => {
          expect(answer(ours, method, path)).toEqual(answer(hono, method, path))
        },
      ),
      { numRuns: 3000 },
    )
  })

  it('matches a route added after the first match, in the order it was added', () => {
    const { hono, ours } = routers()
    expect(answer(ours, 'GET', '/late/x')).toEqual(answer(hono, 'GET', '/late/x'))
    for (const r of [hono, ours]) r.add('GET', '/late/:name', 9999)
    expect(answer(ours, 'GET', '/late/x')).toEqual(answer(hono, 'GET', '/late/x'))
    expect(answer(ours, 'GET', '/late/x').handlers?.some(([id]) => id === 9999)).toBe(true)
  })

  it('throws as Hono does when a request reaches a parameter before a wildcard', () => {
    const hono = new LinearRouter<number>()
    const ours = new RememberingLinearRouter<number>()
    for (const r of [hono, ours]) r.add('GET', '/t/:tenant/*', 1)
    expect(answer(ours, 'GET', '/t/a/b')).toEqual({ threw: 'UnsupportedPathError' })
    expect(answer(hono, 'GET', '/t/a/b')).toEqual({ threw: 'UnsupportedPathError' })
    expect(answer(ours, 'POST', '/t/a/b')).toEqual(answer(hono, 'POST', '/t/a/b'))
  })
})
