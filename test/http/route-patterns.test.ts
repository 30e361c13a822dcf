/**
 * The app routes with Hono's LinearRouter (functions/http/hono.ts), which throws at request time —
 * for every request of that method — when a pattern puts a parameter before a wildcard. These
 * tests keep every pattern, middleware included, within what it matches.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { pathSegment } from '../../functions/http/auth'
import { client, tokenFor } from '../support/http'

describe('route patterns', () => {
  it('never combine a parameter with a wildcard, in routes or middleware', () => {
    const app = createApp(createMemoryDeps())
    const unmatched = app.routes
      .filter((r) => /\/:\w+/.test(r.path) && /\*/.test(r.path.replace(/\{[^}]*\}/g, '')))
      .map((r) => `${r.method} ${r.path}`)
    expect(unmatched).toEqual([])
  })

  it('answer each method on a document path, nested folders included', async () => {
    const app = createApp(createMemoryDeps())
    const api = client(app, await tokenFor('acme', 'tools:read tools:write'))
    expect((await api.put('/brain/acme/projects/p1/documents/notes/deep/a.md', '# a', { 'content-type': 'text/markdown' })).status).toBe(
      201,
    )
    expect(await (await api.get('/brain/acme/projects/p1/documents/notes/deep/a.md')).text()).toBe('# a')
    expect((await api.delete('/brain/acme/projects/p1/documents/notes/deep/a.md')).status).toBe(204)
    expect((await api.get('/brain/acme/projects/p1/documents/notes/deep/a.md')).status).toBe(404)
  })

  it('read the tenant of a path the way a route parameter reads it', () => {
    expect(pathSegment('/brain/acme/projects/p1', 2)).toBe('acme')
    expect(pathSegment('/brain/ac%C3%A9/x', 2)).toBe('acé')
    expect(pathSegment('/brain/%E0%A4%A/x', 2)).toBe('%E0%A4%A') // not decodable: left as it is, then refused by the id pattern
    expect(pathSegment('/brain', 2)).toBeUndefined()
  })
})
