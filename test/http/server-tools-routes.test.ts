import { createHash } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'
import { echoPackFactory } from '../support/pack-factory'

const base = '/brain/acme/projects/p1'
const yaml = (description: string, extra = '') =>
  `type: doc_lookup\ndescription: ${description}\nparameters:\n  path: documents/getting-started.md\n${extra}`
let api: ReturnType<typeof client>
let app: ReturnType<typeof createApp>

beforeEach(async () => {
  app = createApp(createMemoryDeps({ extraFactories: [echoPackFactory] }))
  api = client(app, await tokenFor('acme'))
})

describe('server-tool routes', () => {
  it('creates a tool from YAML with 201, an ETag and a Location', async () => {
    const res = await api.put(`${base}/server-tools/my_doc`, yaml('Mine'))
    expect(res.status).toBe(201)
    expect(res.headers.get('etag')).toBe('"1"')
    expect(res.headers.get('location')).toBe('/brain/acme/projects/p1/server-tools/my_doc')
    expect(await res.json()).toMatchObject({ name: 'my_doc', source: 'project', version: 1, enabled: true, primary: false })
  })

  it('accepts a JSON body as well as YAML', async () => {
    const res = await api.put(`${base}/server-tools/json_doc`, {
      type: 'doc_lookup',
      description: 'From JSON',
      parameters: { path: 'documents/a.md' },
    })
    expect(res.status).toBe(201)
  })

  it('refuses an upper-case or padded name in the path with a 400 saying names are lower case', async () => {
    const upper = await api.put(`${base}/server-tools/My_Doc`, yaml('Mine'))
    expect(upper.status).toBe(400)
    expect((await upper.json()).detail).toBe("tool name 'My_Doc' must be lower case: tool names are lower case (did you mean 'my_doc'?)")
    expect((await api.put(`${base}/server-tools/%20my_doc%20`, yaml('Mine'))).status).toBe(400)
    await api.put(`${base}/server-tools/my_doc`, yaml('Mine'))
    expect((await api.get(`${base}/server-tools/MY_DOC`)).status).toBe(400)
    expect((await api.delete(`${base}/server-tools/My_Doc`)).status).toBe(400)
    expect((await api.get(`${base}/server-tools/my_doc`)).status).toBe(200)
  })

  it('answers 200 to an update and 412 to a stale If-Match', async () => {
    await api.put(`${base}/server-tools/my_doc`, yaml('v1'))
    const ok = await api.put(`${base}/server-tools/my_doc`, yaml('v2'), { 'if-match': '"1"' })
    expect([ok.status, ok.headers.get('etag')]).toEqual([200, '"2"'])
    const stale = await api.put(`${base}/server-tools/my_doc`, yaml('v3'), { 'if-match': '"1"' })
    expect(stale.status).toBe(412)
    expect(stale.headers.get('content-type')).toBe('application/problem+json')
    expect((await (await api.get(`${base}/server-tools/my_doc`)).json()).description).toBe('v2')
  })

  it('refuses If-None-Match: * when the tool exists', async () => {
    expect((await api.put(`${base}/server-tools/my_doc`, yaml('v1'), { 'if-none-match': '*' })).status).toBe(201)
    expect((await api.put(`${base}/server-tools/my_doc`, yaml('v1'), { 'if-none-match': '*' })).status).toBe(412)
  })

  it('answers 422 with the line of a type error', async () => {
    const res = await api.put(`${base}/server-tools/bad`, yaml('x', 'enabled: "yes"\n'))
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body).toMatchObject({ status: 422, code: 'INVALID_CONFIG' })
    expect(body.errors).toEqual([
      expect.objectContaining({ pointer: '/enabled', line: 5, message: 'enabled must be a boolean, got string' }),
    ])
  })

  it('answers 422 listing the known types for an unknown type', async () => {
    const res = await api.put(`${base}/server-tools/bad`, 'type: nonsense\ndescription: x\n')
    expect(res.status).toBe(422)
    expect((await res.json()).errors[0].message).toContain('known types: doc_lookup, echo_pack')
  })

  it('refuses the reserved names of the capability floor', async () => {
    for (const name of ['tool_list', 'tool_description', 'invoke_tool']) {
      const res = await api.put(`${base}/server-tools/${name}`, yaml('hijack'))
      expect(res.status).toBe(422)
      expect((await res.json()).errors).toEqual([
        expect.objectContaining({ pointer: '/name', message: expect.stringContaining('reserved') }),
      ])
    }
  })

  it('answers 400 for a name that breaks the rules', async () => {
    expect((await api.put(`${base}/server-tools/a__b`, yaml('x'))).status).toBe(400)
    expect((await api.put(`${base}/server-tools/${'a'.repeat(49)}`, yaml('x'))).status).toBe(400)
  })

  it('answers 400 for a project id that breaks the rules', async () => {
    const res = await api.get('/brain/acme/projects/Bad%20Id/server-tools')
    expect(res.status).toBe(400)
  })

  it('answers 415 for a body that is not text', async () => {
    expect((await api.put(`${base}/server-tools/x`, 'abc', { 'content-type': 'image/png' })).status).toBe(415)
  })

  it('answers 413 for a body over 1 MiB', async () => {
    const res = await api.put(`${base}/server-tools/huge`, yaml('x', `searchHint: ${'a'.repeat(1_100_000)}\n`))
    expect(res.status).toBe(413)
  })

  it('lists tools sorted by name with their source layer and problems', async () => {
    await api.put('/brain/acme/projects/_tenant/server-tools/shared', yaml('tenant'))
    await api.put(`${base}/server-tools/mine`, yaml('mine', 'labels: [team]\n'))
    const res = await api.get(`${base}/server-tools`)
    const body = await res.json()
    expect(body.problems).toEqual([])
    const names = body.tools.map((t: { name: string; source: string }) => `${t.name}:${t.source}`)
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(expect.arrayContaining(['mine:project', 'shared:tenant', 'doc_getting_started:bundled', 'whoami:builtin']))
    expect(body.tools.find((t: { name: string }) => t.name === 'mine')).toEqual({
      name: 'mine',
      type: 'doc_lookup',
      description: 'mine',
      enabled: true,
      primary: false,
      labels: ['team'],
      disabledSubTools: [],
      defaultDeferred: false,
      parameters: { path: 'documents/getting-started.md' },
      source: 'project',
      version: 1,
      shadows: [],
    })
    const team = await (await api.get(`${base}/server-tools?label=team`)).json()
    expect(team.tools.map((t: { name: string }) => t.name)).toEqual(['mine'])
  })

  it('shows disabled tools only with includeDisabled=true', async () => {
    await api.put(`${base}/server-tools/off`, yaml('off', 'enabled: false\n'))
    expect((await (await api.get(`${base}/server-tools`)).json()).tools.map((t: { name: string }) => t.name)).not.toContain('off')
    expect(
      (await (await api.get(`${base}/server-tools?includeDisabled=true`)).json()).tools.map((t: { name: string }) => t.name),
    ).toContain('off')
  })

  it('deletes with 204 and then answers 404', async () => {
    await api.put(`${base}/server-tools/gone`, yaml('x'))
    expect((await api.delete(`${base}/server-tools/gone`)).status).toBe(204)
    const res = await api.get(`${base}/server-tools/gone`)
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
    expect((await api.delete(`${base}/server-tools/gone`)).status).toBe(404)
    const again = await api.put(`${base}/server-tools/gone`, yaml('back'))
    expect([again.status, again.headers.get('etag')]).toEqual([201, '"3"'])
  })

  it('lists the tool types sorted with their parameter schemas', async () => {
    const types = await (await api.get('/brain/acme/tool-types')).json()
    expect(types.map((t: { typeId: string }) => t.typeId)).toEqual([...types.map((t: { typeId: string }) => t.typeId)].sort())
    expect(types.find((t: { typeId: string }) => t.typeId === 'doc_lookup').parametersSchema.required).toEqual(['path'])
  })

  it('answers unknown routes with a problem, not an HTML page', async () => {
    const res = await api.get('/brain/acme/nowhere')
    expect(res.status).toBe(404)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
  })

  it('describes its routes in /openapi.json', async () => {
    const doc: any = await (await app.request('/openapi.json')).json()
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/brain/{tenant}/projects/{project}/server-tools/{name}',
        '/brain/{tenant}/projects/{project}/tools/{name}/invoke',
      ]),
    )
  })
})

