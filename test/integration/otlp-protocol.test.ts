/**
 * The trace exporter speaks the OTLP/HTTP protocol the standard variables name: http/protobuf
 * (the specification's default, and ours), http/json, nothing else. Each test posts one span to
 * an OTLP receiver on 127.0.0.1 through a tracer provider of its own (none is registered globally,
 * except by the sampling test, which starts the SDK as the service does; this file runs in a
 * process of its own).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { spanExporterFromEnv, startOtelSdk } from '../../functions/observability/otel-sdk'

let receiver: http.Server
let endpoint: string
const posts: { path?: string; type?: string; body: Buffer }[] = []

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      posts.push({ path: req.url, type: req.headers['content-type'], body: Buffer.concat(chunks) })
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()))
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
})
afterAll(() => new Promise((r) => receiver.close(r)))
afterEach(() => {
  vi.unstubAllEnvs()
  posts.length = 0
})

/** Ends one span through `env`'s exporter; its trace id and what the receiver got. */
async function exportOne(env: Record<string, string>) {
  for (const [k, v] of Object.entries({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, ...env })) vi.stubEnv(k, v)
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporterFromEnv(process.env))] })
  const span = provider.getTracer('test').startSpan('execute_tool whoami', { attributes: { 'gen_ai.tool.name': 'whoami' } })
  span.end()
  await provider.forceFlush()
  await provider.shutdown()
  return { traceId: span.spanContext().traceId, posts }
}

describe('OTLP/HTTP protocol', () => {
  it('is protobuf when no variable names one: the trace id travels as 16 bytes', async () => {
    const { traceId, posts } = await exportOne({})
    expect(posts).toHaveLength(1)
    expect(posts[0]).toMatchObject({ path: '/v1/traces', type: 'application/x-protobuf' })
    expect(posts[0].body.includes(Buffer.from(traceId, 'hex'))).toBe(true)
    expect(posts[0].body.includes(Buffer.from('execute_tool whoami'))).toBe(true)
  })

  it('is JSON when OTEL_EXPORTER_OTLP_PROTOCOL says http/json, and the traces-specific variable wins over it', async () => {
    const { traceId, posts } = await exportOne({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    })
    expect(posts).toHaveLength(1)
    expect(posts[0].type).toBe('application/json')
    const body = JSON.parse(posts[0].body.toString('utf8'))
    expect(body.resourceSpans[0].scopeSpans[0].spans[0]).toMatchObject({ traceId, name: 'execute_tool whoami' })
  })

  it('refuses a protocol it cannot speak, naming it (the service then serves on without traces)', () => {
    expect(() => spanExporterFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/'grpc' is not supported/)
  })
})

describe('sampling', () => {
  it('follows OTEL_TRACES_SAMPLER: parent-based ratio 0 records no trace of its own, yet every trace a sampled caller started', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    vi.stubEnv('OTEL_TRACES_SAMPLER', 'parentbased_traceidratio')
    vi.stubEnv('OTEL_TRACES_SAMPLER_ARG', '0')
    const memory = new InMemorySpanExporter()
    const sdk = startOtelSdk({ metricExporter: false, extraSpanProcessors: [new SimpleSpanProcessor(memory)] })
    try {
      const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }
      const headers: Record<string, string> = { traceparent: `00-${caller.traceId}-${caller.spanId}-01` }
      await sdk.tracer.span('unsampled root', {}, async () => {})
      await sdk.tracer.continueFrom(
        (name) => headers[name],
        () => sdk.tracer.span('POST /invoke', { kind: 'server' }, async () => {}),
      )
      await sdk.flush()
      expect(memory.getFinishedSpans().map((s) => [s.name, s.spanContext().traceId])).toEqual([['POST /invoke', caller.traceId]])
    } finally {
      await sdk.shutdown()
    }
  })
})
