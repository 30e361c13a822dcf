/**
 * bench/observability — what tracing and the audit log cost on the tool-call path, side by side:
 *
 *   off    POST /tools/whoami/invoke (the cheapest tool there is), tracing off (lib's no-op tracer; the default)
 *   api    the same through @opentelemetry/api with no SDK registered ("API only", e.g. before an ADOT layer)
 *   sdk    the same with the SDK as a deployment starts it (functions/observability/otel-sdk.ts):
 *          the export the standard variables configure, OTLP/HTTP to a collector on 127.0.0.1
 *          (OTEL_EXPORTER_OTLP_ENDPOINT) run in a child process (bench/otlp-receiver.ts), as a
 *          deployment's collector is another process. OTel metrics are off (the goal is traces).
 *   audit  PUT /documents/<path> (a write: one audit entry each) with the audit log on, against the
 *          same writes with an audit store that keeps nothing
 *
 * Served (the goal's figures: tool-call throughput as the service serves it). The app runs on
 * the node HTTP server `npm start` uses (functions/node-server.ts: @hono/node-server, the same
 * timeouts and response class) on 127.0.0.1 with memory stores, in child processes
 * (bench/observability-server.ts): the SDK registers itself globally, so the run has one process
 * for off ↔ api and one for off ↔ sdk, each serving both of its variants on ports of their own,
 * and each ratio is against the `off` server of its own process (two processes of the same code
 * differ by up to ~10 %; BENCH_SERVED_AA=1 serves `off` in place of `api` to show what the floor's
 * own noise is). The load generator is one more child process (bench/observability-load.ts), the
 * same for every variant: 16 requests in flight over 16 kept-alive connections. Counted: the
 * requests answered per second of the round, the round ending when its spans are exported (a
 * flush inside its time, answered by the collector), and the server process's CPU per request
 * (process.cpuUsage: every thread of it, so the export thread's posting counts; the kernel's
 * loopback work where the kernel charges it). Not counted: the load generator's and the
 * collector's CPU (other processes; the load generator's is printed), the bench's own.
 *
 *   api / off   goal ≥ 0.98
 *   sdk / off   goal ≥ 0.90, and not met if a span ended in the server was not received
 *   audit: storage requests per write request ≤ 1, per read request 0 (counted, not timed)
 *
 * Handler alone (worst case, printed beside, no goal): the same tool calls through `app.fetch` in
 * this process (no HTTP, no sockets), 16 in flight; each request ends with a turn of the event
 * loop, as it does behind a socket, so the batch processor's timer and the exporter's posts run
 * within the rounds. Leaving out the serving cost every real call pays, it sets the span cost
 * against the handler alone. Two phases (off ↔ api first, then off ↔ sdk ↔ sdk with a collector in
 * this process, its work then counted as the service's); CPU per request is this process's, GC
 * pauses are printed.
 *
 * Every span must reach its collector: the run counts spans ended (a span processor beside the
 * deployment's) and the spans in the bodies each collector got (it walks each protobuf request down
 * to its spans, or counts them in a JSON one). Variants run in short alternating rounds, and a
 * ratio is the median of per-round ratios.
 * The OTLP protocol is the SDK's default (http/protobuf); BENCH_OTLP_PROTOCOL=http/json measures JSON.
 *
 * Run with `npm run bench -- observability` or `npx tsx bench/run.ts observability`.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { PerformanceObserver, performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { ALL_SCOPES, issueToken } from '../functions/http/auth'
import { createObservability, type Observability } from '../functions/observability'
import type { AuditStore } from '../lib/audit/ports'
import { MemoryAuditStore } from '../lib/stores/memory/audit-store'
import { endedCounter } from './ended-spans'
import { listenOtlp, type Received } from './otlp-receiver'

const SECRET = 'bench-observability-secret'
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12)
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 400)
const CONCURRENCY = 16
const SERVED_ROUNDS = Number(process.env.BENCH_SERVED_ROUNDS ?? ROUNDS)
const SERVED_ROUND_MS = Number(process.env.BENCH_SERVED_ROUND_MS ?? 500)

type Send = (i: number) => Promise<Response>

const turn = () => new Promise<void>((r) => setImmediate(r))

/** CPU microseconds per request of each round measured, by variant. */
const cpuPerRequest: Record<string, number[]> = {}
/** Garbage-collector pauses (µs per request) of each round, by variant: where keeping span objects for a batch would show. */
const gcPerRequest: Record<string, number[]> = {}
let gcMs = 0
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration
})