describe('documents routes', () => {
  it('writes, reads and versions a raw document', async () => {
    const res = await api.put(`${base}/documents/scripts/x.js`, '1 + 1', { 'content-type': 'text/javascript' })
    expect([res.status, res.headers.get('etag')]).toEqual([201, '"1"'])
    const got = await api.get(`${base}/documents/scripts/x.js`)
    expect([got.status, await got.text(), got.headers.get('x-document-source'), got.headers.get('etag')]).toEqual([
      200,
      '1 + 1',
      'project',
      '"1"',
    ])
    expect((await api.put(`${base}/documents/scripts/x.js`, '2', { 'content-type': 'text/javascript', 'if-match': '"7"' })).status).toBe(
      412,
    )
  })

  it('reads a bundled document through the cascade', async () => {
    const got = await api.get(`${base}/documents/documents/getting-started.md`)
    expect(got.status).toBe(200)
    expect(got.headers.get('x-document-source')).toBe('bundled')
    expect(got.headers.get('etag')).toBeNull()
  })

  it('normalises paths and refuses traversal', async () => {
    await api.put(`${base}/documents/a//b/./c.md`, '# c', { 'content-type': 'text/markdown' })
    expect((await api.get(`${base}/documents/a/b/c.md`)).status).toBe(200)
    expect((await api.put(`${base}/documents/a%2F..%2Fsecret.md`, 'x', { 'content-type': 'text/markdown' })).status).toBe(400)
    expect((await api.get(`${base}/documents/%2Fetc%2Fpasswd`)).status).toBe(400)
  })

  it('lists the documents of one layer', async () => {
    await api.put(`${base}/documents/scripts/a.js`, '1', { 'content-type': 'text/javascript' })
    const body = await (await api.get(`${base}/documents?prefix=scripts/`)).json()
    expect(body.documents.map((d: { path: string }) => d.path)).toEqual(['scripts/a.js'])
  })

  it('lists each document with its version and the sha256 of its body, and the bodies on request', async () => {
    await api.put(`${base}/documents/scripts/a.js`, 'return 1', { 'content-type': 'text/javascript' })
    await api.put(`${base}/documents/scripts/a.js`, 'return 2', { 'content-type': 'text/javascript' })
    const meta = (await (await api.get(`${base}/documents?prefix=scripts/`)).json()).documents[0]
    expect(meta).toMatchObject({
      path: 'scripts/a.js',
      version: 2,
      sha256: createHash('sha256').update('return 2').digest('hex'),
      bytes: 8,
    })
    expect(meta).not.toHaveProperty('body')
    const full = (await (await api.get(`${base}/documents?prefix=scripts/&bodies=true`)).json()).documents[0]
    expect(full.body).toBe('return 2')
    expect((await api.get(`${base}/documents?bodies=yes`)).status).toBe(400)
  })
})

