/**
 * The service as bench/observability.ts measures it served: the app on the node HTTP server
 * `npm start` uses (functions/node-server.ts) on 127.0.0.1, memory stores, one app and server
 * per tracing mode BENCH_SERVED_MODES lists (`off,api` or `off,sdk`), each on a port of its own.
 * Run as a child process of the bench, one per phase: the SDK registers itself globally (after
 * which the API records), so `api` and `sdk` never share a process; each is measured against an
 * `off` server in its own process, since two processes running the same code differ by up to
 * ~10 % (an off/off check: 1.080), more than the goals' margins. The load generator is yet another
 * process, so neither its CPU nor the bench's is the server's.
 *
 * In `sdk` mode the export is the deployment's (OTEL_EXPORTER_OTLP_ENDPOINT and _PROTOCOL from
 * the bench: each span written as it ends, the batches posted from the export thread) with a
 * processor beside it that counts the spans ended. OTel metrics are off, as in the in-process
 * figures: the goal is about traces.
 *
 * Sends `{ ports }` (in the order of the modes) once listening; answers `'cpu'` with `{ cpu }` (process.cpuUsage: every thread
 * of this process, the export thread's included), `'settle'` with `{ settled }` once the spans
 * the requests ended are exported (a no-op but for the SDK), `'spans'` with `{ spans }` (ended).
 */
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { serveNode } from '../functions/node-server'
import { createObservability, type TracingMode } from '../functions/observability'
import { endedCounter } from './ended-spans'

const modes = process.env.BENCH_SERVED_MODES?.split(',') as TracingMode[] | undefined
const secret = process.env.BENCH_SERVED_SECRET
if (modes && secret && process.send) {
  const { counts, counter } = endedCounter()
  const served = await Promise.all(
    modes.map(async (mode) => {
      const observability =
        mode === 'off'
          ? undefined
          : createObservability({
              mode,
              modules: { api: () => import('../functions/lazy/otel-api'), sdk: () => import('../functions/lazy/otel-sdk') },
              sdkOptions: { metricExporter: false, extraSpanProcessors: [counter] },
            })
      await observability?.ready()
      const app = createApp(createMemoryDeps({ jwtSecret: secret, ...(observability ? { observability } : {}) }))
      const server = await serveNode(app.fetch, { port: 0, hostname: '127.0.0.1' })
      const bound = server.address()
      return { observability, port: typeof bound === 'object' && bound ? bound.port : 0 }
    }),
  )
  process.send({ ports: served.map((s) => s.port) })
  process.on('message', async (m) => {
    if (m === 'cpu') process.send?.({ cpu: process.cpuUsage() })
    else if (m === 'spans') process.send?.({ spans: counts.ended })
    else if (m === 'settle') {
      await Promise.all(served.map((s) => s.observability?.flush()))
      process.send?.({ settled: true })
    }
  })
  // the bench ended (or died): so does its server
  process.on('disconnect', () => process.exit(0))
}
