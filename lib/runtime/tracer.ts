/**
 * Tracing port. lib/ opens spans through this interface only; the composition root decides whether
 * they go nowhere (noopTracer, the default), to memory (tests of lib/), or to OpenTelemetry
 * (functions/observability/otel-tracer.ts, over @opentelemetry/api).
 *
 * Attributes never carry a secret or a tool's arguments: callers pass names, kinds, ids, counts
 * and outcomes only.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

export type SpanKind = 'internal' | 'server' | 'client'
export type AttributeValue = string | number | boolean | string[]
export type Attributes = Record<string, AttributeValue | undefined>

export interface ActiveSpan {
  setAttributes(attributes: Attributes): void
  /** A better name, once known (a server span learns its route after routing). */
  rename(name: string): void
  /** Marks the span failed with an error class (`error.type`), without the message when it may carry data. */
  fail(errorClass: string, message?: string): void
}

export interface SpanIds {
  traceId: string
  spanId: string
}

export interface Tracer {
  /**
   * Runs `fn` in a new span, a child of the active one, and ends the span when `fn` settles. A
   * throw marks the span failed with the error's class and is rethrown.
   */
  span<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes }, fn: (span: ActiveSpan) => Promise<T>): Promise<T>
  /** Adds the active span's `traceparent` (and `tracestate`) to outgoing headers. */
  inject(headers: Record<string, string>): void
  /** Runs `fn` with the trace context of incoming headers (W3C `traceparent`) as its parent. */
  continueFrom<T>(header: (name: string) => string | undefined, fn: () => T): T
  /** `fn` bound to the active context, for callbacks that fire outside it (a worker's messages). */
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R
  /** The active span's ids, for log lines; undefined outside any recorded span. */
  ids(): SpanIds | undefined
}

const noopSpan: ActiveSpan = { setAttributes() {}, rename() {}, fail() {} }

export const noopTracer: Tracer = {
  span: (_name, _options, fn) => fn(noopSpan),
  inject() {},
  continueFrom: (_header, fn) => fn(),
  bind: (fn) => fn,
  ids: () => undefined,
}

/** A span as MemoryTracer keeps it. */
export interface RecordedSpan extends SpanIds {
  name: string
  kind: SpanKind
  parentSpanId?: string
  attributes: Record<string, AttributeValue>
  status: 'ok' | 'error'
  errorClass?: string
  ended: boolean
}

/** Keeps every span with its parent (by async context), so tests of lib/ can read the tree. */
export class MemoryTracer implements Tracer {
  readonly spans: RecordedSpan[] = []
  private readonly active = new AsyncLocalStorage<RecordedSpan | { traceId: string; spanId: string; remote: true }>()
  private next = 1

  async span<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes }, fn: (span: ActiveSpan) => Promise<T>): Promise<T> {
    const parent = this.active.getStore()
    const recorded: RecordedSpan = {
      name,
      kind: options.kind ?? 'internal',
      traceId: parent?.traceId ?? hex(this.next++, 32),
      spanId: hex(this.next++, 16),
      ...(parent ? { parentSpanId: parent.spanId } : {}),
      attributes: defined(options.attributes ?? {}),
      status: 'ok',
      ended: false,
    }
    this.spans.push(recorded)
    const handle: ActiveSpan = {
      setAttributes: (a) => Object.assign(recorded.attributes, defined(a)),
      rename: (n) => {
        recorded.name = n
      },
      fail: (errorClass) => {
        recorded.status = 'error'
        recorded.errorClass = errorClass
      },
    }
    try {
      return await this.active.run(recorded, () => fn(handle))
    } catch (e) {
      if (recorded.status !== 'error') handle.fail((e as Error)?.name ?? 'Error')
      throw e
    } finally {
      recorded.ended = true
    }
  }

  inject(headers: Record<string, string>) {
    const span = this.active.getStore()
    if (span) headers.traceparent = `00-${span.traceId}-${span.spanId}-01`
  }

  continueFrom<T>(header: (name: string) => string | undefined, fn: () => T): T {
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(header('traceparent')?.trim() ?? '')
    return m ? this.active.run({ traceId: m[1], spanId: m[2], remote: true }, fn) : fn()
  }

  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    const span = this.active.getStore()
    return span ? (...args) => this.active.run(span, () => fn(...args)) : fn
  }

  ids(): SpanIds | undefined {
    const span = this.active.getStore()
    return span ? { traceId: span.traceId, spanId: span.spanId } : undefined
  }

  named(name: string) {
    return this.spans.filter((s) => s.name === name)
  }
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0')

function defined(a: Attributes): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v
  return out
}
