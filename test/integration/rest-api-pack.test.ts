/**
 * `rest_api` packs built from test/fixtures/openapi/petstore.yaml, called against a real HTTP
 * server this file starts on 127.0.0.1. Only 127.0.0.1 is allow-listed; name resolution is an
 * injected table and the connector refuses anything that is not loopback, so nothing here can
 * leave the machine even if the egress guard were broken.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import type { ServerToolConfig } from '../../lib/config/server-tool'
import type { CascadeDocument } from '../../lib/documents/cascade'
import { scopeOf } from '../../lib/documents/ports'
import { classifyAddress } from '../../lib/egress/address'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { type Connector, NodeConnector } from '../../lib/egress/connector'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemorySecretStore } from '../../lib/secrets/memory'
import type { FactoryEnv, InvocationContext, ToolSpec } from '../../lib/tools/contracts'
import { type RestApiParameters, RestApiToolFactory } from '../../lib/tools/types/rest_api'

const PETSTORE = readFileSync(new URL('../fixtures/openapi/petstore.yaml', import.meta.url), 'utf8')
const LONG_COMPLETE = 'getTheCompleteInventoryReportForAStoreIncludingHistoricalAdjustmentsAndForecasts'
const LONG_SUMMARY = 'getTheCompleteInventoryReportForAStoreIncludingHistoricalAdjustmentsAndSummaries'

// ───────────── the server: echoes every request under /v1 ─────────────

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}
const seen: Seen[] = []
const lastSeen = () => seen[seen.length - 1]

function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  const chunks: Buffer[] = []
  req.on('data', (c) => chunks.push(c))
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8')
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    const url = new URL(req.url!, 'http://127.0.0.1')
    if (url.pathname === '/v1/pets/missing') {
      res.writeHead(404, { 'content-type': 'application/json' })
      return res.end(JSON.stringify({ code: 404, message: 'no such pet' }))
    }
    if (req.method === 'DELETE' || url.pathname === '/v1/feedback') {
      res.writeHead(204)
      return res.end()
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ method: req.method, path: url.pathname, query: [...url.searchParams], headers: req.headers, body }))
  })
}

let server: http.Server
let port: number
let base: string
const nodeConnector = new NodeConnector()
const attempts: string[] = []
const loopbackOnly: Connector = {
  send(req) {
    attempts.push(req.address)
    if (classifyAddress(req.address)?.class !== 'loopback') throw new Error(`test safety net: refusing to connect to ${req.address}`)
    return nodeConnector.send(req)
  },
}
const egress = new EgressClient({
  allow: AllowList.of({ hosts: ['127.0.0.1'] }),
  resolver: { resolve: async () => Promise.reject(new Error('no DNS in tests')) },
  connector: loopbackOnly,
})
const secrets = new MemorySecretStore()

beforeAll(async () => {
  server = http.createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}/v1`
  await secrets.put('acme', 'PETSTORE_TOKEN', 'pet-TOKEN-secret-42')
  await secrets.put('acme', 'PETSTORE_USER', 'svc-user')
  await secrets.put('acme', 'PETSTORE_PASSWORD', 'pa55-word!')
})

afterAll(async () => {
  nodeConnector.close()
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

// ───────────── helpers ─────────────

function envWith(docs: Record<string, CascadeDocument> = {}, problems: string[] = []): FactoryEnv {
  return {
    tenant: 'acme',
    project: 'p1',
    documents: { read: async (path) => docs[path] },
    log: new MemoryLogger(),
    clock: new ManualClock(),
    problem: (m) => problems.push(m),
  }
}
const ctx = { tenant: 'acme', project: 'p1', subject: 'tester', depth: 0, tools: {} } as unknown as InvocationContext

function config(parameters: RestApiParameters, extra: Partial<ServerToolConfig> = {}): ServerToolConfig<RestApiParameters> {
  return {
    name: 'petstore',
    type: 'rest_api',
    description: 'The pet store',
    enabled: true,
    primary: false,
    labels: ['pets'],
    disabledSubTools: [],
    defaultDeferred: false,
    parameters,
    ...extra,
  }
}

async function build(parameters: Partial<RestApiParameters> = {}, extra: Partial<ServerToolConfig> = {}) {
  const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
  const params = { specInline: PETSTORE, baseUrl: base, ...parameters } as RestApiParameters
  expect(factory.check(params)).toEqual([])
  const problems: string[] = []
  const specs = await factory.create(config(params, extra), envWith({}, problems))
  const byName = (n: string) => {
    const s = specs.find((x) => x.localName === n || x.aliases?.includes(n))
    if (!s) throw new Error(`no sub-tool ${n} among ${specs.map((x) => x.localName).join(', ')}`)
    return s
  }
  return { factory, specs, problems, byName }
}

const invoke = async (spec: ToolSpec, args: Record<string, unknown>) => (await spec.invoke(args, ctx)) as { isError: boolean; content: any }

// ───────────── tests ─────────────

describe('rest_api pack from a Petstore-like document', () => {
  it('publishes one sub-tool per supported operation, deriving and sanitizing names', async () => {
    const { specs, problems } = await build()
    expect(specs.map((s) => s.localName)).toEqual([
      'listPets',
      'createPet',
      'showPetById',
      'pets_update',
      'deletePet',
      'get_pets_petId_photos',
      'listVisits',
      'searchPets',
      expect.stringMatching(/^getTheCompleteInventoryReportForAStoreIncluding_[0-9a-f]{6}$/),
      expect.stringMatching(/^getTheCompleteInventoryReportForAStoreIncluding_[0-9a-f]{6}$/),
      'sendFeedback',
      'adminReset',
    ])
    expect(problems).toEqual([
      'petstore: POST /pets/{petId}/photos: request body media type multipart/form-data is not supported (JSON and forms are); the operation was left out',
    ])
  })

  it('shortens names over 64 characters with a stable hash and keeps the long name as an alias', async () => {
    const { byName } = await build()
    const complete = byName(LONG_COMPLETE)
    const summary = byName(LONG_SUMMARY)
    expect(`petstore__${complete.localName}`.length).toBeLessThanOrEqual(64)
    expect(`petstore__${LONG_COMPLETE}`.length).toBeGreaterThan(64)
    expect(complete.aliases).toEqual([LONG_COMPLETE])
    expect(summary.localName).not.toBe(complete.localName)
    const again = await build()
    expect(again.byName(LONG_COMPLETE).localName).toBe(complete.localName)
    expect(byName('listPets').aliases).toBeUndefined()
  })

  it('labels reads read-only and everything else write + side-effect, with overrides', async () => {
    const { byName } = await build({
      labelOverrides: { searchPets: ['read-only', 'search'], 'admin*': ['write', 'side-effect', 'dangerous'] },
    })
    expect(byName('listPets').extraLabels).toEqual(['rest', 'read-only'])
    expect(byName('createPet').extraLabels).toEqual(['rest', 'write', 'side-effect'])
    expect(byName('deletePet').extraLabels).toEqual(['rest', 'write', 'side-effect'])
    expect(byName('searchPets').extraLabels).toEqual(['rest', 'read-only', 'search'])
    expect(byName('adminReset').extraLabels).toEqual(['rest', 'write', 'side-effect', 'dangerous'])
  })

  it('includes and excludes by case-insensitive operationId globs, exclude after include', async () => {
    const names = async (p: Partial<RestApiParameters>) => (await build(p)).specs.map((s) => s.localName)
    expect(await names({ include: ['*PET*'] })).toEqual([
      'listPets',
      'createPet',
      'showPetById',
      'pets_update',
      'deletePet',
      'get_pets_petId_photos',
      'searchPets',
    ])
    expect(await names({ include: ['*pet*'], exclude: ['deletePet', 'get_*'] })).toEqual([
      'listPets',
      'createPet',
      'showPetById',
      'pets_update',
      'searchPets',
    ])
    expect(await names({ include: ['????pets'] })).toEqual(['listPets'])
    expect(await names({ include: ['pets.update'] })).toEqual(['pets_update'])
    expect(await names({ exclude: ['*Inventory*', '*PET*'] })).toEqual(['listVisits', 'sendFeedback', 'adminReset'])
  })

  it('honours disabledSubTools by long or short name, and deferredOverrides', async () => {
    const { specs, byName } = await build(
      { deferredOverrides: { 'list*': false, '*': true } },
      { disabledSubTools: [LONG_SUMMARY, 'adminReset'] },
    )
    expect(specs.some((s) => s.aliases?.includes(LONG_SUMMARY))).toBe(false)
    expect(specs.some((s) => s.localName === 'adminReset')).toBe(false)
    expect(byName('listPets').deferred).toBe(false)
    expect(byName('createPet').deferred).toBe(true)
  })

  it('derives input schemas from parameters and the request body, with $refs inlined', async () => {
    const { byName } = await build()
    expect(byName('listPets').inputSchema).toEqual({
      type: 'object',
      properties: {
        limit: {
          type: 'integer',
          format: 'int32',
          maximum: 100,
          description: 'How many items to return at one time (max 100) (query parameter)',
        },
        tags: { type: 'array', items: { type: 'string' }, description: 'Tags to filter by (query parameter)' },
        'X-Request-Id': { type: 'string', format: 'uuid', description: '(header parameter X-Request-Id)' },
      },
      additionalProperties: false,
    })
    const update = byName('pets_update').inputSchema as any
    expect(update.required).toEqual(['petId', 'body'])
    expect(update.properties.petId).toEqual({ type: 'string', description: 'The id of the pet to retrieve' })
    expect(update.properties.body.required).toEqual(['name']) // id is readOnly: not part of a request
    expect(Object.keys(update.properties.body.properties)).toEqual(['name', 'tag', 'category'])
    expect(update.properties.body.properties.tag).toEqual({ type: ['string', 'null'] })
    expect(update.properties.body.properties.category.properties.parent).toEqual({
      type: 'object',
      description: 'Category (nested further; see the API documentation)',
    })
    expect(JSON.stringify(update)).not.toContain('$ref')
    expect(byName('get_pets_petId_photos').inputSchema).toMatchObject({ required: ['petId'] })
  })

  it('describes each operation with its summary, route and deprecation, and uses the summary as search hint', async () => {
    const { byName } = await build()
    expect(byName('showPetById').description).toBe('Info for a specific pet\n\nGET /pets/{petId}')
    expect(byName('showPetById').searchHint).toBe('Info for a specific pet')
    expect(byName('adminReset').description).toBe('Reset the store\n\nPOST /admin/reset (deprecated)')
  })

  it('uses the servers entry when no baseUrl is configured, and reports a pack that has neither', async () => {
    const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    const problems: string[] = []
    const withServer = await factory.create(config({ specInline: PETSTORE }), envWith({}, problems))
    expect(withServer.length).toBe(12)
    const noServer = PETSTORE.replace(/servers:[\s\S]*?paths:/, 'paths:')
    const none = await factory.create(config({ specInline: noServer }), envWith({}, problems))
    expect(none).toEqual([])
    expect(problems).toContain('petstore: no baseUrl is configured and the document has no servers entry')
  })
})

describe('rest_api pack calls', () => {
  it('builds path, query, header and JSON body from the arguments', async () => {
    const { byName } = await build()
    const list = await invoke(byName('listPets'), {
      limit: 5,
      tags: ['a b', 'c&d'],
      'X-Request-Id': '0b6a9a37-6f3e-4a55-a3f3-6f9b8a1b2c3d',
    })
    expect(list.isError).toBe(false)
    expect(lastSeen().url).toBe('/v1/pets?limit=5&tags=a+b&tags=c%26d')
    expect(lastSeen().headers['x-request-id']).toBe('0b6a9a37-6f3e-4a55-a3f3-6f9b8a1b2c3d')

    await invoke(byName('pets_update'), { petId: 'a/b c', body: { name: 'Rex', tag: null, category: { name: 'dogs' } } })
    expect(lastSeen().method).toBe('PUT')
    expect(lastSeen().url).toBe('/v1/pets/a%2Fb%20c')
    expect(lastSeen().headers['content-type']).toBe('application/json')
    expect(JSON.parse(lastSeen().body)).toEqual({ name: 'Rex', tag: null, category: { name: 'dogs' } })
  })

  it('serializes deepObject queries and form bodies', async () => {
    const { byName } = await build()
    await invoke(byName(LONG_COMPLETE), { storeId: 7, filter: { from: '2026-01-01', to: '2026-02-01' } })
    expect(decodeURIComponent(lastSeen().url)).toBe('/v1/stores/7/inventory/reports/complete?filter[from]=2026-01-01&filter[to]=2026-02-01')
    const fb = await invoke(byName('sendFeedback'), { body: { message: 'great & fast', stars: 5 } })
    expect(fb.content).toEqual({ status: 204, body: null })
    expect(lastSeen().headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(lastSeen().body).toBe('message=great+%26+fast&stars=5')
  })

  it('validates arguments against the derived schema before calling', async () => {
    const { byName } = await build()
    const before = seen.length
    const out = await invoke(byName('createPet'), { body: { tag: 'x' } })
    expect(out.isError).toBe(true)
    expect(out.content.errors).toEqual([{ pointer: '/body/name', message: 'body.name is required' }])
    const extra = await invoke(byName('listPets'), { limit: 5, bogus: 1 })
    expect(extra.content.errors[0].pointer).toBe('/bogus')
    expect(seen.length).toBe(before)
  })

  it('turns an API error into a tool error with status and body', async () => {
    const { byName } = await build()
    const out = await invoke(byName('showPetById'), { petId: 'missing' })
    expect(out.isError).toBe(true)
    expect(out.content.status).toBe(404)
    expect(out.content.message).toBe(`GET ${`http://127.0.0.1:${port}`}/v1/pets/missing answered 404 Not Found.`)
    expect(out.content.body).toBe('{"code":404,"message":"no such pet"}')
  })

  it('sends bearer auth from a secret and scrubs it from the echoed response', async () => {
    const { byName } = await build({ auth: { type: 'bearer', token: '${secret:PETSTORE_TOKEN}' } })
    const out = await invoke(byName('listPets'), {})
    expect(lastSeen().headers.authorization).toBe('Bearer pet-TOKEN-secret-42')
    expect(out.content.body.headers.authorization).toBe('Bearer [redacted secret:PETSTORE_TOKEN]')
    expect(JSON.stringify(out)).not.toContain('pet-TOKEN-secret-42')
  })

  it('sends basic auth built from two secrets and scrubs the encoded credential', async () => {
    const { byName } = await build({
      auth: { type: 'basic', username: '${secret:PETSTORE_USER}', password: '${secret:PETSTORE_PASSWORD}' },
    })
    const out = await invoke(byName('listPets'), {})
    const encoded = Buffer.from('svc-user:pa55-word!').toString('base64')
    expect(lastSeen().headers.authorization).toBe(`Basic ${encoded}`)
    const text = JSON.stringify(out)
    expect(text).not.toContain(encoded)
    expect(text).not.toContain('pa55-word!')
    expect(out.content.body.headers.authorization).toMatch(/^Basic \[redacted secret:PETSTORE_(USER|PASSWORD)\]$/)
  })

  it('sends an API key in the query and scrubs it from the echoed URL', async () => {
    const { byName } = await build({ auth: { type: 'apiKey', in: 'query', name: 'api_key', value: '${secret:PETSTORE_TOKEN}' } })
    const out = await invoke(byName('listPets'), { limit: 1 })
    expect(lastSeen().url).toBe('/v1/pets?limit=1&api_key=pet-TOKEN-secret-42')
    expect(out.content.body.query).toEqual([
      ['limit', '1'],
      ['api_key', '[redacted secret:PETSTORE_TOKEN]'],
    ])
    expect(JSON.stringify(out)).not.toContain('pet-TOKEN-secret-42')
  })

  it('answers with the missing secret names and makes no call', async () => {
    const { byName } = await build({ auth: { type: 'bearer', token: '${secret:NOT_SET}' } })
    const before = seen.length
    const out = await invoke(byName('listPets'), {})
    expect(out.isError).toBe(true)
    expect(out.content.missingSecrets).toEqual(['NOT_SET'])
    expect(seen.length).toBe(before)
  })

  it('refuses a pack whose baseUrl points at a loopback address that is not allow-listed', async () => {
    attempts.length = 0
    const { byName } = await build({ baseUrl: `http://127.0.0.2:${port}/v1` })
    const out = await invoke(byName('listPets'), {})
    expect(out.isError).toBe(true)
    expect(out.content.reason).toBe('denied')
    expect(attempts).toEqual([])
  })
})

describe('rest_api spec documents', () => {
  it('reads specPath through the cascade and parses each document version once', async () => {
    const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    const docs: Record<string, CascadeDocument> = {
      'apis/petstore.yaml': { path: 'apis/petstore.yaml', body: PETSTORE, version: 1, source: 'tenant' },
    }
    const env = envWith(docs)
    const params: RestApiParameters = { specPath: 'apis/petstore.yaml', baseUrl: base }
    expect((await factory.create(config(params), env)).length).toBe(12)
    expect((await factory.create(config(params), env)).length).toBe(12)
    expect(factory.parses).toBe(1)
    docs['apis/petstore.yaml'] = {
      path: 'apis/petstore.yaml',
      body: PETSTORE.replace(/\n {2}\/admin\/reset:[\s\S]*?(?=\ncomponents:)/, ''),
      version: 2,
      source: 'tenant',
    }
    const after = await factory.create(config(params), env)
    expect(after.map((s) => s.localName)).not.toContain('adminReset')
    expect(factory.parses).toBe(2)
  })

  it('keeps parsed specs within a byte budget: a second spec pushes out the first when both would not fit', async () => {
    const weight = 10 * PETSTORE.length
    const docs: Record<string, CascadeDocument> = {
      'apis/a.yaml': { path: 'apis/a.yaml', body: PETSTORE, version: 1, source: 'tenant' },
      'apis/b.yaml': { path: 'apis/b.yaml', body: PETSTORE, version: 1, source: 'tenant' },
    }
    const env = envWith(docs)
    const tight = new RestApiToolFactory(
      { http: egress, secrets, load: () => import('../../lib/tools/types/runtime') },
      { maxCachedSpecBytes: Math.floor(weight * 1.5) },
    )
    for (const specPath of ['apis/a.yaml', 'apis/b.yaml', 'apis/a.yaml']) await tight.create(config({ specPath, baseUrl: base }), env)
    expect(tight.parses).toBe(3)
    const roomy = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    for (const specPath of ['apis/a.yaml', 'apis/b.yaml', 'apis/a.yaml']) await roomy.create(config({ specPath, baseUrl: base }), env)
    expect(roomy.parses).toBe(2)
  })

  it('reports a missing or unreadable spec as a problem and publishes nothing', async () => {
    const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    const problems: string[] = []
    const docs: Record<string, CascadeDocument> = {
      'apis/broken.yaml': { path: 'apis/broken.yaml', body: 'openapi: [unclosed', version: 1, source: 'project' },
      'apis/swagger.json': { path: 'apis/swagger.json', body: '{"swagger": "2.0", "paths": {}}', version: 1, source: 'project' },
    }
    for (const specPath of ['apis/none.yaml', 'apis/broken.yaml', 'apis/swagger.json']) {
      expect(await factory.create(config({ specPath, baseUrl: base }), envWith(docs, problems))).toEqual([])
    }
    expect(problems[0]).toBe(
      "petstore: the spec document 'apis/none.yaml' does not exist in project 'p1', the tenant layer or the bundled defaults",
    )
    expect(problems[1]).toMatch(/^petstore: the OpenAPI document does not parse/)
    expect(problems[2]).toBe('petstore: Swagger 2.0 documents are not supported; convert to OpenAPI 3 first')
  })

  it('refuses a secret in the host of baseUrl when written, and in the host of a servers entry when expanded', async () => {
    const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    expect(factory.check({ specPath: 'apis/p.yaml', baseUrl: 'https://${secret:TENANT_ID}.api.example.com/v1' })).toEqual([
      {
        pointer: '/baseUrl',
        message: expect.stringContaining("a secret cannot be part of the URL's scheme, host or port (${secret:TENANT_ID})"),
      },
    ])
    expect(factory.check({ specPath: 'apis/p.yaml', baseUrl: 'https://api.example.com/${secret:TENANT_ID}/v1' })).toEqual([])
    const problems: string[] = []
    const secretServer = PETSTORE.replace(
      /servers:[\s\S]*?paths:/,
      'servers:\n  - url: "http://${secret:TENANT_ID}.example.com/v1"\npaths:',
    )
    expect(await factory.create(config({ specInline: secretServer }), envWith({}, problems))).toEqual([])
    expect(problems).toContainEqual(
      expect.stringContaining(
        "petstore: the server URL cannot be used: a secret cannot be part of the URL's scheme, host or port (${secret:TENANT_ID})",
      ),
    )
  })

  it('checks its configuration and names each problem', () => {
    const factory = new RestApiToolFactory({ http: egress, secrets, load: () => import('../../lib/tools/types/runtime') })
    expect(factory.check({})).toEqual([{ pointer: '', message: 'exactly one of specInline and specPath is required' }])
    expect(factory.check({ specInline: PETSTORE, specPath: 'x.yaml' })).toEqual([
      { pointer: '/specPath', message: 'exactly one of specInline and specPath is required' },
    ])
    expect(factory.check({ specInline: { swagger: '2.0' } })[0]).toMatchObject({ pointer: '/specInline' })
    expect(
      factory.check({
        specPath: 'apis/p.yaml',
        baseUrl: 'ftp://x',
        auth: { type: 'basic', username: '${secret:U}', token: 'x' } as never,
        headers: { 'X-Key': '${secret:bad name}' },
      }),
    ).toEqual([
      { pointer: '/auth/password', message: 'auth type basic needs password' },
      { pointer: '/auth/token', message: 'auth type basic does not use token' },
      { pointer: '/baseUrl', message: 'baseUrl must use http or https, not ftp' },
      { pointer: '/headers/X-Key', message: expect.stringContaining('is not a valid secret reference') },
    ])
  })
})

describe('rest_api pack through the ServerToolService', () => {
  it('lists sub-tools with pack labels and promptHint, and resolves both names of a shortened tool', async () => {
    // the composition registers rest_api itself; the test hands it this file's egress client and secrets
    const deps = createMemoryDeps({ egress, secrets })
    await deps.store.put({ key: { scope: scopeOf('acme', '_tenant'), path: 'apis/petstore.yaml' }, body: PETSTORE, actor: 'test' })
    const yaml = [
      'type: rest_api',
      'description: The pet store',
      'labels: [pets]',
      'promptHint: Prices are in cents.',
      'parameters:',
      '  specPath: apis/petstore.yaml',
      `  baseUrl: ${base}`,
      '  exclude: [adminReset]',
    ].join('\n')
    await deps.store.put({ key: { scope: scopeOf('acme', 'p1'), path: 'server-tools/petstore.yaml' }, body: yaml, actor: 'test' })

    const { tools, problems } = await deps.tools.listAll('acme', 'p1')
    const pack = tools.filter((t) => t.pack === 'petstore')
    expect(pack.length).toBe(11)
    expect(pack.every((t) => t.name.length <= 64)).toBe(true)
    const list = pack.find((t) => t.name === 'petstore__listPets')!
    expect(list.labels).toEqual(['pets', 'rest', 'read-only'])
    expect(list.promptHint).toBe('Prices are in cents.')
    expect(problems.map((p) => p.message)).toEqual([expect.stringContaining('multipart/form-data is not supported')])

    const short = pack.find((t) => t.aliases?.includes(`petstore__${LONG_COMPLETE}`))!
    expect(short.name).toMatch(/^petstore__getTheCompleteInventoryReportForAStoreIncluding_[0-9a-f]{6}$/)
    const byShort = await deps.tools.lookup('acme', 'p1', short.name)
    const byLong = await deps.tools.lookup('acme', 'p1', `petstore__${LONG_COMPLETE}`)
    expect(byShort?.name).toBe(short.name)
    expect(byLong?.name).toBe(short.name)
    const out = (await byLong!.invoke({ storeId: 3 }, ctx)) as { isError: boolean; content: any }
    expect(out.isError).toBe(false)
    expect(out.content.body.path).toBe('/v1/stores/3/inventory/reports/complete')
  })
})