/** Requests completed in `ms` with `CONCURRENCY` in flight, per second. */
async function throughput(send: Send, ms: number, name?: string, settle?: () => Promise<void>): Promise<number> {
  let done = 0
  const end = performance.now() + ms
  const worker = async () => {
    while (performance.now() < end) {
      const res = await send(done)
      await res.arrayBuffer()
      if (res.status >= 300) throw new Error(`bench request answered ${res.status}`)
      done++
      await turn()
    }
  }
  const cpu0 = process.cpuUsage()
  const gc0 = gcMs
  const t0 = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  await settle?.()
  const cpu = process.cpuUsage(cpu0)
  const rate = (done * 1000) / (performance.now() - t0)
  if (name) {
    ;(cpuPerRequest[name] ??= []).push((cpu.user + cpu.system) / done)
    await turn() // the observer hears of the round's last collections a turn later
    ;(gcPerRequest[name] ??= []).push(((gcMs - gc0) * 1000) / done)
  }
  return rate
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

async function toolCalls(observability: Observability | undefined, auditStore?: AuditStore): Promise<Send> {
  const deps = createMemoryDeps({ jwtSecret: SECRET, ...(observability ? { observability } : {}), ...(auditStore ? { auditStore } : {}) })
  const app = createApp(deps)
  const token = await issueToken(
    SECRET,
    { tenant: 'acme', sub: 'bench', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const init = { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"params":{}}' }
  return async () => app.fetch(new Request('http://bench/brain/acme/projects/bench/tools/whoami/invoke', init))
}

async function writes(auditStore: AuditStore): Promise<{ send: Send; flush: () => Promise<number>; sent: () => number }> {
  let sent = 0
  const deps = createMemoryDeps({ jwtSecret: SECRET, auditStore, auditFlushDelayMs: 0 })
  const app = createApp(deps)
  const token = await issueToken(
    SECRET,
    { tenant: 'acme', sub: 'bench', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }
  return {
    // the Lambda edge flushes after each response; here every 64 writes, so the recorder's work is in the timing
    send: async (i) => {
      sent++
      const res = await app.fetch(
        new Request(`http://bench/brain/acme/projects/bench/documents/notes/${i % 50}.md`, {
          method: 'PUT',
          headers,
          body: `# note ${i}\n`,
        }),
      )
      if (i % 64 === 0) await deps.audit.recorder.flush()
      return res
    },
    flush: () => deps.audit.recorder.flush(),
    sent: () => sent,
  }
}

/** An audit store that keeps nothing: the `audit off` side of the write comparison. */
const discard: AuditStore = { append: async () => {}, query: async () => ({ entries: [] }) }

/** `settle`: work a variant's requests leave behind (the exporter's last batch), timed in the round that caused it. */
async function rounds(
  variants: Record<string, Send>,
  n: number,
  settle: Record<string, () => Promise<void>> = {},
): Promise<Record<string, number[]>> {
  const names = Object.keys(variants)
  const out: Record<string, number[]> = Object.fromEntries(names.map((k) => [k, []]))
  for (const name of names) await throughput(variants[name], 150) // warm-up
  for (let r = 0; r < n; r++) {
    const order = r % 2 ? [...names].reverse() : names
    for (const name of order) out[name].push(await throughput(variants[name], ROUND_MS, name, settle[name]))
  }
  return out
}

const ratioOf = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]))

/** A bench module run as a child process (this process's loader flags, so TypeScript runs), spoken to by messages. */
function benchChild(file: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = fork(fileURLToPath(new URL(file, import.meta.url)), { env })
  let gone: Error | undefined
  const waiting = new Set<{ key: string; resolve(value: unknown): void; reject(e: Error): void }>()
  const early: Record<string, unknown>[] = []
  const failAll = (e: Error) => {
    for (const w of waiting) w.reject(e)
    waiting.clear()
  }
  child.on('message', (m: Record<string, unknown>) => {
    if (typeof m !== 'object' || m === null) return
    if ('failed' in m) return failAll(new Error(`${file}: ${m.failed}`))
    for (const w of waiting)
      if (w.key in m) {
        waiting.delete(w)
        return w.resolve(m[w.key])
      }
    early.push(m) // sent before anyone asked (a child's first message): kept for the next()
  })
  child.once('exit', (code) => failAll((gone = new Error(`${file} exited (${code})`))))
  /** The next message carrying `key`: its value. */
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const at = early.findIndex((m) => key in m)
      if (at >= 0) resolve(early.splice(at, 1)[0][key] as T)
      else if (gone) reject(gone)
      else waiting.add({ key, resolve: resolve as (value: unknown) => void, reject })
    })
  return {
    next,
    ask<T>(message: unknown, key: string): Promise<T> {
      const answer = next<T>(key)
      child.send(message as string)
      return answer
    },
    close: () => {
      if (child.connected) child.disconnect()
    },
  }
}

