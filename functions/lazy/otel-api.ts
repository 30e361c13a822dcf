/** The tracing port over @opentelemetry/api alone (an ADOT layer's SDK); its import of ./shared is explained there. */
import './shared'

export { otelMetrics } from '../observability/otel-metrics'
export { otelTracer } from '../observability/otel-tracer'
