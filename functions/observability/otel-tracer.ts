/**
 * The tracing port over @opentelemetry/api: spans go to whatever SDK is registered globally (the
 * one functions/observability/otel-sdk.ts builds from OTEL_* variables, or the ADOT Lambda
 * layer's). With none registered the API hands out non-recording spans: the "API only" mode.
 */
import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { ActiveSpan, Attributes, SpanKind as PortSpanKind, Tracer } from '../../lib/runtime/tracer'

const KIND: Record<PortSpanKind, SpanKind> = { internal: SpanKind.INTERNAL, server: SpanKind.SERVER, client: SpanKind.CLIENT }

const headerGetter = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier: (name: string) => string | undefined, key: string) => carrier(key),
}

export function otelTracer(name = 'server-tools', version?: string): Tracer {
  const tracer = trace.getTracer(name, version)
  return {
    span(spanName, options, fn) {
      return tracer.startActiveSpan(
        spanName,
        { kind: KIND[options.kind ?? 'internal'], attributes: defined(options.attributes) },
        async (span) => {
          let failed = false
          const handle: ActiveSpan = {
            setAttributes: (a) => span.setAttributes(defined(a)),
            rename: (n) => span.updateName(n),
            fail: (errorClass, message) => {
              failed = true
              span.setAttribute('error.type', errorClass)
              span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) })
            },
          }
          try {
            return await fn(handle)
          } catch (e) {
            if (!failed) handle.fail((e as Error)?.name ?? 'Error')
            throw e
          } finally {
            span.end()
          }
        },
      )
    },
    inject(headers) {
      propagation.inject(context.active(), headers)
    },
    continueFrom(header, fn) {
      return context.with(propagation.extract(context.active(), header, headerGetter), fn)
    },
    bind(fn) {
      return context.bind(context.active(), fn)
    },
    ids() {
      const span: Span | undefined = trace.getActiveSpan()
      const c = span?.spanContext()
      return c && trace.isSpanContextValid(c) ? { traceId: c.traceId, spanId: c.spanId } : undefined
    },
  }
}

function defined(a: Attributes | undefined): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {}
  if (a) for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v
  return out
}
