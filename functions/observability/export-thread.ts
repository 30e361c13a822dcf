/**
 * The OTLP/HTTP post of the encoded batches (encoded-batch-processor.ts), on a thread of its own.
 *
 * The post is the SDK's OTLP/HTTP exporter (endpoint, headers, compression, timeout, retries from
 * the OTEL_EXPORTER_OTLP_* variables), handed bytes. On the thread that serves requests it cost
 * that thread 3–9 µs of CPU per tool call (two spans; a 180 KB post per 256 calls: the HTTP
 * client, the body's stream and the socket writes), as much as writing the spans
 * (docs/operations/observability.md, "What tracing costs"). Here the request thread hands each
 * batch over without a copy (its buffer is transferred), and the thread posts it and answers with
 * the export's result. The spans themselves are still written on the request thread, as they end:
 * handing a span's fields to another thread costs about what writing them does.
 *
 * The thread starts with the exporter, and holds the process open only while a batch is out.
 * If it dies, the batches it held fail (counted as lost by the processor) and the next batch
 * starts another. It is this module evaluated again with a marker in `workerData`
 * (lib/runtime/threads.ts), with the variables as the process had them when the exporter was built.
 */
import { isMainThread, type MessagePort, parentPort, type Worker, workerData } from 'node:worker_threads'
import { type ExportResult, ExportResultCode } from '@opentelemetry/core'
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { startWorker } from '../../lib/runtime/threads'
import type { EncodedBatch, EncodedBatchExporter } from './encoded-batch-processor'

/** Marks workerData as ours, so that this module loaded in some other worker never starts serving. */
export const EXPORT_THREAD_MARK = 'server-tools.otlp-export-thread'

/** A batch holds at most maxQueueSize spans (2,048 by default, ~0.7 MB): the heap is for the HTTP client and one or two bodies. */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 }

type ToThread = { t: 'export'; id: number; body: Uint8Array; spans: number } | { t: 'shutdown'; id: number }
type FromThread = { id: number; ok: boolean; error?: string }

/** The SDK's OTLP/HTTP exporter (endpoint, headers, compression, timeout, retries from OTEL_EXPORTER_OTLP_*), handed bytes already encoded. */
export function encodedBatchExporter(): OTLPExporterBase<EncodedBatch> {
  return new OTLPExporterBase<EncodedBatch>(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      { serializeRequest: (batch) => batch.body, deserializeResponse: ProtobufTraceSerializer.deserializeResponse },
      'otlp_http_span_exporter',
      { name: 'span', countItems: (batch) => batch.spans },
      undefined, // no self-observability metrics, like the JSON exporter's default
    ),
  )
}

/** encodedBatchExporter() run on the export thread. */
export class ThreadedBatchExporter implements EncodedBatchExporter {
  private worker: Worker | undefined
  private readonly pending = new Map<number, (result: ExportResult) => void>()
  private next = 1
  /** The variables as they are now: the SDK's own exporter reads them when it is built, and so does this one's thread. */
  private readonly env = { ...process.env }

  constructor() {
    // started now, with the SDK, not with the first batch: a thread loads its modules for tens of
    // milliseconds (hundreds under tsx), and a busy service fills the queue (2,048 spans) in about
    // 130 ms; started with the first batch, the bench's collector got up to 1,328 spans fewer than ended
    this.start()
  }

  export(batch: EncodedBatch, done: (result: ExportResult) => void): void {
    const worker = this.worker ?? this.start()
    const id = this.next++
    this.pending.set(id, done)
    if (this.pending.size === 1) worker.ref()
    const body = transferable(batch.body)
    worker.postMessage({ t: 'export', id, body, spans: batch.spans } satisfies ToThread, [body.buffer as ArrayBuffer])
  }

  async shutdown(): Promise<void> {
    const worker = this.worker
    if (!worker) return
    // what the exporter still holds is posted before the thread ends
    await new Promise<void>((resolve) => {
      const id = this.next++
      this.pending.set(id, () => resolve())
      worker.ref()
      worker.postMessage({ t: 'shutdown', id } satisfies ToThread)
    })
    this.worker = undefined
    await worker.terminate()
  }

  private start(): Worker {
    const worker = startWorker(import.meta.url, { [EXPORT_THREAD_MARK]: true }, THREAD_LIMITS, this.env)
    this.worker = worker
    worker.unref()
    worker.on('message', (m: FromThread) => {
      const done = this.pending.get(m.id)
      if (!done) return
      this.pending.delete(m.id)
      if (this.pending.size === 0) worker.unref()
      done(m.ok ? { code: ExportResultCode.SUCCESS } : { code: ExportResultCode.FAILED, error: new Error(m.error ?? 'span export failed') })
    })
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = undefined
      const waiting = [...this.pending.values()]
      this.pending.clear()
      for (const done of waiting) done({ code: ExportResultCode.FAILED, error })
    }
    worker.on('error', (e) => lost(new Error(`the OTLP export thread failed: ${e.message}`)))
    worker.on('exit', (code) => lost(new Error(`the OTLP export thread stopped (${code})`)))
    return worker
  }
}

/** The bytes in a buffer of their own: a small Buffer is a slice of Node's shared pool, which must not be transferred. */
function transferable(body: Uint8Array): Uint8Array {
  return body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : new Uint8Array(body)
}

function serve(port: MessagePort) {
  const exporter = encodedBatchExporter()
  port.on('message', (m: ToThread) => {
    if (m.t === 'export') {
      exporter.export({ body: m.body, spans: m.spans }, (result) =>
        port.postMessage({ id: m.id, ok: result.code === ExportResultCode.SUCCESS, error: result.error?.message } satisfies FromThread),
      )
      return
    }
    exporter.shutdown().then(
      () => port.postMessage({ id: m.id, ok: true } satisfies FromThread),
      (e: Error) => port.postMessage({ id: m.id, ok: false, error: e.message } satisfies FromThread),
    )
  })
}

if (!isMainThread && parentPort && (workerData as Record<string, unknown> | null)?.[EXPORT_THREAD_MARK]) serve(parentPort)