describe('invoke route', () => {
  it('invokes a bundled doc_lookup tool', async () => {
    const res = await api.post(`${base}/tools/doc_getting_started/invoke`, { params: {} })
    const body = await res.json()
    expect(res.status).toBe(200)
    expect(body.isError).toBe(false)
    expect(body.content).toMatchObject({ path: 'documents/getting-started.md', source: 'bundled' })
  })

  it('answers an unknown tool with a 200 tool error', async () => {
    const body = await (await api.post(`${base}/tools/nope/invoke`, { params: {} })).json()
    expect(body).toEqual({ isError: true, content: { message: "Unknown tool 'nope'. Call tool_list to see the tools you can use." } })
  })

  it('answers invalid params with a 200 tool error naming the field', async () => {
    const body = await (await api.post(`${base}/tools/whoami/invoke`, { params: { extra: 1 } })).json()
    expect(body.isError).toBe(true)
    expect(body.content.message).toContain('extra is not allowed here')
  })

  it('answers a body that is not JSON with a 400 problem', async () => {
    const res = await api.post(`${base}/tools/whoami/invoke`, '{"params": ', { 'content-type': 'application/json' })
    expect(res.status).toBe(400)
    expect(res.headers.get('content-type')).toBe('application/problem+json')
  })

  it('tells whoami the tenant, project and subject', async () => {
    const body = await (await api.post(`${base}/tools/whoami/invoke`, {})).json()
    expect(body).toEqual({ isError: false, content: { tenant: 'acme', project: 'p1', subject: 'alice@example.test' } })
  })

  it('reads doc_lookup documents live and reports a missing one as a tool error naming the path', async () => {
    await api.put(`${base}/server-tools/notes`, 'type: doc_lookup\ndescription: Notes\nparameters:\n  path: documents/notes.md\n')
    const missing = await (await api.post(`${base}/tools/notes/invoke`, {})).json()
    expect(missing.isError).toBe(true)
    expect(missing.content.message).toContain("'documents/notes.md'")
    await api.put(`${base}/documents/documents/notes.md`, 'first', { 'content-type': 'text/markdown' })
    expect((await (await api.post(`${base}/tools/notes/invoke`, {})).json()).content).toEqual({
      path: 'documents/notes.md',
      content: 'first',
      chars: 5,
      source: 'project',
    })
    await api.put(`${base}/documents/documents/notes.md`, 'second!', { 'content-type': 'text/markdown' })
    expect((await (await api.post(`${base}/tools/notes/invoke`, {})).json()).content.content).toBe('second!')
  })

  it('invokes a pack sub-tool by its full name', async () => {
    await api.put(`${base}/server-tools/echo`, 'type: echo_pack\ndescription: Echo\nparameters:\n  ops: [say]\n')
    const body = await (await api.post(`${base}/tools/echo__say/invoke`, { params: { text: 'hi' } })).json()
    expect(body).toEqual({ isError: false, content: { op: 'say', text: 'hi' } })
  })
})

describe('the OpenAPI document', () => {
  it('describes every route the app serves under /brain', async () => {
    const app = createApp(createMemoryDeps())
    const doc: any = await (await app.request('/openapi.json')).json()
    const served = [
      ...new Set(
        app.routes
          .filter((r) => r.method !== 'ALL' && r.path.startsWith('/brain/'))
          .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}').replace(/\/\*$/, '/{path}')}`),
      ),
    ]
    const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    )
    expect(served.filter((r) => !described.includes(r))).toEqual([])
  })
})
