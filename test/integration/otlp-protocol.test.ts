/**
 * The trace exporter speaks the OTLP/HTTP protocol the standard variables name: http/protobuf
 * (the specification's default, and ours), http/json, nothing else. Each test posts one span to
 * an OTLP receiver on 127.0.0.1 through a tracer provider of its own (none is registered globally,
 * except by the sampling test, which starts the SDK as the service does; this file runs in a
 * process of its own).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { TraceState } from '@opentelemetry/core'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { EncodedBatchProcessor } from '../../functions/observability/encoded-batch-processor'
import { spanExporterFromEnv, startOtelSdk, ThreadedBatchExporter } from '../../functions/observability/otel-sdk'
import { decodeTraceRequest } from '../support/otlp-protobuf'

let receiver: http.Server
let endpoint: string
const posts: { path?: string; type?: string; encoding?: string; body: Buffer }[] = []
/** How the receiver answers: at once (200), after `release()` (a slow collector), refusing (400), or busy once (503, Retry-After: 0). */
const collector: { answer: 'ok' | 'held' | 'refuse' | 'busy-once'; held: (() => void)[] } = { answer: 'ok', held: [] }

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      posts.push({
        path: req.url,
        type: req.headers['content-type'],
        encoding: req.headers['content-encoding'],
        body: Buffer.concat(chunks),
      })
      const answer = () => res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end()
      if (collector.answer === 'refuse') res.writeHead(400).end('no')
      else if (collector.answer === 'busy-once') {
        collector.answer = 'ok'
        res.writeHead(503, { 'retry-after': '0' }).end()
      } else if (collector.answer === 'held') collector.held.push(answer)
      else answer()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()))
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
})
afterAll(() => new Promise((r) => receiver.close(r)))
afterEach(() => {
  vi.unstubAllEnvs()
  posts.length = 0
  collector.answer = 'ok'
  for (const release of collector.held.splice(0)) release()
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

/**
 * How long a post may take to appear: the export thread starts on the first batch, and on a busy
 * machine (CI runs two test files at a time on 2 cores) its start alone took over waitFor's
 * default 1 s. A wait for a condition, not a timing: a fast post passes at once.
 */
const THREAD_START = { timeout: 20_000, interval: 20 }

describe('the default protobuf export: each span written as it ends (EncodedBatchProcessor), posted from the export thread', () => {
  /** A provider with the deployment's processor and exporter, and an in-memory copy of what it was handed. */
  function providerWith(options: ConstructorParameters<typeof EncodedBatchProcessor>[1] = {}) {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    const memory = new InMemorySpanExporter()
    const processor = new EncodedBatchProcessor(new ThreadedBatchExporter(), options)
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'server-tools', 'deployment.environment.name': 'tést', 'host.cpus': 2 }),
      spanProcessors: [processor, new SimpleSpanProcessor(memory)],
    })
    return { provider, processor, memory }
  }

  it("posts the request the SDK's own protobuf serializer writes for the same spans, field for field, across value kinds and sizes", async () => {
    const { provider, memory } = providerWith()
    const tracer = provider.getTracer('server-tools', '1.2.3')
    const other = provider.getTracer('other-scope')
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
      traceState: new TraceState('vendor=a,other=b'),
    })
    const server = tracer.startSpan('POST /brain/:tenant/invoke', { kind: SpanKind.SERVER }, remote)
    server.setAttributes({
      'url.path': `/brain/acme/${'p'.repeat(200)}`,
      'http.response.status_code': 200,
      'server_tools.city': 'Zürich ✓ 東京',
      'long.value': 'x'.repeat(20_000),
      negative: -7,
      big: 2 ** 40,
      'big.negative': -(2 ** 40),
      ratio: 3.5,
      'tiny.negative': -0.25,
      flag: true,
      off: false,
      names: ['a', 'ü', ''],
      counts: [1, -2, 3],
      ratios: [0.5, 1.5],
      flags: [true, false],
      holes: ['a', null as unknown as string, 'c'],
    })
    server.addEvent('retry', { attempt: 2, 'error.type': 'timeout' })
    const child = tracer.startSpan(
      'execute_tool whoami',
      {
        links: [
          {
            context: { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 0, traceState: new TraceState('k=v') },
            attributes: { why: 'retry of' },
          },
        ],
      },
      trace.setSpan(remote, server),
    )
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'upstream said no' })
    child.end()
    const client = other.startSpan('GET', { kind: SpanKind.CLIENT, attributes: { 'server.port': 443 } }, trace.setSpan(ROOT_CONTEXT, child))
    client.setStatus({ code: SpanStatusCode.OK })
    client.end()
    server.end()
    await provider.forceFlush()
    const finished = memory.getFinishedSpans()
    await provider.shutdown()

    expect(posts).toHaveLength(1)
    expect(posts[0]).toMatchObject({ path: '/v1/traces', type: 'application/x-protobuf' })
    const ours = decodeTraceRequest(posts[0].body)
    const sdks = decodeTraceRequest(Buffer.from(ProtobufTraceSerializer.serializeRequest(finished)!))
    expect(ours).toEqual(sdks)
    // and it is the trace that was made, not two empty ones
    const spans = ours[0].scopeSpans.flatMap((s) => s.spans.map((span) => [s.scope.name, span.name, span.traceId]))
    expect(spans).toEqual([
      ['server-tools', 'execute_tool whoami', '4bf92f3577b34da6a3ce929d0e0e4736'],
      ['server-tools', 'POST /brain/:tenant/invoke', '4bf92f3577b34da6a3ce929d0e0e4736'],
      ['other-scope', 'GET', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ])
    expect(ours[0].scopeSpans[0].spans[1].attributes['server_tools.city']).toBe('Zürich ✓ 東京')
  })

  it('posts a batch when it holds maxExportBatchSize spans, and drops (and counts) the spans beyond maxQueueSize waiting, batches out for export included', async () => {
    collector.answer = 'held'
    const { provider, processor } = providerWith({ maxExportBatchSize: 3, maxQueueSize: 4, scheduledDelayMillis: 60_000 })
    const tracer = provider.getTracer('server-tools')
    const end = (name: string) => tracer.startSpan(name, {}, ROOT_CONTEXT).end()
    for (const name of ['a', 'b', 'c']) end(name) // a full batch: posted at once
    await vi.waitFor(() => expect(posts).toHaveLength(1), THREAD_START)
    for (const name of ['d', 'e', 'f']) end(name) // 3 in flight + 1 open = 4 waiting: e and f dropped
    expect(processor.lost.dropped).toBe(2)
    collector.answer = 'ok'
    for (const release of collector.held.splice(0)) release()
    await provider.forceFlush()
    const names = posts.map((p) => decodeTraceRequest(p.body)[0].scopeSpans[0].spans.map((s) => s.name))
    expect(names).toEqual([['a', 'b', 'c'], ['d']])
    await provider.shutdown()
  })

  it('keeps up to four batches out for export while the collector has not answered, and posts the rest as answers come', async () => {
    collector.answer = 'held'
    const { provider, processor } = providerWith({ maxExportBatchSize: 1, maxQueueSize: 100, scheduledDelayMillis: 60_000 })
    const tracer = provider.getTracer('server-tools')
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) tracer.startSpan(name, {}, ROOT_CONTEXT).end()
    await vi.waitFor(() => expect(posts).toHaveLength(4), THREAD_START)
    await new Promise((r) => setTimeout(r, 50))
    expect(posts).toHaveLength(4)
    collector.answer = 'ok'
    for (const release of collector.held.splice(0)) release()
    await provider.forceFlush()
    const names = posts.map((p) => decodeTraceRequest(p.body)[0].scopeSpans[0].spans[0].name)
    expect(names.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    expect(processor.lost).toEqual({ dropped: 0, failed: 0 })
    await provider.shutdown()
  })

  it('fails the flush, with the number of spans lost, when the collector refuses the batch', async () => {
    collector.answer = 'refuse'
    const { provider, processor } = providerWith()
    provider.getTracer('server-tools').startSpan('refused', {}, ROOT_CONTEXT).end()
    await expect(processor.forceFlush()).rejects.toThrow(/^1 spans were not exported/)
    expect(processor.lost.failed).toBe(1)
    expect(posts).toHaveLength(1)
  })

  it('posts the batch again when the collector answers 503 with Retry-After, and gzipped when OTEL_EXPORTER_OTLP_COMPRESSION says gzip', async () => {
    collector.answer = 'busy-once'
    vi.stubEnv('OTEL_EXPORTER_OTLP_COMPRESSION', 'gzip')
    const { provider } = providerWith()
    provider.getTracer('server-tools').startSpan('retried', {}, ROOT_CONTEXT).end()
    await provider.forceFlush()
    expect(posts.map((p) => p.encoding)).toEqual(['gzip', 'gzip'])
    const decoded = decodeTraceRequest(gunzipSync(posts[1].body))
    expect(decoded[0].scopeSpans[0].spans.map((s) => s.name)).toEqual(['retried'])
    await provider.shutdown()
  })

  it('is what the SDK uses when no protocol is named (and not for http/json)', async () => {
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    const { spanProcessorFromEnv } = await import('../../functions/observability/otel-sdk')
    expect(spanProcessorFromEnv({})).toBeInstanceOf(EncodedBatchProcessor)
    expect(spanProcessorFromEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).not.toBeInstanceOf(EncodedBatchProcessor)
  })
})
