/**
 * Traces with the real OpenTelemetry SDK, built the way a deployment builds it: the `sdk` mode of
 * functions/observability with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver this
 * file runs on 127.0.0.1, plus an in-memory exporter to read the span tree. The service runs on
 * its AWS adapters against dynalite and s3rver (store spans), and a `rest` tool calls a loopback
 * server of this file (the only allow-listed host is 127.0.0.1).
 *
 * One agent turn over REST (the invoke route) and one over MCP (the official client SDK) each
 * arrive with a W3C traceparent; each must come out as one trace: the server span, the scripted
 * tool's call, its sandbox run, the sibling call the script makes, the outbound REST call (whose
 * server receives the same trace id) and the store calls.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createAwsDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { createObservability, type Observability } from '../../functions/observability'
import { deploymentAllowList } from '../../lib/egress/allow-list'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { auditTableSpec } from '../../lib/stores/aws/audit-store'
import { destroyAwsClients } from '../../lib/stores/aws/clients'
import { observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { client, TEST_SECRET, tokenFor } from '../support/http'
import { connectMcp } from '../support/mcp'
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp'

const memory = new InMemorySpanExporter()
const SECRET_VALUE = 'sk-trace-test-8f3a1c'
const ARGUMENT_VALUE = 'Zzyzx-argument-value'

/** The downstream API a `rest` tool calls: records the traceparent each request carries. */
let api: http.Server
const downstream: { traceparent?: string }[] = []
let receiver: OtlpReceiver

let deps: ReturnType<typeof createAwsDeps>
let observability: Observability
let app: ReturnType<typeof createApp>
let token: string

const listen = (server: http.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  )

beforeAll(async () => {
  api = http.createServer((req, res) => {
    downstream.push({ traceparent: req.headers.traceparent as string | undefined })
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"temperature":21}')
  })
  const [apiBase, started] = await Promise.all([listen(api), startOtlpReceiver()])
  receiver = started
  const receiverBase = receiver.base
  // what a deployment sets; the SDK's exporter reads it itself
  vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', receiverBase)
  vi.stubEnv('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/json')
  observability = createObservability({
    mode: 'sdk',
    modules: { api: () => import('../../functions/lazy/otel-api'), sdk: () => import('../../functions/lazy/otel-sdk') },
    sdkOptions: { extraSpanProcessors: [new SimpleSpanProcessor(memory)], metricExporter: false },
  })

  const suffix = uniqueSuffix()
  const names = {
    documentsTable: `tr-docs-${suffix}`,
    toolUsageTable: `tr-usage-${suffix}`,
    processesTable: `tr-procs-${suffix}`,
    observedLimitsTable: `tr-limits-${suffix}`,
    auditTable: `tr-audit-${suffix}`,
    bucket: `tr-blobs-${suffix}`,
  }
  const secrets = new MemorySecretStore()
  await secrets.put('acme', 'API_KEY', SECRET_VALUE)
  deps = createAwsDeps({
    ...names,
    jwtSecret: TEST_SECRET,
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    dynamoEndpoint: inject('dynamoEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
    secrets,
    egressAllow: deploymentAllowList({ EGRESS_ALLOW_HOSTS: '127.0.0.1' }),
    observability,
  })
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(names.documentsTable)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(names.toolUsageTable)),
    ensureTable(deps.clients.dynamo, processesTableSpec(names.processesTable)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(names.observedLimitsTable)),
    ensureTable(deps.clients.dynamo, auditTableSpec(names.auditTable)),
    ensureBucket(deps.clients.s3, names.bucket),
  ])
  app = createApp(deps)
  token = await tokenFor('acme')
  const put = (name: string, yaml: string) => client(app, token).put(`/brain/acme/projects/p1/server-tools/${name}`, yaml)
  expect(
    (
      await put(
        'weather',
        [
          'type: rest',
          'description: The weather in a city.',
          'primary: true',
          'parameters:',
          `  url: ${apiBase}/weather?city={{city}}`,
          '  headers:',
          '    Authorization: Bearer ${secret:API_KEY}',
          '  inputs:',
          '    - { name: city, type: string, description: City }',
          '',
        ].join('\n'),
      )
    ).status,
  ).toBe(201)
  expect(
    (
      await put(
        'forecast',
        [
          'type: scripted',
          'description: The forecast, from the weather tool.',
          'primary: true',
          'parameters:',
          '  inputs:',
          '    - { name: city, type: string, description: City }',
          '  source: |',
          "    vance.tools.call('weather', { city }).body.temperature",
          '',
        ].join('\n'),
      )
    ).status,
  ).toBe(201)
}, 60_000)

afterAll(async () => {
  destroyAwsClients(deps.clients)
  await Promise.all([new Promise((r) => api.close(r)), receiver.close()])
  vi.unstubAllEnvs()
})

const hex = (n: number) =>
  Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16))
    .join('')
    .replace(/^0/, 'a')

/** The finished spans of one trace, by name, with a way to walk up from any of them. */
function traceOf(traceId: string) {
  const spans = memory.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId)
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId
  const ancestors = (s: ReadableSpan): string[] => {
    const out: string[] = []
    for (let p = byId.get(parentOf(s) ?? ''); p; p = byId.get(parentOf(p) ?? '')) out.push(p.name)
    return out
  }
  const named = (name: string | RegExp) => spans.filter((s) => (typeof name === 'string' ? s.name === name : name.test(s.name)))
  return { spans, parentOf, ancestors, named }
}

