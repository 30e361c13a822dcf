/**
 * The Lambda entry point (functions/api.ts) as Lambda runs it: linked names arrive as
 * SST_RESOURCE_<Name> (what `Resource` reads), settings as environment variables, requests as
 * API Gateway v2 / Function URL payload-format-2.0 events (test/fixtures/apigw/*.json). The stores
 * are this run's dynalite + s3rver, on a table and bucket made for this file.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { serverToolPath } from '../../lib/config/server-tool'
import { scopeOf } from '../../lib/documents/ports'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { awsTestClients, coldStartLambda, type LambdaHandler, type LambdaResult, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'

const SECRET = `lambda-handler-test-${uniqueSuffix()}`

type Handler = LambdaHandler

let handler: Handler
let store: DynamoDocumentStore
let tenantToken: string
let otherTenantToken: string
let table: string
let bucket: string

/** A fixture with `{{NAME}}` and `{{TOKEN}}` filled in. */
function fixture(file: string, vars: { NAME?: string; TOKEN?: string } = {}): unknown {
  const text = readFileSync(new URL(`../fixtures/apigw/${file}`, import.meta.url), 'utf8')
  const event = JSON.parse(text) as Record<string, unknown>
  const fill = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(/\{\{(\w+)\}\}/g, (_, k: 'NAME' | 'TOKEN') => vars[k] ?? `{{${k}}}`)
    if (Array.isArray(v)) return v.map(fill)
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x)]))
    return v
  }
  return fill(event)
}

const invoke = (file: string, vars: { NAME?: string; TOKEN?: string } = {}) =>
  handler(fixture(file, vars), { awsRequestId: 'test', functionName: 'server-tools-test-Api' })
const json = (res: LambdaResult) => JSON.parse(res.isBase64Encoded ? Buffer.from(res.body, 'base64').toString('utf8') : res.body)
const key = (name: string) => ({ scope: scopeOf('acme', 'p1'), path: serverToolPath(name) })
const fresh = (stem: string) => `${stem}_${uniqueSuffix().replace(/-/g, '_')}`

beforeAll(async () => {
  const clients = awsTestClients()
  const names = await provisionLambdaLinks('lambda')
  table = names.Documents
  bucket = names.Blobs
  store = new DynamoDocumentStore({ dynamo: clients.dynamo, tableName: table, blobs: new S3BlobStore({ s3: clients.s3, bucket }) })

  handler = await coldStartLambda<Handler>(names, SECRET)

  tenantToken = await tokenFor('acme', 'tools:read tools:write', 'lambda@example.test', SECRET)
  otherTenantToken = await tokenFor('globex', 'tools:read tools:write', 'mallory@example.test', SECRET)
})

afterAll(() => {
  vi.unstubAllEnvs()
})

describe('functions/api.ts handler (API Gateway v2 events on dynalite + s3rver)', () => {
  it('creates a tool from a YAML body with 201 and an ETag, and stores it in the linked Documents table', async () => {
    const name = fresh('greeting')
    const res = await invoke('put-tool-yaml.json', { NAME: name, TOKEN: tenantToken })
    expect(res.statusCode).toBe(201)
    expect(res.headers?.etag).toBe('"1"')
    expect(json(res)).toMatchObject({ name, type: 'doc_lookup', source: 'project', version: 1, labels: ['greeting'] })
    const stored = await store.get(key(name))
    expect(stored).toMatchObject({ version: 1, updatedBy: 'lambda@example.test' })
    expect(stored?.body).toContain('description: Greets with the getting-started guide')
  })

  it('reads the tool back with source project and the same ETag', async () => {
    const name = fresh('readback')
    expect((await invoke('put-tool-yaml.json', { NAME: name, TOKEN: tenantToken })).statusCode).toBe(201)
    const res = await invoke('get-tool.json', { NAME: name, TOKEN: tenantToken })
    expect(res.statusCode).toBe(200)
    expect(res.headers?.etag).toBe('"1"')
    expect(json(res)).toMatchObject({ name, source: 'project', description: 'Greets with the getting-started guide', version: 1 })
  })

  it('passes the raw query string through: a label filter lists the tools written with that label', async () => {
    const name = fresh('labelled')
    await invoke('put-tool-yaml.json', { NAME: name, TOKEN: tenantToken })
    const res = await invoke('list-tools-by-label.json', { TOKEN: tenantToken })
    expect(res.statusCode).toBe(200)
    const body = json(res)
    expect(body.tools.map((t: { name: string }) => t.name)).toContain(name)
    expect(body.tools.every((t: { labels: string[] }) => t.labels.includes('greeting'))).toBe(true)
  })

  it('answers 401 problem+json to a request without a token', async () => {
    const res = await invoke('get-tool-no-token.json', { NAME: 'anything' })
    expect(res.statusCode).toBe(401)
    expect(res.headers?.['content-type']).toBe('application/problem+json')
    expect(json(res)).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
  })

  it('answers 403 to a token of another tenant and writes nothing', async () => {
    const name = fresh('foreign')
    const res = await invoke('put-tool-yaml.json', { NAME: name, TOKEN: otherTenantToken })
    expect(res.statusCode).toBe(403)
    expect(json(res)).toMatchObject({ status: 403, code: 'FORBIDDEN' })
    expect(await store.get(key(name))).toBeUndefined()
  })

  it('answers 412 to a stale If-Match and keeps the stored version', async () => {
    const name = fresh('stale')
    expect((await invoke('put-tool-yaml.json', { NAME: name, TOKEN: tenantToken })).statusCode).toBe(201)
    const res = await invoke('put-tool-stale-if-match.json', { NAME: name, TOKEN: tenantToken })
    expect(res.statusCode).toBe(412)
    expect(res.headers?.['content-type']).toBe('application/problem+json')
    expect(json(res)).toMatchObject({ status: 412, code: 'CONFLICT' })
    expect((await store.get(key(name)))?.version).toBe(1)
  })

  it('answers 422 naming the YAML line of a type error, and stores nothing', async () => {
    const name = fresh('broken')
    const res = await invoke('put-tool-type-error.json', { NAME: name, TOKEN: tenantToken })
    expect(res.statusCode).toBe(422)
    const body = json(res)
    expect(body).toMatchObject({ status: 422, code: 'INVALID_CONFIG' })
    expect(body.errors).toEqual([
      expect.objectContaining({ pointer: '/enabled', line: 6, message: 'enabled must be a boolean, got string' }),
    ])
    expect(await store.get(key(name))).toBeUndefined()
  })

  it('decodes a base64-encoded body (isBase64Encoded) as UTF-8 YAML', async () => {
    const name = fresh('encoded')
    const res = await invoke('put-tool-base64.json', { NAME: name, TOKEN: tenantToken })
    expect(res.statusCode).toBe(201)
    expect(json(res).description).toBe('Grüße aus dem Base64-Körper — ✓')
    const back = await invoke('get-tool.json', { NAME: name, TOKEN: tenantToken })
    expect(json(back).description).toBe('Grüße aus dem Base64-Körper — ✓')
  })
})
