/**
 * The span processor of the default OTLP/HTTP protobuf export: each span is written as protobuf
 * when it ends (otlp-span-encoder.ts), and a batch is those bytes, posted when it holds
 * `maxExportBatchSize` spans or `scheduledDelayMillis` after its first span.
 *
 * Why not the SDK's BatchSpanProcessor with its protobuf exporter: that one keeps every span
 * object (a dozen objects each) until its batch of 512 is exported, long enough on a busy process
 * to outlive the young generation, and then serializes the batch in two passes (size, then
 * bytes): 8.1–8.7 µs of CPU per tool call (two spans) in a hot loop, against 2.9–3.1 µs written
 * as each span ends (bench/observability.ts, benchTracingParts; docs/operations/observability.md,
 * "What tracing costs"). Here a span is garbage as soon as it is written, and the bytes wait.
 *
 * It keeps the BatchSpanProcessor's contract and its variables (OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
 * …_MAX_QUEUE_SIZE, …_SCHEDULE_DELAY, …_EXPORT_TIMEOUT): sampled spans only; at most
 * maxQueueSize spans waiting (sealed batches out for export count), later ones dropped and
 * counted; forceFlush exports everything ended before it and rejects if any of it failed; the
 * export runs with tracing suppressed. Unlike it, up to MAX_EXPORTS batches are out at once: the
 * post runs on another thread (export-thread.ts), which a busy machine can leave waiting for a CPU
 * while this one serves; one batch at a time, the collector got 1,184 fewer spans than ended (of
 * ~70,000, a bench run at load 9: the queue filled), where the post on this thread had slowed the
 * requests down with it. The posting itself (endpoint, headers, compression, timeout, retries) is
 * the SDK's OTLP/HTTP exporter, handed bytes instead of spans.
 */
import { context, diag, TraceFlags } from '@opentelemetry/api'
import { type ExportResult, ExportResultCode, getNumberFromEnv, globalErrorHandler, suppressTracing } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { exportRequest, ProtobufBytes, resourceField, type ScopeBatch, scopeField, writeSpan } from './otlp-span-encoder'

/** An ExportTraceServiceRequest, encoded, and how many spans it carries. */
/** Batches out for export at once: the queue's default holds four batches of the default size. */
const MAX_EXPORTS = 4

export interface EncodedBatch {
  body: Uint8Array
  spans: number
}

export interface EncodedBatchExporter {
  export(batch: EncodedBatch, done: (result: ExportResult) => void): void
  shutdown(): Promise<void>
}

export interface EncodedBatchOptions {
  maxExportBatchSize?: number
  maxQueueSize?: number
  scheduledDelayMillis?: number
  exportTimeoutMillis?: number
}

/** The BatchSpanProcessor's settings from its standard variables, with its defaults. */
export function batchOptionsFromEnv(): Required<EncodedBatchOptions> {
  const maxQueueSize = getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512, maxQueueSize),
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 5000,
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT') ?? 30_000,
  }
}

interface OpenScope {
  scope: Buffer
  schemaUrl?: string
  spans: ProtobufBytes
}

export class EncodedBatchProcessor implements SpanProcessor {
  private readonly options: Required<EncodedBatchOptions>
  /** The open batch: spans written so far, by resource and instrumentation scope (object identity, as the SDK's serializer groups them). */
  private readonly open = new Map<Resource, Map<object, OpenScope>>()
  private openSpans = 0
  private readonly waiting: EncodedBatch[] = []
  private waitingSpans = 0
  private exporting = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private idle: (() => void)[] = []
  /** Spans that did not reach the collector: dropped when the queue was full, or in a failed export. */
  readonly lost = { dropped: 0, failed: 0 }
  private lastError: Error | undefined

  constructor(
    private readonly exporter: EncodedBatchExporter,
    options: EncodedBatchOptions = {},
  ) {
    this.options = { ...batchOptionsFromEnv(), ...options }
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return
    if (this.openSpans + this.waitingSpans >= this.options.maxQueueSize) {
      if (this.lost.dropped++ === 0) diag.warn('EncodedBatchProcessor: maxQueueSize reached, dropping spans')
      return
    }
    writeSpan(this.scopeOf(span).spans, span)
    if (++this.openSpans >= this.options.maxExportBatchSize) this.seal()
    else if (!this.timer) {
      this.timer = setTimeout(() => this.seal(), this.options.scheduledDelayMillis)
      this.timer.unref?.()
    }
  }

  forceFlush(): Promise<void> {
    const failedBefore = this.lost.failed
    this.seal()
    return this.drained().then(() => {
      const failed = this.lost.failed - failedBefore
      if (failed) throw new Error(`${failed} spans were not exported: ${this.lastError?.message ?? 'export failed'}`)
    })
  }

  async shutdown(): Promise<void> {
    if (this.closed) return
    try {
      await this.forceFlush()
    } finally {
      this.closed = true
      await this.exporter.shutdown()
    }
  }

  private scopeOf(span: ReadableSpan): OpenScope {
    let scopes = this.open.get(span.resource)
    if (!scopes) this.open.set(span.resource, (scopes = new Map()))
    const key = span.instrumentationScope
    let scope = scopes.get(key)
    if (!scope) scopes.set(key, (scope = { scope: scopeField(key), schemaUrl: key.schemaUrl, spans: new ProtobufBytes() }))
    return scope
  }

  /** Closes the open batch into a request waiting for export; the writers are kept for the next. */
  private seal() {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.openSpans === 0) return
    const groups: { resource: Buffer; schemaUrl?: string; scopes: ScopeBatch[] }[] = []
    for (const [resource, scopes] of this.open) {
      const written = [...scopes.values()].filter((s) => s.spans.pos > 0)
      if (!written.length) continue
      // the resource is this SDK's (defaults, the service name, OTEL_RESOURCE_ATTRIBUTES): no asynchronous attributes to wait for
      groups.push({
        resource: resourceField(resource),
        schemaUrl: resource.schemaUrl,
        scopes: written.map((s) => ({ scope: s.scope, schemaUrl: s.schemaUrl, spans: s.spans.bytes() })),
      })
    }
    const batch = { body: exportRequest(groups), spans: this.openSpans }
    for (const scopes of this.open.values()) for (const s of scopes.values()) s.spans.pos = 0
    this.waiting.push(batch)
    this.waitingSpans += batch.spans
    this.openSpans = 0
    this.pump()
  }

  private pump() {
    while (this.exporting < MAX_EXPORTS && this.waiting.length) this.send(this.waiting.shift() as EncodedBatch)
    if (this.exporting === 0 && this.waiting.length === 0) for (const resolve of this.idle.splice(0)) resolve()
  }

  private send(batch: EncodedBatch) {
    this.exporting++
    let settled = false
    const finish = (result: ExportResult) => {
      if (settled) return
      settled = true
      clearTimeout(timeout)
      this.waitingSpans -= batch.spans
      this.exporting--
      if (result.code !== ExportResultCode.SUCCESS) {
        this.lost.failed += batch.spans
        this.lastError = result.error ?? new Error('span export failed')
        globalErrorHandler(this.lastError)
      }
      this.pump()
    }
    const timeout = setTimeout(
      () => finish({ code: ExportResultCode.FAILED, error: new Error('Timeout') }),
      this.options.exportTimeoutMillis,
    )
    timeout.unref?.()
    // the export's own requests make no spans
    context.with(suppressTracing(context.active()), () => this.exporter.export(batch, finish))
  }

  private drained(): Promise<void> {
    if (this.exporting === 0 && this.waiting.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }
}
