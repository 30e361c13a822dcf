/**
 * The per-container document cache across containers: two cold-started instances of
 * functions/api.ts (two composition roots) over the same dynalite tables. Container B has cached
 * what its turns read; a write or a delete through container A is seen by B's very next request —
 * a manifest, a tool call on a process, a direct invoke, a quota rule.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { documentsTableSpec, ensureTable } from '../../lib/stores/aws/provision'
import { DynamoTenantStampStore, STAMP_SHARDS } from '../../lib/stores/aws/tenant-stamp-store'
import { awsTestClients, coldStartLambda, type LambdaHandler, lambdaFetch, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'

const SECRET = `document-cache-${uniqueSuffix()}`
const BASE = 'https://abc123.lambda-url.us-east-1.on.aws/brain/acme'
let a: ReturnType<typeof lambdaFetch>
let b: ReturnType<typeof lambdaFetch>
let headers: Record<string, string>

const tool = (path: string, description: string) =>
  `type: doc_lookup\ndescription: ${description}\nprimary: true\nparameters:\n  path: ${path}\n`
const put = (via: typeof a, path: string, body: string, project = 'p1') =>
  via(`${BASE}/projects/${project}/documents/${path}`, { method: 'PUT', headers: { ...headers, 'content-type': 'application/yaml' }, body })
const del = (via: typeof a, path: string, project = 'p1') =>
  via(`${BASE}/projects/${project}/documents/${path}`, { method: 'DELETE', headers })
const manifestNames = async (via: typeof a, id: string) => {
  const res = await via(`${BASE}/projects/p1/processes/${id}/manifest`, { headers })
  expect(res.status).toBe(200)
  const m = (await res.json()) as { tools: { name?: string; description?: string; function?: { name: string; description: string } }[] }
  return Object.fromEntries(m.tools.map((t) => [t.name ?? t.function?.name, t.description ?? t.function?.description]))
}
const callOnProcess = async (via: typeof a, id: string, name: string) => {
  const res = await via(`${BASE}/projects/p1/processes/${id}/tool-calls`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name, params: {} }),
  })
  return { status: res.status, body: (await res.json()) as { isError?: boolean; content?: unknown } }
}
const invoke = async (via: typeof a, name: string) => {
  const res = await via(`${BASE}/projects/p1/tools/${name}/invoke`, { method: 'POST', headers, body: '{"params":{}}' })
  return { status: res.status, text: await res.text() }
}

beforeAll(async () => {
  const links = await provisionLambdaLinks('document-cache')
  const [ca, cb] = [await coldStartLambda<LambdaHandler>(links, SECRET), await coldStartLambda<LambdaHandler>(links, SECRET)]
  a = lambdaFetch([ca])
  b = lambdaFetch([cb])
  headers = {
    authorization: `Bearer ${await tokenFor('acme', 'tools:read tools:write tools:invoke tenant:admin', 'a@example.test', SECRET)}`,
    'content-type': 'application/json',
  }
  expect((await put(a, 'first.md', 'FIRST BODY\n')).status).toBe(201)
  expect((await put(a, 'second.md', 'SECOND BODY\n')).status).toBe(201)
})

afterAll(() => {
  vi.unstubAllEnvs()
})

describe('the document cache across two containers', () => {
  it('shows a write through one container on the next turn of the other, and a delete likewise', async () => {
    expect((await put(a, 'server-tools/notes.yaml', tool('first.md', 'Version one.'))).status).toBe(201)
    const spawned = await b(`${BASE}/projects/p1/processes`, { method: 'POST', headers, body: '{}' })
    expect(spawned.status).toBe(201)
    const id = ((await spawned.json()) as { id: string }).id
    // B reads (and caches) the definition, the document it points at, the listings
    expect((await manifestNames(b, id)).notes).toBe('Version one.')
    expect(JSON.stringify((await callOnProcess(b, id, 'notes')).body)).toContain('FIRST BODY')
    expect((await invoke(b, 'notes')).text).toContain('FIRST BODY')

    expect((await put(a, 'server-tools/notes.yaml', tool('second.md', 'Version two.'))).status).toBe(200)
    expect((await manifestNames(b, id)).notes).toBe('Version two.')
    expect(JSON.stringify((await callOnProcess(b, id, 'notes')).body)).toContain('SECOND BODY')
    expect((await invoke(b, 'notes')).text).toContain('SECOND BODY')

    // a document a tool reads, changed on its own
    expect((await put(a, 'second.md', 'SECOND BODY, EDITED\n')).status).toBe(200)
    expect((await invoke(b, 'notes')).text).toContain('SECOND BODY, EDITED')

    expect((await del(a, 'server-tools/notes.yaml')).status).toBe(204)
    expect(await manifestNames(b, id)).not.toHaveProperty('notes')
    expect((await invoke(b, 'notes')).text).toContain("Unknown tool 'notes'")
    expect((await callOnProcess(b, id, 'notes')).body).toMatchObject({ isError: true })
  })

  it('applies a quota rule written through one container to the next call on the other', async () => {
    expect((await invoke(b, 'whoami')).status).toBe(200)
    const rule = 'rules:\n  - match: { tool: whoami }\n    volume: { requests: 1, per: day }\n'
    expect((await put(a, 'quotas.yaml', rule, '_tenant')).status).toBe(201)
    const statuses = [(await invoke(b, 'whoami')).status, (await invoke(b, 'whoami')).status]
    expect(statuses).toEqual([200, 429])
    expect((await del(a, 'quotas.yaml', '_tenant')).status).toBe(204)
    expect((await invoke(b, 'whoami')).status).toBe(200)
  })
})

describe('tenant stamps on DynamoDB', () => {
  it('shows a write begun and ended through any copy on every copy a container reads', async () => {
    const tableName = `stamps-${uniqueSuffix()}`
    const dynamo = awsTestClients().dynamo
    await ensureTable(dynamo, documentsTableSpec(tableName))
    const copies = Array.from({ length: STAMP_SHARDS }, (_, shard) => new DynamoTenantStampStore({ dynamo, tableName, shard }))
    const before = await Promise.all(copies.map((c) => c.read('acme')))
    expect(before.every((s) => s.generation === 0 && Object.keys(s.writing).length === 0)).toBe(true)
    await copies[1].begin('acme', 'w1', 1_000)
    const during = await Promise.all(copies.map((c) => c.read('acme')))
    expect(during.map((s) => s.writing)).toEqual(copies.map(() => ({ w1: 1_000 })))
    await copies[1].end('acme', ['w1'])
    const after = await Promise.all(copies.map((c) => c.read('acme')))
    expect(after.map((s) => [s.generation, s.writing])).toEqual(copies.map(() => [2, {}]))
    // another tenant's stamps are its own
    expect((await copies[0].read('other')).generation).toBe(0)
  })
})
