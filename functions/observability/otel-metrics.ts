/** The metrics port as OpenTelemetry instruments: counts are counters, durations and depths histograms. */
import type { Counter, Histogram, Meter } from '@opentelemetry/api'
import { METRIC_UNITS, type MetricName, type Metrics } from '../../lib/runtime/metrics'

/** OTel's names for the port's metrics (dotted, lower case, as the semantic conventions write them). */
const OTEL_NAMES: Record<MetricName, string> = {
  ToolCalls: 'server_tools.tool.calls',
  ToolDuration: 'server_tools.tool.duration',
  ToolErrors: 'server_tools.tool.errors',
  Requests: 'server_tools.http.requests',
  RequestLatency: 'server_tools.http.duration',
  SandboxQueueDepth: 'server_tools.sandbox.queue_depth',
  SandboxRefusals: 'server_tools.sandbox.refusals',
  StoreRetries: 'server_tools.store.retries',
  StoreThrottles: 'server_tools.store.throttles',
  AuditWriteFailures: 'server_tools.audit.write_failures',
  AuditRefusalsUncounted: 'server_tools.audit.refusals_uncounted',
}

export function otelMetrics(meter: Meter): Metrics {
  const instruments = new Map<MetricName, Counter | Histogram>()
  const instrument = (name: MetricName) => {
    let found = instruments.get(name)
    if (!found) {
      const histogram = METRIC_UNITS[name] === 'Milliseconds' || name === 'SandboxQueueDepth'
      found = histogram
        ? meter.createHistogram(OTEL_NAMES[name], { unit: METRIC_UNITS[name] === 'Milliseconds' ? 'ms' : '{script}' })
        : meter.createCounter(OTEL_NAMES[name], { unit: '1' })
      instruments.set(name, found)
    }
    return found
  }
  return {
    record(name, value, dimensions) {
      const i = instrument(name)
      if ('record' in i) i.record(value, dimensions)
      else i.add(value, dimensions)
    },
  }
}
