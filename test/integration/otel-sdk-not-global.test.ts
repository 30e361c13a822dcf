/**
 * The SDK mode uses the SDK it started directly (functions/observability/otel-tracer.ts,
 * LocalSdk), whether or not it won the global registration: an ADOT layer's SDK may have
 * registered first (its wrapper loads before the handler), and then the API's context manager
 * is that SDK's. The port's spans, the incoming `traceparent`, the outgoing one and the log
 * line's ids must still be one trace. This file runs in a process of its own (vitest forks).
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { expect, it } from 'vitest'
import { startOtelSdk } from '../../functions/observability/otel-sdk'

it('continues the caller’s trace, injects its own span and names it in log ids when another SDK registered globally first', async () => {
  const layer = new InMemorySpanExporter()
  // what an ADOT layer does before the handler loads: a provider with the SDK's own async-hooks context manager
  new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(layer)] }).register()
  const memory = new InMemorySpanExporter()
  const sdk = startOtelSdk({
    spanExporter: new InMemorySpanExporter(),
    metricExporter: false,
    extraSpanProcessors: [new SimpleSpanProcessor(memory)],
  })
  const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }
  const incoming: Record<string, string> = { traceparent: `00-${caller.traceId}-${caller.spanId}-01` }
  const outgoing: Record<string, string> = {}
  let ids: { traceId: string; spanId: string } | undefined
  let finished: ReturnType<InMemorySpanExporter['getFinishedSpans']>
  try {
    await sdk.tracer.continueFrom(
      (name) => incoming[name],
      () =>
        sdk.tracer.span('POST /invoke', { kind: 'server' }, async () => {
          await new Promise<void>((r) => setImmediate(r))
          await sdk.tracer.span('execute_tool whoami', {}, async () => {
            sdk.tracer.inject(outgoing)
            ids = sdk.tracer.ids()
          })
        }),
    )
    await sdk.flush()
    // read before shutdown: an in-memory exporter forgets its spans when it shuts down
    finished = memory.getFinishedSpans()
    expect(layer.getFinishedSpans()).toHaveLength(0)
  } finally {
    await sdk.shutdown()
  }
  const spans = Object.fromEntries(finished.map((s) => [s.name, s]))
  const server = spans['POST /invoke'].spanContext()
  const tool = spans['execute_tool whoami'].spanContext()
  expect([server.traceId, spans['POST /invoke'].parentSpanContext?.spanId]).toEqual([caller.traceId, caller.spanId])
  expect([tool.traceId, spans['execute_tool whoami'].parentSpanContext?.spanId]).toEqual([caller.traceId, server.spanId])
  expect(outgoing.traceparent).toBe(`00-${caller.traceId}-${tool.spanId}-01`)
  expect(ids).toEqual({ traceId: caller.traceId, spanId: tool.spanId })
})
