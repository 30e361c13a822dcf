/**
 * Traces, metrics and the log context as the composition roots build them.
 *
 * Tracing has three modes, chosen by the standard variables (tracingModeFromEnv):
 * - `off` (default): lib's no-op tracer; neither @opentelemetry/api nor the SDK is loaded.
 * - `api`: spans through @opentelemetry/api, to an SDK someone else registers (the ADOT Lambda
 *   layer, whose wrapper sets AWS_LAMBDA_EXEC_WRAPPER); the API module loads with the first request.
 * - `sdk`: OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set: the SDK and the OTLP/HTTP
 *   exporters (functions/observability/otel-sdk.ts) load with the first request.
 * The first request awaits `ready()`; every later one finds the tracer in place.
 *
 * Metrics go to CloudWatch EMF lines when `emf` is given (Lambda), and to OTel instruments too
 * once an SDK is running.
 */
import type { Logger, LogLevel } from '../../lib/runtime/logger'
import { jsonLogger } from '../../lib/runtime/logger'
import { type Metrics, noopMetrics } from '../../lib/runtime/metrics'
import { noopTracer, type Tracer } from '../../lib/runtime/tracer'
import { SecretScrubber } from '../../lib/secrets/scrubber'
import { requestContext } from '../http/request-context'
import { EmfMetrics } from './emf'
import type { OtelSdk, OtelSdkOptions } from './otel-sdk'

export type TracingMode = 'off' | 'api' | 'sdk'

export function tracingModeFromEnv(env: Record<string, string | undefined>): TracingMode {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim() === 'none') return 'off'
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) return 'sdk'
  if (env.AWS_LAMBDA_EXEC_WRAPPER?.trim()) return 'api'
  return 'off'
}

export interface ObservabilityModules {
  api: () => Promise<Pick<typeof import('./otel-tracer'), 'otelTracer'>>
  sdk: () => Promise<{ startOtelSdk(opts?: OtelSdkOptions): OtelSdk }>
}

export interface Observability {
  mode: TracingMode
  tracer: Tracer
  metrics: Metrics
  /** Loads the tracer of the mode, once; undefined when there is nothing (more) to load. */
  ready(): Promise<void> | undefined
  /** EMF lines out, the SDK's buffered spans and metrics exported. Never rejects. */
  flush(): Promise<void>
  /** Where a tracer that cannot load, or an export that fails, is reported (the logger is built after this). */
  useLog(log: Logger): void
}

/** A tracer whose implementation arrives later (the lazily loaded OTel adapter). */
class SwitchTracer implements Tracer {
  current: Tracer = noopTracer
  span: Tracer['span'] = (name, options, fn) => this.current.span(name, options, fn)
  inject: Tracer['inject'] = (headers) => this.current.inject(headers)
  continueFrom: Tracer['continueFrom'] = (header, fn) => this.current.continueFrom(header, fn)
  bind: Tracer['bind'] = (fn) => this.current.bind(fn)
  ids: Tracer['ids'] = () => this.current.ids()
}

export function createObservability(opts: {
  mode: TracingMode
  modules: ObservabilityModules
  /** Where EMF lines go (stdout on Lambda); absent: no EMF. */
  emf?: (line: string) => void
  sdkOptions?: OtelSdkOptions
}): Observability {
  let log: Logger | undefined
  const tracer = new SwitchTracer()
  const emf = opts.emf ? new EmfMetrics(opts.emf) : undefined
  let otelMetrics: Metrics | undefined
  const metrics: Metrics = {
    record: (name, value, dims) => {
      emf?.record(name, value, dims)
      otelMetrics?.record(name, value, dims)
    },
  }
  let sdk: OtelSdk | undefined
  let loading: Promise<void> | undefined
  let loaded = opts.mode === 'off'
  const load = async () => {
    try {
      if (opts.mode === 'sdk') {
        sdk = (await opts.modules.sdk()).startOtelSdk(opts.sdkOptions)
        otelMetrics = sdk.metrics
        tracer.current = sdk.tracer
      } else tracer.current = (await opts.modules.api()).otelTracer()
    } catch (e) {
      // tracing is an aid: a broken exporter setup is logged, the service serves on without it
      log?.log('error', 'tracing.unavailable', { mode: opts.mode, error: (e as Error).message })
    } finally {
      loaded = true
    }
  }
  return {
    mode: opts.mode,
    tracer,
    metrics: emf || opts.mode === 'sdk' ? metrics : noopMetrics,
    ready: () => (loaded ? undefined : (loading ??= load())),
    useLog: (l) => {
      log = l
    },
    async flush() {
      await emf?.flush()
      await sdk?.flush().catch((e: Error) => log?.log('warn', 'tracing.flush_failed', { error: e.message }))
    },
  }
}

/**
 * The service's JSON logger: LOG_LEVEL, each line with the request's context (request id, tenant,
 * project, process, tool) and the active trace and span ids, secret values scrubbed in every
 * encoding the tool-output scrubber knows, bearer tokens and JWTs masked.
 */
export function serviceLogger(opts: {
  write: (line: string) => void
  level: LogLevel
  tracer: Tracer
  /** The deployment's own secrets (the JWT signing secret). */
  secrets?: string[]
}): Logger {
  const scrubber = new SecretScrubber()
  for (const [i, value] of (opts.secrets ?? []).entries()) if (value) scrubber.add(`deployment-${i}`, value)
  return jsonLogger(opts.write, opts.level, {
    context: () => {
      const ctx = requestContext.current()
      const ids = opts.tracer.ids()
      if (!ctx && !ids) return undefined
      return {
        ...(ctx
          ? {
              requestId: ctx.requestId,
              tenant: ctx.tenant,
              project: ctx.project,
              process: ctx.process,
              tool: ctx.tool,
            }
          : {}),
        ...(ids ? { traceId: ids.traceId, spanId: ids.spanId } : {}),
      }
    },
    scrub: (line) => maskTokens(scrubber.isEmpty ? line : scrubber.scrubText(line)),
  })
}

/** Bearer credentials and anything shaped like a JWT (header.payload.signature, base64url). */
const TOKEN = /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}|eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g
export const maskTokens = (line: string) => line.replace(TOKEN, (_m, bearer?: string) => `${bearer ?? ''}[redacted]`)
