/**
 * The `api` tracing mode: the port over @opentelemetry/api with no SDK of its own, for an SDK
 * someone else registers (the ADOT Lambda layer). Until one is registered the port opens no span;
 * once one is, even after the port was built, every span goes to it. The real SDK's tracer
 * provider, registered as the layer registers its own, stands in for it; this file runs in a process of its own (vitest's forks
 * pool), so the global registration stays here.
 */
import { context, propagation, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { afterAll, describe, expect, it } from 'vitest'
import { otelTracer, sdkRegistered } from '../../functions/observability/otel-tracer'

afterAll(() => {
  trace.disable()
  context.disable()
  propagation.disable()
})

describe('API-only tracing', () => {
  it('opens no span before an SDK registers, and records every span from the one registered after the port was built', async () => {
    const tracer = otelTracer()
    expect(sdkRegistered()).toBe(false)
    const before = await tracer.span('before', { kind: 'server', attributes: { 'http.request.method': 'GET' } }, async (span) => {
      span.setAttributes({ 'http.response.status_code': 200 })
      return tracer.ids()
    })
    expect(before).toBeUndefined()

    // what an ADOT layer's wrapper does (provider, async-local-storage context, W3C propagation), here after the port exists
    const memory = new InMemorySpanExporter()
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] })
    provider.register()
    expect(sdkRegistered()).toBe(true)

    const caller = '4bf92f3577b34da6a3ce929d0e0e4736'
    const headers: Record<string, string> = { traceparent: `00-${caller}-00f067aa0ba902b7-01` }
    await tracer.continueFrom(
      (name) => headers[name],
      () =>
        tracer.span('POST /invoke', { kind: 'server', attributes: { 'http.request.method': 'POST' } }, (server) =>
          tracer.span('execute_tool whoami', { attributes: { 'gen_ai.tool.name': 'whoami' } }, async () => {
            server.setAttributes({ 'http.response.status_code': 200 })
          }),
        ),
    )
    await provider.forceFlush()
    const spans = memory.getFinishedSpans()
    expect(spans.map((s) => [s.name, s.spanContext().traceId])).toEqual([
      ['execute_tool whoami', caller],
      ['POST /invoke', caller],
    ])
    expect(spans[0].parentSpanContext?.spanId).toBe(spans[1].spanContext().spanId)
    expect(spans[1].attributes).toEqual({ 'http.request.method': 'POST', 'http.response.status_code': 200 })
    expect(spans.some((s) => s.name === 'before')).toBe(false)
  })
})