function expectOneTurn(traceId: string, incomingSpanId: string) {
  const t = traceOf(traceId)
  // every server span continues the caller's span; nothing in the trace starts a trace of its own
  const servers = t.spans.filter((s) => s.kind === 1)
  expect(servers.length).toBeGreaterThan(0)
  for (const s of servers) expect(t.parentOf(s)).toBe(incomingSpanId)
  for (const s of t.spans.filter((x) => x.kind !== 1)) expect(t.parentOf(s), s.name).toBeDefined()

  const [forecast] = t.named('execute_tool forecast')
  expect(forecast.attributes).toMatchObject({
    'gen_ai.tool.name': 'forecast',
    'gen_ai.tool.type': 'scripted',
    'server_tools.tenant': 'acme',
    'server_tools.project': 'p1',
    'server_tools.outcome': 'ok',
  })
  const [run] = t.named('sandbox.run')
  expect(t.ancestors(run)).toContain('execute_tool forecast')
  // the sibling call the script makes, under the sandbox run (it arrives as a worker message)
  const [weather] = t.named('execute_tool weather')
  expect(t.ancestors(weather)).toEqual(expect.arrayContaining(['sandbox.run', 'execute_tool forecast']))
  expect(weather.attributes['server_tools.depth']).toBe(1)
  const [get] = t.named('GET')
  expect(get.kind).toBe(2) // CLIENT
  expect(get.attributes).toMatchObject({ 'http.request.method': 'GET', 'server.address': '127.0.0.1', 'http.response.status_code': 200 })
  expect(t.ancestors(get)[0]).toBe('execute_tool weather')
  // store calls: DynamoDB through our client, as client spans with the operation
  const stores = t.spans.filter((s) => s.attributes['db.system'] === 'dynamodb')
  expect(stores.length).toBeGreaterThan(0)
  expect(stores[0].kind).toBe(2)
  expect(stores[0].attributes['db.operation.name']).toMatch(/^(GetItem|Query|BatchGetItem|PutItem|UpdateItem)$/)
  // the downstream server joined the trace: its traceparent names our client span as its parent
  const seen = downstream.filter((d) => d.traceparent?.includes(traceId))
  expect(seen).toHaveLength(1)
  expect(seen[0].traceparent).toBe(`00-${traceId}-${get.spanContext().spanId}-01`)
  // never a secret or an argument among the attributes
  const attributes = JSON.stringify(t.spans.map((s) => s.attributes))
  expect(attributes).not.toContain(SECRET_VALUE)
  expect(attributes).not.toContain(ARGUMENT_VALUE)
  return t
}

describe('one agent turn, one trace', () => {
  it('over REST: the invoke route from the incoming traceparent through the tool, its sandbox, the sibling call, the stores and the outbound call', async () => {
    const traceId = hex(32)
    const incoming = hex(16)
    const res = await app.request('/brain/acme/projects/p1/tools/forecast/invoke', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${incoming}-01` },
      body: JSON.stringify({ params: { city: ARGUMENT_VALUE } }),
    })
    expect(await res.json()).toMatchObject({ isError: false, content: { value: 21 } })
    await observability.flush()
    const t = expectOneTurn(traceId, incoming)
    expect(t.named(/^POST \/brain\/:tenant\/projects\/:project\/tools\/:name\/invoke$/)).toHaveLength(1)
    // and the OTLP/HTTP exporter, configured by OTEL_EXPORTER_OTLP_ENDPOINT, sent the same trace to the receiver
    expect(receiver.traces.some((body) => body.includes(traceId))).toBe(true)
  })

  it('from code: execute_code’s calls are spans under its own, through the sandbox run', async () => {
    const api = client(app, token)
    expect((await api.put('/brain/acme/projects/p1/documents/recipes/coder.yaml', 'engine: default\nsurface: code\n')).status).toBeLessThan(
      300,
    )
    const { id } = (await (await api.post('/brain/acme/projects/p1/processes', { recipe: 'coder' })).json()) as { id: string }
    const traceId = hex(32)
    const res = await app.request(`/brain/acme/projects/p1/processes/${id}/tool-calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-${hex(16)}-01` },
      body: JSON.stringify({ name: 'execute_code', params: { code: `(await tools.weather({ city: 'Oslo' })).body.temperature` } }),
    })
    expect(await res.json()).toMatchObject({ isError: false, content: { value: 21 } })
    await observability.flush()
    const t = traceOf(traceId)
    const [weather] = t.named('execute_tool weather')
    expect(t.ancestors(weather)).toEqual(expect.arrayContaining(['sandbox.run', 'execute_tool execute_code']))
    expect(weather.attributes['server_tools.depth']).toBe(1)
    expect(weather.attributes['server_tools.origin']).toBe('code')
  })

  it('over MCP: a tools/call from the official client SDK, every request of the session in the caller’s trace', async () => {
    const traceId = hex(32)
    const incoming = hex(16)
    const traced: typeof fetch = (url, init) => {
      const headers = new Headers(init?.headers)
      headers.set('traceparent', `00-${traceId}-${incoming}-01`)
      return Promise.resolve(app.request(String(url), { ...init, headers }))
    }
    const { client: mcp } = await connectMcp('http://127.0.0.1/brain/acme/projects/p1/mcp', token, { fetch: traced })
    const result = await mcp.callTool({ name: 'forecast', arguments: { city: ARGUMENT_VALUE } })
    expect(result).toMatchObject({ isError: false })
    await mcp.close()
    await observability.flush()
    const t = expectOneTurn(traceId, incoming)
    expect(t.named(/^POST \/brain\/:tenant\/projects\/:project\/mcp$/).length).toBeGreaterThanOrEqual(2)
    expect(receiver.traces.some((body) => body.includes(traceId))).toBe(true)
  })
})