/** bench/otlp-receiver.ts in a child process: its endpoint, and its counts on demand. */
async function childReceiver(protocol: string): Promise<{ endpoint: string; count(): Promise<Received>; close(): void }> {
  const child = benchChild('./otlp-receiver.ts', { ...process.env, BENCH_OTLP_RECEIVER_CHILD: protocol })
  const endpoint = await child.next<string>('endpoint')
  return { endpoint, count: () => child.ask<Received>('count', 'received'), close: child.close }
}

/** The environment without the OTEL_* variables (a served variant gets only those it is given). */
const withoutOtel = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')))

/**
 * The served figures: two server processes (bench/observability-server.ts), off ↔ api and off ↔ sdk,
 * each serving its two variants on ports of their own; one load generator process for all
 * (bench/observability-load.ts); rounds alternating.
 */
async function servedRounds(protocol: string) {
  const collector = await childReceiver(protocol)
  const base = { ...withoutOtel(), BENCH_SERVED_SECRET: SECRET }
  // one process per phase (the SDK registers globally): off ↔ api in one, off ↔ sdk in the other
  const phases = {
    api: benchChild('./observability-server.ts', { ...base, BENCH_SERVED_MODES: process.env.BENCH_SERVED_AA ? 'off,off' : 'off,api' }),
    sdk: benchChild('./observability-server.ts', {
      ...base,
      BENCH_SERVED_MODES: 'off,sdk',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    }),
  }
  const loader = benchChild('./observability-load.ts', { ...withoutOtel(), BENCH_SERVED_LOAD: '1' })
  try {
    const [apiPorts, sdkPorts] = await Promise.all([phases.api.next<number[]>('ports'), phases.sdk.next<number[]>('ports')])
    const variants = {
      offApi: { server: phases.api, port: apiPorts[0] },
      api: { server: phases.api, port: apiPorts[1] },
      offSdk: { server: phases.sdk, port: sdkPorts[0] },
      sdk: { server: phases.sdk, port: sdkPorts[1] },
    }
    const names = Object.keys(variants) as (keyof typeof variants)[]
    await loader.next('ready')
    const token = await issueToken(
      SECRET,
      { tenant: 'acme', sub: 'bench', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
      Math.floor(Date.now() / 1000),
    )
    const request = {
      path: '/brain/acme/projects/bench/tools/whoami/invoke',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"params":{}}',
    }
    const cpu = { server: {} as Record<string, number[]>, system: {} as Record<string, number[]>, client: {} as Record<string, number[]> }
    const round = async (name: keyof typeof variants, ms: number) => {
      const { server, port } = variants[name]
      const cpu0 = await server.ask<NodeJS.CpuUsage>('cpu', 'cpu')
      const t0 = performance.now()
      const done = await loader.ask<{ requests: number; cpu: number }>({ run: { port, ms, ...request } }, 'done')
      // the spans this round's requests ended are exported inside its time (a no-op but for the SDK)
      await server.ask('settle', 'settled')
      const elapsed = performance.now() - t0
      const cpu1 = await server.ask<NodeJS.CpuUsage>('cpu', 'cpu')
      ;(cpu.server[name] ??= []).push((cpu1.user - cpu0.user + cpu1.system - cpu0.system) / done.requests)
      ;(cpu.system[name] ??= []).push((cpu1.system - cpu0.system) / done.requests)
      ;(cpu.client[name] ??= []).push(done.cpu / done.requests)
      return (done.requests * 1000) / elapsed
    }
    // warm-up: the connections are opened and each server's code is compiled before the first round
    for (const name of names) for (let i = 0; i < 3; i++) await round(name, 300)
    cpu.server = {}
    cpu.system = {}
    cpu.client = {}
    const rates: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]))
    // the two processes take turns, so every round follows a round of the other process: reversing
    // the order each round made blocks of four rounds of one process, always opened by `api` in one
    // and by `off` in the other, and a variant's place in its block is not free (api / off 0.913 with
    // api costing +32 µs it cannot cost). Within each process the two variants swap places every round.
    for (let r = 0; r < SERVED_ROUNDS; r++) {
      const order: (keyof typeof variants)[] = r % 2 ? ['api', 'sdk', 'offApi', 'offSdk'] : ['offApi', 'offSdk', 'api', 'sdk']
      for (const name of order) rates[name].push(await round(name, SERVED_ROUND_MS))
    }
    const ended = await phases.sdk.ask<number>('spans', 'spans')
    const received = await collector.count()
    return { rates, cpu, ended, received }
  } finally {
    for (const child of [phases.api, phases.sdk, loader]) child.close()
    collector.close()
  }
}

