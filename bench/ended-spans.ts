import type { SpanProcessor } from '@opentelemetry/sdk-trace-base'

/** Counts the spans the SDK ends, beside the deployment's processor: every one must reach the collector. */
export function endedCounter() {
  const counts = { ended: 0 }
  const counter: SpanProcessor = {
    onStart() {},
    onEnd() {
      counts.ended++
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  }
  return { counts, counter }
}
