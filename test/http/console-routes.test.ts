/**
 * The console's server side: page shells with their security headers, cacheable assets, and the
 * callable-tools listing the pages read. What the pages do in a browser is test/e2e/console.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'

const PAGES = ['/console', '/console/tools', '/console/tool', '/console/agent', '/console/usage', '/console/activity']

describe('the console pages', () => {
  const app = createApp(createMemoryDeps())

  it('serve every page as HTML with a strict CSP, nosniff, no-referrer and no framing, without a token', async () => {
    for (const path of PAGES) {
      const res = await app.request(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/html/)
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp.split('; ')).toEqual(
        expect.arrayContaining([
          "default-src 'none'",
          "script-src 'self'",
          "style-src 'self'",
          "connect-src 'self'",
          "frame-ancestors 'none'",
        ]),
      )
      expect(csp).not.toMatch(/unsafe|https?:|\*/)
      expect([res.headers.get('x-content-type-options'), res.headers.get('referrer-policy')]).toEqual(['nosniff', 'no-referrer'])
    }
  })

  it('carry no inline script, no inline style and no third-party URL', async () => {
    for (const path of PAGES) {
      const html = await (await app.request(path)).text()
      expect(html.startsWith('<!doctype html>'), path).toBe(true)
      const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
      expect(scripts.map((m) => [/src="\/console\/assets\/console\.js\?v=[\w-]+"/.test(m[1]), m[2]])).toEqual([[true, '']])
      expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|https?:\/\//)
    }
  })

  it('keep the sign-in token field out of any form submission (no name attribute, POST)', async () => {
    const html = await (await app.request('/console')).text()
    expect(html).toMatch(/<form id="signin-form" method="post"/)
    expect(/<input id="token"[^>]*>/.exec(html)?.[0]).not.toMatch(/\sname=/)
  })

  it('serve the script with its content hash as ETag, immutable when versioned, and 304 when unchanged', async () => {
    const html = await (await app.request('/console/tools')).text()
    const src = /src="([^"]+)"/.exec(html)![1]
    const res = await app.request(src)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(src).toContain(`v=${res.headers.get('etag')!.replace(/"/g, '')}`)
    const again = await app.request(src, { headers: { 'if-none-match': res.headers.get('etag')! } })
    expect(again.status).toBe(304)
    expect((await app.request('/console/assets/console.css')).headers.get('cache-control')).toBe('no-cache')
  })

  it('compress the script and pages for a client that accepts gzip', async () => {
    for (const path of ['/console/tools', '/console/assets/console.js']) {
      const res = await app.request(path, { headers: { 'accept-encoding': 'gzip' } })
      expect(res.headers.get('content-encoding'), path).toBe('gzip')
      expect((await res.arrayBuffer()).byteLength).toBeLessThan((await (await app.request(path)).arrayBuffer()).byteLength)
    }
  })

  it('answer 404 for an asset that does not exist, without reading the disk for it', async () => {
    for (const file of ['nope.js', '..%2Fpages.tsx', '%2e%2e%2F%2e%2e%2Fpackage.json']) {
      expect((await app.request(`/console/assets/${file}`)).status, file).toBe(404)
    }
  })
})

describe('GET /projects/{p}/tools', () => {
  it('lists what the project can call, packs expanded into sub-tools with their input schema', async () => {
    const deps = createMemoryDeps()
    const api = client(createApp(deps), await tokenFor('acme'))
    const spec =
      'openapi: 3.0.3\ninfo: { title: t, version: "1" }\nservers: [{ url: "https://pets.example.com" }]\npaths:\n  /pets/{id}:\n    get: { operationId: getPet, parameters: [{ name: id, in: path, required: true, schema: { type: string } }], responses: { "200": { description: ok } } }\n'
    const yaml = `type: rest_api\ndescription: Pets\nlabels: [pets]\nparameters:\n  specInline: ${JSON.stringify(spec)}\n`
    expect((await api.put('/brain/acme/projects/p1/server-tools/pets', yaml)).status).toBe(201)
    const body = await (await api.get('/brain/acme/projects/p1/tools')).json()
    const sub = body.tools.find((t: any) => t.name === 'pets__getPet')
    expect(sub).toMatchObject({
      pack: 'pets',
      source: 'project',
      typeId: 'rest_api',
      primary: false,
      inputSchema: { type: 'object', required: ['id'] },
    })
    expect(sub.labels).toEqual(expect.arrayContaining(['pets', 'read-only']))
    expect(body.tools.find((t: any) => t.name === 'whoami')).toMatchObject({ source: 'builtin', typeId: 'builtin' })
    expect(body.tools.some((t: any) => t.name === 'pets')).toBe(false)
    expect(body.problems).toEqual([])
  })
})
