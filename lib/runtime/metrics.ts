/**
 * Metrics port. lib/ reports numbers through this interface; the composition root decides where
 * they go: nowhere (noopMetrics), CloudWatch EMF lines (functions/observability/emf.ts), or
 * OpenTelemetry metrics when an SDK is configured.
 *
 * Dimensions are low-cardinality by contract (tool type, outcome, route, operation — never a
 * tenant, a tool name or an id): every distinct combination is a billed CloudWatch metric
 * (docs/operations/observability.md "Metrics and their cost").
 */
export type MetricUnit = 'Count' | 'Milliseconds'

/** The metrics the service emits, with their dimension names. */
export interface MetricDimensions {
  /** Tool calls, by the tool's type (`rest`, `scripted`, `builtin`, …) and outcome (`ok`, `error`). */
  ToolCalls: { ToolType: string; Outcome: string }
  ToolDuration: { ToolType: string; Outcome: string }
  ToolErrors: { ToolType: string; ErrorClass: string }
  /** HTTP requests by route pattern (`/brain/:tenant/…`) and status class (`2xx`, `4xx`, …). */
  Requests: { Route: string; StatusClass: string }
  RequestLatency: { Route: string }
  /** Scripts waiting for the sandbox when a run was admitted or refused. */
  SandboxQueueDepth: Record<string, never>
  SandboxRefusals: { Reason: string }
  /** DynamoDB attempts after the first, and the throttling answers among them, by operation. */
  StoreRetries: { Operation: string }
  StoreThrottles: { Operation: string }
  /** Audit entries given up on after every retry (each one is also an error log line). */
  AuditWriteFailures: Record<string, never>
  /** Refusals past a window's digests: in no audit entry (each window's count is also a warn log line). */
  AuditRefusalsUncounted: Record<string, never>
}
export type MetricName = keyof MetricDimensions

export const METRIC_UNITS: Record<MetricName, MetricUnit> = {
  ToolCalls: 'Count',
  ToolDuration: 'Milliseconds',
  ToolErrors: 'Count',
  Requests: 'Count',
  RequestLatency: 'Milliseconds',
  SandboxQueueDepth: 'Count',
  SandboxRefusals: 'Count',
  StoreRetries: 'Count',
  StoreThrottles: 'Count',
  AuditWriteFailures: 'Count',
  AuditRefusalsUncounted: 'Count',
}

export interface Metrics {
  record<N extends MetricName>(name: N, value: number, dimensions: MetricDimensions[N]): void
}

export const noopMetrics: Metrics = { record() {} }

/** Keeps every data point; tests read it. */
export class MemoryMetrics implements Metrics {
  readonly points: { name: MetricName; value: number; dimensions: Record<string, string> }[] = []
  record<N extends MetricName>(name: N, value: number, dimensions: MetricDimensions[N]) {
    this.points.push({ name, value, dimensions: dimensions as Record<string, string> })
  }
  sum(name: MetricName, where: Record<string, string> = {}) {
    return this.points
      .filter((p) => p.name === name && Object.entries(where).every(([k, v]) => p.dimensions[k] === v))
      .reduce((a, p) => a + p.value, 0)
  }
}

/** Several sinks as one (EMF and OTel metrics side by side). */
export function allMetrics(...sinks: Metrics[]): Metrics {
  return sinks.length === 1 ? sinks[0] : { record: (name, value, dims) => sinks.forEach((s) => s.record(name, value, dims)) }
}
