/**
 * Client tools (spec §7): declared by the backend at spawn or with PUT …/client-tools, they join
 * the surface like any tool and run on the client.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const fileRead = {
  name: 'file_read',
  description: 'Read a file from the user’s workspace.',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  labels: ['files'],
  primary: true,
}
const askUser = {
  name: 'ask_user',
  description: 'Ask the user a question.',
  inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
}

let api: ReturnType<typeof client>
let app: ReturnType<typeof createApp>
let deps: ReturnType<typeof createMemoryDeps>

beforeEach(async () => {
  deps = createMemoryDeps({ log: new MemoryLogger(), clock: new ManualClock() })
  app = createApp(deps)
  api = client(app, await tokenFor('acme'))
})

async function spawn(body: Record<string, unknown>) {
  const res = await api.post(`${base}/processes`, body)
  expect(res.status, await res.clone().text()).toBe(201)
  return (await res.json()) as { id: string; clientTools: string[]; warnings: string[] }
}
const call = async (id: string, name: string, params: unknown = {}) =>
  (await api.post(`${base}/processes/${id}/tool-calls`, { name, params })).json()
const manifest = async (id: string, query = '') => (await api.get(`${base}/processes/${id}/manifest${query}`)).json()

describe('declaring client tools', () => {
  it('takes clientTools at spawn and shows their names on the process', async () => {
    const p = await spawn({ clientTools: [fileRead, askUser] })
    expect(p.clientTools).toEqual(['file_read', 'ask_user'])
    expect((await (await api.get(`${base}/processes/${p.id}`)).json()).clientToolsVersion).toBe(1)
  })

  it('answers 400 with a JSON pointer for each bad declaration', async () => {
    const res = await api.post(`${base}/processes`, {
      clientTools: [
        { name: '9lives', description: 'x', inputSchema: { type: 'object' } },
        { name: 'no_schema', description: 'x' },
        { name: 'not_object', description: 'x', inputSchema: { type: 'string' } },
        { name: 'bad_schema', description: 'x', inputSchema: { type: 'object', properties: { a: { type: 'strung' } } } },
        { name: 'extra', description: 'x', inputSchema: { type: 'object' }, runs: 'here' },
      ],
    })
    expect(res.status).toBe(400)
    const pointers = ((await res.json()).errors as { pointer: string }[]).map((e) => e.pointer)
    expect(pointers).toEqual(expect.arrayContaining(['/clientTools/0/name', '/clientTools/1/inputSchema', '/clientTools/4/runs']))
    const second = await api.post(`${base}/processes`, {
      clientTools: [
        { name: 'not_object', description: 'x', inputSchema: { type: 'string' } },
        { name: 'bad_schema', description: 'x', inputSchema: { type: 'object', properties: { a: { type: 'strung' } } } },
        { ...askUser },
        { ...askUser },
      ],
    })
    expect(((await second.json()).errors as { pointer: string }[]).map((e) => e.pointer)).toEqual([
      '/clientTools/0/inputSchema/type',
      '/clientTools/1/inputSchema/properties/a/type',
      '/clientTools/3/name',
    ])
  })

  it('bounds the declarations: count, schema size, schema depth, $id', async () => {
    const many = Array.from({ length: 65 }, (_, i) => ({ ...askUser, name: `t${i}` }))
    expect((await api.post(`${base}/processes`, { clientTools: many })).status).toBe(400)
    const big = { ...askUser, inputSchema: { type: 'object', description: 'x'.repeat(17 * 1024) } }
    expect((await (await api.post(`${base}/processes`, { clientTools: [big] })).json()).errors[0]).toMatchObject({
      pointer: '/clientTools/0/inputSchema',
      message: expect.stringContaining('16384 bytes'),
    })
    let deep: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 20; i++) deep = { type: 'object', properties: { x: deep } }
    expect(
      (await (await api.post(`${base}/processes`, { clientTools: [{ ...askUser, inputSchema: deep }] })).json()).errors[0].message,
    ).toContain('16 levels')
    const withId = { ...askUser, inputSchema: { type: 'object', properties: { a: { $id: 'https://evil.example/x', type: 'string' } } } }
    expect((await (await api.post(`${base}/processes`, { clientTools: [withId] })).json()).errors[0]).toMatchObject({
      pointer: '/clientTools/0/inputSchema/properties/a/$id',
    })
  })

  it('lets configured and built-in tools win a name clash, with a warning', async () => {
    const p = await spawn({ clientTools: [{ ...askUser, name: 'whoami' }, { ...askUser, name: 'doc_errors' }, fileRead] })
    expect(p.warnings).toEqual([
      expect.stringContaining("'whoami' is also a configured or built-in tool"),
      expect.stringContaining("'doc_errors'"),
    ])
    const who = await call(p.id, 'whoami')
    expect(who).toMatchObject({ isError: false, content: { tenant: 'acme' } })
  })

  it('replaces them with PUT …/client-tools, versioned with If-Match', async () => {
    const p = await spawn({ clientTools: [fileRead] })
    const stale = await api.put(`${base}/processes/${p.id}/client-tools`, { clientTools: [askUser] }, { 'if-match': '"7"' })
    expect(stale.status).toBe(412)
    const res = await api.put(`${base}/processes/${p.id}/client-tools`, { clientTools: [askUser] }, { 'if-match': '"1"' })
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toBe('"2"')
    expect(await res.json()).toEqual({ clientTools: ['ask_user'], version: 2, warnings: [] })
    expect((await call(p.id, 'file_read', { path: 'a' })).isError).toBe(true)
    expect(await call(p.id, 'ask_user', { question: 'why?' })).toEqual({
      isError: false,
      runOn: 'client',
      name: 'ask_user',
      params: { question: 'why?' },
    })
    const bad = await api.put(`${base}/processes/${p.id}/client-tools`, { clientTools: [{ name: 'x' }] })
    expect(bad.status).toBe(400)
    expect((await api.put(`${base}/processes/00000000-0000-0000-0000-000000000000/client-tools`, { clientTools: [] })).status).toBe(404)
  })
})

describe('calling client tools', () => {
  it('answers runOn: client with the validated params through tool-calls, and counts the call', async () => {
    const p = await spawn({ recipe: 'default', clientTools: [fileRead] })
    expect(await call(p.id, 'file_read', { path: 'README.md' })).toEqual({
      isError: false,
      runOn: 'client',
      name: 'file_read',
      params: { path: 'README.md' },
    })
    const invalid = await call(p.id, 'file_read', { path: 3 })
    expect(invalid.isError).toBe(true)
    expect(invalid.content.message).toContain("Invalid arguments for 'file_read'")
    await deps.usage.flush()
    const insights = await (await api.get('/brain/acme/admin/projects/p1/insights/tool-usage')).json()
    const tool = insights[0].tools.find((t: { toolName: string }) => t.toolName === 'file_read')
    expect(tool).toMatchObject({ calls: 1 })
  })

  it('is a tool error from a script, saying it runs on the client', async () => {
    const p = await spawn({ clientTools: [fileRead] })
    const res = await call(p.id, 'execute_javascript', {
      code: "try { vance.tools.call('file_read', { path: 'a' }) } catch (e) { e.message }",
    })
    expect(res.isError).toBe(false)
    expect(res.content.value).toContain('runs on the client')
  })

  it('is a tool error from invoke_tool, saying it runs on the client', async () => {
    const p = await spawn({ clientTools: [fileRead] })
    const res = await call(p.id, 'invoke_tool', { name: 'file_read', params: { path: 'a' } })
    expect(res.isError).toBe(true)
    expect(res.content.message).toContain('runs on the client')
  })
})

describe('client tools on the surface', () => {
  it('puts primary client tools in the manifest and the others in the discovery block', async () => {
    const p = await spawn({ clientTools: [fileRead, askUser] })
    const m = await manifest(p.id, '?format=openai')
    expect(m.tools.map((t: { function: { name: string } }) => t.function.name)).toContain('file_read')
    expect(m.tools.map((t: { function: { name: string } }) => t.function.name)).not.toContain('ask_user')
    expect(m.discoveryBlock).toContain('`ask_user` — Ask the user a question.')
  })

  it('lists them in tool_list, describes and activates them with tool_description', async () => {
    const p = await spawn({ clientTools: [fileRead, askUser] })
    const listed = await call(p.id, 'tool_list', {})
    expect(listed.content.inContext).toContain('file_read')
    expect(listed.content.available).toContain('ask_user')
    const described = await call(p.id, 'tool_description', { names: ['ask_user'] })
    expect(described.content.tools[0]).toMatchObject({ name: 'ask_user', source: 'client', deferred: true })
    expect((await manifest(p.id)).tools.map((t: { name: string }) => t.name)).toContain('ask_user')
  })

  it('triages them within the model’s budget like any tool', async () => {
    await api.put(`/brain/acme/projects/_tenant/documents/models/tiny/_provider.yaml`, 'wireType: openai\nmaxTools: 4\n')
    const p = await spawn({ models: ['tiny/m'], reserve: 0, clientTools: [fileRead, { ...askUser, primary: true }] })
    const m = await manifest(p.id)
    expect(m.tools.length).toBeLessThanOrEqual(4)
    expect(m.budget).toMatchObject({ limit: 4, reserved: 0, effective: 4 })
    expect(m.budget.demoted).toBeGreaterThan(0)
  })
})
