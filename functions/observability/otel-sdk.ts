/**
 * The OpenTelemetry SDK, assembled from its parts (sdk-node needs Node 22; the Lambda runtime and
 * DESIGN.md allow Node 20): a Node tracer provider with a batch processor and the OTLP/HTTP
 * exporter, W3C trace-context propagation and an async-local-storage context manager, and a
 * meter provider exporting OTLP/HTTP. The exporters read the standard variables themselves
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, …),
 * the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 *
 * Loaded on first use only (functions/lazy/otel-sdk.ts), when those variables ask for it.
 */
import { metrics as metricsApi } from '@opentelemetry/api'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base'
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http'
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import { FrameContextManager } from './context-manager'
import { EncodedBatchProcessor } from './encoded-batch-processor'
import { ThreadedBatchExporter } from './export-thread'
import { PooledIdGenerator } from './id-generator'
import { otelMetrics } from './otel-metrics'
import { otelTracer } from './otel-tracer'

export { encodedBatchExporter, ThreadedBatchExporter } from './export-thread'
export { otelTracer } from './otel-tracer'

export interface OtelSdkOptions {
  /** Behind the SDK's batch processor. Default: spanProcessorFromEnv(). */
  spanExporter?: SpanExporter
  /** Processors beside the batch exporter (tests add an in-memory one). */
  extraSpanProcessors?: SpanProcessor[]
  /** Default: OTLP/HTTP metrics, every 60 s and at each flush. `false`: no OTel metrics. */
  metricExporter?: PushMetricExporter | false
  serviceName?: string
}

export interface OtelSdk {
  tracer: ReturnType<typeof otelTracer>
  metrics: ReturnType<typeof otelMetrics> | undefined
  /** Exports what is buffered (Lambda: before the invocation ends, as the container may freeze). */
  flush(): Promise<void>
  shutdown(): Promise<void>
}

export function startOtelSdk(opts: OtelSdkOptions = {}): OtelSdk {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': opts.serviceName ?? 'server-tools' }))
    .merge(detectResources({ detectors: [envDetector] }))
  const processor = opts.spanExporter ? new BatchSpanProcessor(opts.spanExporter) : spanProcessorFromEnv(process.env)
  const provider = new NodeTracerProvider({
    resource,
    idGenerator: new PooledIdGenerator(),
    spanProcessors: [processor, ...(opts.extraSpanProcessors ?? [])],
  })
  provider.register({ contextManager: new FrameContextManager() })
  let meterProvider: MeterProvider | undefined
  if (opts.metricExporter !== false) {
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({ exporter: opts.metricExporter ?? new OTLPMetricExporter(), exportIntervalMillis: 60_000 }),
      ],
    })
    metricsApi.setGlobalMeterProvider(meterProvider)
  }
  return {
    tracer: otelTracer('server-tools', undefined, { tracer: provider.getTracer('server-tools') }),
    metrics: meterProvider ? otelMetrics(meterProvider.getMeter('server-tools')) : undefined,
    async flush() {
      await Promise.all([provider.forceFlush(), meterProvider?.forceFlush()])
    },
    async shutdown() {
      await Promise.all([provider.shutdown(), meterProvider?.shutdown()])
    },
  }
}

/**
 * The export the standard variables configure: http/protobuf through EncodedBatchProcessor (each
 * span written as protobuf when it ends, the batches posted from a thread of their own:
 * export-thread.ts), http/json through the SDK's batch processor and JSON exporter.
 */
export function spanProcessorFromEnv(env: Record<string, string | undefined>): SpanProcessor {
  if (protocolOf(env) === 'http/json') return new BatchSpanProcessor(new OTLPTraceExporter())
  return new EncodedBatchProcessor(new ThreadedBatchExporter())
}

function protocolOf(env: Record<string, string | undefined>): 'http/protobuf' | 'http/json' {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim()
  if (protocol !== 'http/json' && protocol !== 'http/protobuf')
    throw new Error(`OTLP protocol '${protocol}' is not supported: use http/protobuf or http/json`)
  return protocol
}

/**
 * OTLP/HTTP in the protocol `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
 * names: `http/protobuf` (the specification's default) or `http/json`. Protobuf is the default
 * here too because it is the cheaper of the two on the request path's thread: the transformer
 * writes the wire format straight from the spans, where JSON builds an object tree with hex ids
 * first and stringifies it, at about 2.3× the bytes (docs/operations/observability.md, "What tracing costs").
 */
export function spanExporterFromEnv(env: Record<string, string | undefined>): SpanExporter {
  if (protocolOf(env) === 'http/json') return new OTLPTraceExporter()
  return new OTLPExporterBase<ReadableSpan[]>(
    createOtlpHttpExportDelegate(
      convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
      ProtobufTraceSerializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined, // no self-observability metrics, like the JSON exporter's default
    ),
  )
}
