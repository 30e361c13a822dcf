/** The OpenTelemetry SDK, loaded when OTEL_* variables ask for it; its import of ./shared is explained there. */
import './shared'

export * from '../observability/otel-sdk'
