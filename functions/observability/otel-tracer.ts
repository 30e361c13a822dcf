/**
 * The tracing port over @opentelemetry/api: spans go to whatever SDK is registered globally (the
 * one functions/observability/otel-sdk.ts builds from OTEL_* variables, or the ADOT Lambda
 * layer's). With none registered the API would hand out non-recording spans: the "API only"
 * mode, where this port opens none at all (see sdkRegistered).
 */
import {
  type Context,
  type ContextManager,
  context,
  INVALID_SPANID,
  INVALID_TRACEID,
  type Tracer as OtelTracer,
  ProxyTracerProvider,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { type ActiveSpan, type Attributes, noopTracer, type Tracer } from '../../lib/runtime/tracer'
import { asyncFrames } from '../http/request-context'
import { FrameContextManager, LinkedContext } from './context-manager'

/** What the API's own provider delegates to while no SDK is registered (a singleton of the API). */
const UNREGISTERED = new ProxyTracerProvider().getDelegate()

/**
 * Whether an SDK is registered globally now. Until one is, a span through the API is a
 * non-recording span in a new context whose only effect is to carry its parent's ids on, which
 * the active context already does: the port skips it (a span object, a context and a promise per
 * span). Asked on every span until the answer is yes, so a provider registered later (an ADOT
 * layer's, after this module loaded) is used from its first span on. A provider of another copy
 * of the API is not this copy's class: counted as registered.
 */
export function sdkRegistered(): boolean {
  const provider = trace.getTracerProvider()
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== UNREGISTERED
}

const headerGetter = {
  keys: () => ['traceparent', 'tracestate', 'baggage'],
  get: (carrier: (name: string) => string | undefined, key: string) => carrier(key),
}

/** The port's view of an OTel span: a class, so a span costs no closures (API-only mode is on every call path). */
class Handle implements ActiveSpan {
  failed = false
  constructor(readonly span: Span) {}
  setAttributes(a: Attributes) {
    // the SDK skips undefined values itself: no copy to drop them first
    if (this.span.isRecording()) this.span.setAttributes(a)
  }
  rename(name: string) {
    this.span.updateName(name)
  }
  fail(errorClass: string, message?: string) {
    this.failed = true
    if (!this.span.isRecording()) return
    this.span.setAttribute('error.type', errorClass)
    this.span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) })
  }
}

/**
 * Ends the span when `fn` settles; a rejection marks it failed with the error's class. One `then`
 * instead of an async wrapper: under async hooks every promise costs a copy of the async context.
 */
function inSpan<T>(handle: Handle, fn: (span: ActiveSpan) => Promise<T>): Promise<T> {
  let result: Promise<T>
  try {
    result = fn(handle)
  } catch (e) {
    failed(handle, e)
    throw e
  }
  return result.then(
    (value) => {
      handle.span.end()
      return value
    },
    (e) => {
      failed(handle, e)
      throw e
    },
  )
}

function failed(handle: Handle, e: unknown) {
  if (!handle.failed) handle.fail((e as Error)?.name ?? 'Error')
  handle.span.end()
}

export function otelTracer(name = 'server-tools', version?: string, local?: LocalSdk): Tracer {
  const tracer = local?.tracer ?? trace.getTracer(name, version)
  // the local SDK's contexts live in the request's frames whichever context manager won the global registration
  const contexts: Pick<ContextManager, 'active' | 'with' | 'bind'> = local ? frames : context
  const options = { internal: { kind: SpanKind.INTERNAL }, server: { kind: SpanKind.SERVER }, client: { kind: SpanKind.CLIENT } }
  let registered = local !== undefined
  const live = () => registered || (registered = sdkRegistered())
  return {
    span<T>(spanName: string, opts: { kind?: keyof typeof options; attributes?: Attributes }, fn: (span: ActiveSpan) => Promise<T>) {
      if (local) return localSpan(tracer, spanName, options[opts.kind ?? 'internal'], opts.attributes, fn)
      if (!live()) return noopTracer.span(spanName, opts, fn)
      const parent = context.active()
      const span = tracer.startSpan(spanName, options[opts.kind ?? 'internal'], parent)
      // attributes are set after the start, and only on a recording span (an unsampled one keeps none)
      if (opts.attributes && span.isRecording()) span.setAttributes(opts.attributes)
      return context.with(trace.setSpan(parent, span), inSpan<T>, undefined, new Handle(span), fn)
    },
    inject(headers) {
      propagation.inject(contexts.active(), headers)
    },
    continueFrom(header, fn) {
      // with neither an SDK nor a propagator registered, an extracted context would only be carried, never read
      if (!live() && propagation.fields().length === 0) return fn()
      // most requests carry no trace of their own: then there is nothing to extract or to enter
      if (header('traceparent') === undefined && header('baggage') === undefined) return fn()
      return contexts.with(propagation.extract(contexts.active(), header, headerGetter), fn)
    },
    bind(fn) {
      return contexts.bind(contexts.active(), fn)
    },
    ids() {
      const c = trace.getSpan(contexts.active())?.spanContext()
      // an SDK's ids and an extracted parent's are valid hex already; only a suppressed span's are the invalid zeros
      return c && c.traceId !== INVALID_TRACEID && c.spanId !== INVALID_SPANID ? { traceId: c.traceId, spanId: c.spanId } : undefined
    },
  }
}

/**
 * The SDK this process started (otel-sdk.ts), whose context manager keeps the context in the
 * request's async frame (FrameContextManager). Its spans go to its tracer directly, and a span's
 * context is read from and entered into the frame directly: through the API, each span looked up
 * the global tracer provider and context manager four times, copied its parent context's map, and
 * made closures for the hop; a span here is the SDK's span, one LinkedContext and one frame.
 * The port's other context work (continueFrom, inject, bind, ids) goes through the frames too, so
 * it is one context even where another SDK won the global registration (an ADOT layer's, loaded
 * first; a second SDK in one process).
 */
export interface LocalSdk {
  tracer: OtelTracer
}

const frames = new FrameContextManager()

function localSpan<T>(
  tracer: OtelTracer,
  name: string,
  options: { kind: SpanKind },
  attributes: Attributes | undefined,
  fn: (span: ActiveSpan) => Promise<T>,
): Promise<T> {
  const frame = asyncFrames.current()
  const parent = (frame?.trace as Context | undefined) ?? ROOT_CONTEXT
  const span = tracer.startSpan(name, options, parent)
  if (attributes && span.isRecording()) span.setAttributes(attributes)
  const handle = new Handle(span)
  // what FrameContextManager.with(trace.setSpan(parent, span), …) enters, built without the API's copy
  return asyncFrames.run({ request: frame?.request, trace: trace.setSpan(LinkedContext.over(parent), span) }, () => inSpan(handle, fn))
}