export async function benchObservability(opts: { log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  gcObserver.observe({ entryTypes: ['gc'] })
  const json = (process.env.BENCH_OTLP_PROTOCOL ?? 'http/protobuf') === 'http/json'
  const protocol = process.env.BENCH_OTLP_PROTOCOL ?? 'http/protobuf'
  // the collector a deployment exports to is another process; the in-process one is the reference figure
  const collector = await childReceiver(protocol)
  const local = await listenOtlp(json)
  const modules = { api: () => import('../functions/lazy/otel-api'), sdk: () => import('../functions/lazy/otel-sdk') }
  try {
    // served: the goal's figures (each variant's server a process of its own, so first is as good as last)
    const served = await servedRounds(protocol)

    // phase 1: off ↔ API only (nothing registered globally yet)
    const api = createObservability({ mode: 'api', modules })
    await api.ready()
    const phase1 = await rounds({ off: await toolCalls(undefined), api: await toolCalls(api) }, ROUNDS)

    // phase 2: off ↔ SDK + batch exporter, to a collector in another process and to one in this process
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol
    // the deployment's own export (spanProcessorFromEnv), with a counter of ended spans beside it; the
    // exporter reads its endpoint when the SDK starts. The second SDK cannot register globally (the
    // first did): its spans go to its own provider all the same (otelTracer's LocalSdk), in the same frames.
    const sdkWith = async (endpoint: string) => {
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint
      const spans = endedCounter()
      const observability = createObservability({
        mode: 'sdk',
        modules,
        sdkOptions: { metricExporter: false, extraSpanProcessors: [spans.counter] },
      })
      await observability.ready()
      const send = await toolCalls(observability)
      const counted = { requests: 0 }
      const counting: Send = (i) => {
        counted.requests++
        return send(i)
      }
      return { observability, spans: spans.counts, send: counting, counted }
    }
    const remote = await sdkWith(collector.endpoint)
    const inProcess = await sdkWith(local.endpoint)
    const phase2 = await rounds({ off: await toolCalls(undefined), sdk: remote.send, sdkLocal: inProcess.send }, ROUNDS, {
      sdk: () => remote.observability.flush(),
      sdkLocal: () => inProcess.observability.flush(),
    })
    await Promise.all([remote.observability.flush(), inProcess.observability.flush()])
    const received = await collector.count()
    const dropped = remote.spans.ended - received.spans
    const droppedLocal = inProcess.spans.ended - local.received.spans

    // audit: tool calls (reads) and writes, storage requests counted; writes timed with the log on and off
    const readStore = new MemoryAuditStore()
    const readSend = await toolCalls(undefined, readStore)
    const reads = 500
    for (let i = 0; i < reads; i++) await (await readSend(i)).arrayBuffer()
    const writeStore = new MemoryAuditStore()
    const on = await writes(writeStore)
    const off = await writes(discard)
    const phase3 = await rounds({ auditOff: off.send, auditOn: on.send }, Math.max(4, Math.floor(ROUNDS / 2)))
    await on.flush()
    const appends = writeStore.requests
    const perWrite = appends / on.sent()
    const readable = (await writeStore.query('acme', {}, { limit: 1 }, 0)).entries.length

    const servedDropped = served.ended - served.received.spans
    const ratios = [
      {
        name: 'api / off (tool calls, tracing through @opentelemetry/api, no SDK)',
        value: ratioOf(served.rates.api, served.rates.offApi),
        goal: 0.98,
      },
      {
        name: `sdk / off (tool calls, SDK + batch OTLP/HTTP ${protocol} export to a collector process on 127.0.0.1)`,
        value: ratioOf(served.rates.sdk, served.rates.offSdk),
        goal: 0.9,
        unmetIf: servedDropped !== 0 ? `${servedDropped} spans ended but not received` : undefined,
      },
    ]
    const rate = (name: string) => `${median(served.rates[name]).toFixed(0)}`
    const scpu = (name: string) => median(served.cpu.server[name] ?? [0])
    const ccpu = (name: string) => median(served.cpu.client[name] ?? [0]).toFixed(1)
    log('')
    log(
      `observability, served — POST …/tools/whoami/invoke over HTTP to the app on npm start's node server (127.0.0.1), a load generator in another process, ${CONCURRENCY} in flight over kept-alive connections; medians of ${SERVED_ROUNDS} alternating rounds`,
    )
    log(
      `  phase api  off ${rate('offApi')} req/s, ${scpu('offApi').toFixed(1)} µs server CPU/req   api ${rate('api')} req/s, ${scpu('api').toFixed(1)} µs`,
    )
    log(
      `  phase sdk  off ${rate('offSdk')} req/s, ${scpu('offSdk').toFixed(1)} µs server CPU/req   sdk ${rate('sdk')} req/s, ${scpu('sdk').toFixed(1)} µs (sdk − off ${(scpu('sdk') - scpu('offSdk')).toFixed(1)} µs; CPU ratio off/sdk ${(scpu('offSdk') / scpu('sdk')).toFixed(3)})`,
    )
    const sys = (name: string) => median(served.cpu.system[name] ?? [0]).toFixed(1)
    log(
      `             server CPU: every thread of the server process (the export thread's included), per request answered; of it in the kernel (sockets): off ${sys('offApi')} / ${sys('offSdk')}   api ${sys('api')}   sdk ${sys('sdk')} µs`,
    )
    log(
      `  load generator CPU (its own process, not counted): off ${ccpu('offApi')} / ${ccpu('offSdk')}   api ${ccpu('api')}   sdk ${ccpu('sdk')} µs/req`,
    )
    log(
      `  collector process: ${served.received.requests} OTLP posts, ${(served.received.bytes / 1024).toFixed(0)} KiB; spans ended ${served.ended}, received ${served.received.spans}`,
    )
    const summary: string[] = []
    for (const r of ratios) {
      const unmet = 'unmetIf' in r ? r.unmetIf : undefined
      const line = `served ${r.name}: ${r.value.toFixed(3)} (goal ≥ ${r.goal}) ${r.value >= r.goal && !unmet ? 'met' : `NOT met${unmet ? ` (${unmet})` : ''}`}`
      log(`  ${line}`)
      summary.push(`observability ${line}`)
    }

    const handlerAlone = [
      `handler alone (app.fetch in process, worst case, no goal): api / off ${ratioOf(phase1.api, phase1.off).toFixed(3)}`,
      `sdk / off ${ratioOf(phase2.sdk, phase2.off).toFixed(3)}${dropped !== 0 ? ` (${dropped} spans ended but not received)` : ''}`,
      `sdk / off with the collector in this process ${ratioOf(phase2.sdkLocal, phase2.off).toFixed(3)}${droppedLocal !== 0 ? ` (${droppedLocal} spans ended but not received)` : ''}`,
    ].join('; ')
    log('')
    log(
      'observability, handler alone (worst case, no goal) — the same tool calls through app.fetch in this process (no HTTP, no sockets), 16 in flight, medians of alternating rounds',
    )
    log(`  phase 1  off ${median(phase1.off).toFixed(0)} req/s   api ${median(phase1.api).toFixed(0)} req/s`)
    const cpu = (name: string) => `${median(cpuPerRequest[name] ?? [0]).toFixed(1)} µs CPU/req`
    log(
      `  phase 2  off ${median(phase2.off).toFixed(0)} req/s   sdk ${median(phase2.sdk).toFixed(0)} req/s   sdk, collector in this process ${median(phase2.sdkLocal).toFixed(0)} req/s`,
    )
    for (const [name, sdk, got] of [
      ['collector process', remote, received],
      ['collector in this process', inProcess, local.received],
    ] as const)
      log(
        `           ${name}: ${got.requests} OTLP posts, ${(got.bytes / 1024).toFixed(0)} KiB; spans ended ${sdk.spans.ended}, received ${got.spans} (${(sdk.spans.ended / sdk.counted.requests).toFixed(2)} per request), ${(got.bytes / Math.max(1, got.spans)).toFixed(0)} bytes/span on the wire`,
      )
    log(`  CPU      off ${cpu('off')}   api ${cpu('api')}   sdk ${cpu('sdk')}   sdk, collector in this process ${cpu('sdkLocal')}`)
    const gc = (name: string) => `${median(gcPerRequest[name] ?? [0]).toFixed(1)}`
    log(
      `  GC       off ${gc('off')}   api ${gc('api')}   sdk ${gc('sdk')}   sdk, collector in this process ${gc('sdkLocal')} µs of pauses/req`,
    )
    log(`  ${handlerAlone}`)
    summary.push(`observability ${handlerAlone}`)
    log(
      `  writes   audit off ${median(phase3.auditOff).toFixed(0)} req/s   audit on ${median(phase3.auditOn).toFixed(0)} req/s   (on/off ${ratioOf(phase3.auditOn, phase3.auditOff).toFixed(3)})`,
    )
    const readLine = `audit storage requests per read request: ${readStore.requests / reads} (goal 0) ${readStore.requests === 0 ? 'met' : 'NOT met'}`
    const writeLine = `audit storage requests per write request: ${perWrite.toFixed(3)} (goal ≤ 1) ${perWrite <= 1 ? 'met' : 'NOT met'} (${appends} appends for ${on.sent()} writes; ${readable ? 'entries readable' : 'NO entries'})`
    for (const line of [readLine, writeLine]) {
      log(`  ${line}`)
      summary.push(`observability ${line}`)
    }
    return { summary }
  } finally {
    gcObserver.disconnect()
    collector.close()
    await local.close()
  }
}

/**
 * Two parts of the SDK's cost per tool call (two spans) in hot loops of their own, CPU µs per
 * call: creating the spans (start, attributes, end; a no-op span processor), and encoding them as
 * OTLP protobuf, the SDK's serializer over a batch of 512 against writing each span as it ends
 * (otlp-span-encoder.ts). Hot loops understate what the same work costs inside a request (caches
 * shared with the whole request path): these give the proportions, benchObservability the ratio.
 */
export async function benchTracingParts(opts: { log?: (line: string) => void } = {}) {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const { ROOT_CONTEXT, trace } = await import('@opentelemetry/api')
  const { BasicTracerProvider, NoopSpanProcessor } = await import('@opentelemetry/sdk-trace-base')
  const { ProtobufTraceSerializer } = await import('@opentelemetry/otlp-transformer')
  const { ProtobufBytes, writeSpan } = await import('../functions/observability/otlp-span-encoder')
  const cpu = (f: () => void, n: number) => {
    for (let i = 0; i < Math.ceil(n / 5); i++) f()
    const c0 = process.cpuUsage()
    for (let i = 0; i < n; i++) f()
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / n
  }
  const server = { 'http.request.method': 'POST', 'url.path': '/brain/acme/projects/bench/tools/whoami/invoke', 'url.scheme': 'http' }
  const after = {
    'http.route': '/brain/:tenant/projects/:project/tools/:name/invoke',
    'http.response.status_code': 200,
    'server_tools.tenant': 'acme',
  }
  const tool = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'whoami',
    'gen_ai.tool.type': 'builtin',
    'server_tools.tenant': 'acme',
    'server_tools.project': 'bench',
    'server_tools.role': 'agent',
    'server_tools.depth': 0,
  }
  const tracer = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] }).getTracer('server-tools')
  const ended: ReadableSpan[] = []
  const call = () => {
    const s = tracer.startSpan('POST', { kind: 1 }, ROOT_CONTEXT)
    s.setAttributes(server)
    const t = tracer.startSpan('execute_tool whoami', {}, trace.setSpan(ROOT_CONTEXT, s))
    t.setAttributes(tool)
    t.setAttribute('server_tools.outcome', 'ok')
    t.end()
    s.updateName('POST /brain/:tenant/projects/:project/tools/:name/invoke')
    s.setAttributes(after)
    s.end()
    // the SDK's spans are ReadableSpans once ended
    if (ended.length < 512) ended.push(t as unknown as ReadableSpan, s as unknown as ReadableSpan)
  }
  const create = cpu(call, 50_000)
  const perCall = 2 / ended.length
  const sdkEncode = cpu(() => ProtobufTraceSerializer.serializeRequest(ended), 200) * perCall
  const w = new ProtobufBytes()
  const ourEncode =
    cpu(() => {
      w.pos = 0
      for (const s of ended) writeSpan(w, s)
    }, 200) * perCall
  log('')
  log('tracing parts — CPU µs per tool call (two spans), hot loops')
  log(`  create   ${create.toFixed(2)} µs (the SDK's own spans)`)
  log(
    `  encode   SDK serializer, batch of 512: ${sdkEncode.toFixed(2)} µs; written as each span ends: ${ourEncode.toFixed(2)} µs (${(sdkEncode / ourEncode).toFixed(1)}×)`,
  )
  return {
    summary: [
      `tracing parts (µs CPU per tool call, hot loops): create ${create.toFixed(2)}, encode ${sdkEncode.toFixed(2)} → ${ourEncode.toFixed(2)}`,
    ],
  }
}
