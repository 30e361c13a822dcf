/**
 * bench/usage — what usage counting costs on the tool-call path, measured side by side in one run:
 *
 *   A  Hono hello-world                                     (the floor: HTTP + routing, nothing else)
 *   B  POST /processes/{id}/tool-calls { name: whoami }     counting ON  (memory stores)
 *   C  the same route and app                               counting OFF (no usage listener)
 *   R  GET /processes/{id} on B's app                       the cheapest authenticated route: the
 *                                                           edge every route pays (observe, JWT,
 *                                                           request context), one record read
 *
 *   B / A   goal ≥ 0.3     (a real tool call through auth, process lookup, surface gate, dispatcher)
 *   B / R   what a tool call costs beyond any authenticated request (see docs/guide/usage.md)
 *   1 − B/C goal ≤ 10 %    (the cost of counting)
 *
 * Besides requests/s, each variant's CPU per request (`process.cpuUsage` over its rounds; the
 * client runs in this process too, the same client for every variant), which a neighbour's load
 * on a shared box distorts far less than wall time.
 *
 * Each variant is served by @hono/node-server on 127.0.0.1 and driven over keep-alive HTTP/1.1 by
 * a closed-loop client in this process (`concurrency` requests in flight). Variants run in short
 * alternating rounds (A B C, C B A, …) so drift, JIT and GC hit all three alike; a ratio is the
 * median of the per-round ratios (each round's variants ran back to back, so a neighbour's load
 * burst on a shared box hits a round, not a variant), and requests/s are medians of rounds. The
 * same three are also measured in-process through `app.fetch` (no sockets), where the relative
 * cost of the route is larger. And the counter alone: a tight dispatch loop with and without it.
 *
 * Run with `npm run bench` (all benches) or `npx tsx bench/usage.ts`.
 */

import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { type ServerType, serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { ALL_SCOPES, issueToken } from '../functions/http/auth'
import { systemClock } from '../lib/runtime/clock'
import { silentLogger } from '../lib/runtime/logger'
import { MemoryToolUsageStore } from '../lib/stores/memory/tool-usage-store'
import { whoamiTool } from '../lib/tools/builtins/whoami'
import { ToolDispatcher, type ToolGate } from '../lib/tools/dispatcher'
import { UsageCounter } from '../lib/usage/counting'
import { UsageRecorder } from '../lib/usage/recorder'

export interface UsageBenchOptions {
  /** Rounds per variant (default 15). */
  rounds?: number
  /** Duration of one round of one variant (default 400 ms). */
  roundMs?: number
  /** Requests in flight per variant (default 16). */
  concurrency?: number
  log?: (line: string) => void
}

export interface UsageBenchResult {
  rps: { hello: number; countingOn: number; countingOff: number; read: number }
  inProcess: { hello: number; countingOn: number; countingOff: number; read: number }
  /** CPU µs per request over HTTP (client and server, this process), per variant. */
  cpuUs: { hello: number; countingOn: number; countingOff: number; read: number }
  ratios: { name: string; value: number; goal: string; met: boolean }[]
  /** The counter alone: µs per dispatch with and without it (tight loop, no HTTP). */
  listener: { withoutUs: number; withUs: number; deltaUs: number }
  /** Counts the counting-on app recorded, as a check that it counted what it served. */
  counted: number
  served: number
  summary: string[]
}

const SECRET = 'bench-usage-secret'
const TENANT = 'acme'
const PROJECT = 'bench'

type Fetch = (req: Request) => Response | Promise<Response>

interface Variant {
  name: 'hello' | 'countingOn' | 'countingOff' | 'read'
  fetch: Fetch
  path: string
  method: 'GET' | 'POST'
  body?: string
  headers: Record<string, string>
}

async function toolCallVariant(name: 'countingOn' | 'countingOff', token: string) {
  const deps = createMemoryDeps({ jwtSecret: SECRET, countUsage: name === 'countingOn' })
  const app = createApp(deps)
  const auth = { authorization: `Bearer ${token}` }
  const put = async (path: string, body: string) => {
    const res = await app.request(`/brain/${TENANT}/projects/${PROJECT}/documents/${path}`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/yaml' },
      body,
    })
    if (res.status >= 300) throw new Error(`PUT ${path}: ${res.status} ${await res.text()}`)
  }
  await put('engines/bench-engine.yaml', 'allowedTools: []\nroles: [bench]\n')
  await put('recipes/bench-coder.yaml', 'engine: bench-engine\nallowedToolsAdd: [whoami]\n')
  const spawned = await app.request(`/brain/${TENANT}/projects/${PROJECT}/processes`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ recipe: 'bench-coder' }),
  })
  if (spawned.status !== 201) throw new Error(`spawn: ${spawned.status} ${await spawned.text()}`)
  const id = ((await spawned.json()) as { id: string }).id
  const variant: Variant = {
    name,
    fetch: app.fetch,
    path: `/brain/${TENANT}/projects/${PROJECT}/processes/${id}/tool-calls`,
    method: 'POST',
    body: JSON.stringify({ name: 'whoami', params: {} }),
    headers: { ...auth, 'content-type': 'application/json' },
  }
  // Prove the route does what is measured: a successful whoami.
  const probe = await app.fetch(
    new Request(`http://bench${variant.path}`, { method: 'POST', headers: variant.headers, body: variant.body }),
  )
  const outcome = (await probe.json()) as { isError: boolean }
  if (probe.status !== 200 || outcome.isError) throw new Error(`tool call probe failed: ${probe.status} ${JSON.stringify(outcome)}`)
  // the same process read back: authenticated, one record, no tool call
  const read: Variant = {
    name: 'read',
    fetch: app.fetch,
    path: `/brain/${TENANT}/projects/${PROJECT}/processes/${id}`,
    method: 'GET',
    headers: auth,
  }
  return { variant, read, deps }
}

function listen(fetch: Fetch): Promise<{ server: ServerType; port: number }> {
  return new Promise((resolve) => {
    const server = serve({ fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve({ server, port: info.port }))
  })
}

/** Closed loop over keep-alive HTTP: `concurrency` requests in flight for `ms`; returns requests/s. */
async function driveHttp(v: Variant, port: number, agent: Agent, concurrency: number, ms: number): Promise<number> {
  const deadline = performance.now() + ms
  let done = 0
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: v.path,
          method: v.method,
          headers: v.body ? { ...v.headers, 'content-length': Buffer.byteLength(v.body) } : v.headers,
          agent,
        },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`${v.name}: HTTP ${res.statusCode}`))
          res.resume()
          res.on('end', () => resolve())
        },
      )
      req.on('error', reject)
      req.end(v.body)
    })
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await one()
        done++
      }
    }),
  )
  return done / ((performance.now() - t0) / 1000)
}

/** The same closed loop through app.fetch, no sockets. */
async function driveInProcess(v: Variant, concurrency: number, ms: number): Promise<number> {
  const deadline = performance.now() + ms
  let done = 0
  const url = `http://bench${v.path}`
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const res = await v.fetch(new Request(url, { method: v.method, headers: v.headers, body: v.body }))
        if (res.status !== 200) throw new Error(`${v.name}: HTTP ${res.status}`)
        await res.arrayBuffer()
        done++
      }
    }),
  )
  return done / ((performance.now() - t0) / 1000)
}

/**
 * The counter's own cost, free of HTTP noise: the same dispatch of whoami with and without the
 * UsageCounter listening, in alternating batches; median µs per call of each.
 */
async function listenerCost(batches = 21, perBatch = 4000) {
  const gate: ToolGate = { resolve: async (n) => (n === 'whoami' ? whoamiTool : undefined), names: async () => ['whoami'] }
  const caller = { tenant: TENANT, project: PROJECT, subject: 'bench', processId: 'p', role: 'bench-coder' }
  const plain = new ToolDispatcher(silentLogger)
  const counted = new ToolDispatcher(silentLogger)
  const recorder = new UsageRecorder({ store: new MemoryToolUsageStore(), clock: systemClock, log: silentLogger, flushDelayMs: 1000 })
  counted.addListener(new UsageCounter(recorder))
  const time = async (d: ToolDispatcher) => {
    const t0 = performance.now()
    for (let i = 0; i < perBatch; i++) await d.call(gate, caller, 'whoami', {})
    return ((performance.now() - t0) * 1000) / perBatch
  }
  await time(plain)
  await time(counted)
  const a: number[] = []
  const b: number[] = []
  for (let i = 0; i < batches; i++) {
    if (i % 2) {
      a.push(await time(plain))
      b.push(await time(counted))
    } else {
      b.push(await time(counted))
      a.push(await time(plain))
    }
  }
  await recorder.flush()
  const withoutUs = median(a)
  const withUs = median(b)
  return { withoutUs, withUs, deltaUs: withUs - withoutUs }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

export async function benchUsage(opts: UsageBenchOptions = {}): Promise<UsageBenchResult> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const rounds = opts.rounds ?? 15
  const roundMs = opts.roundMs ?? 400
  const concurrency = opts.concurrency ?? 16
  const token = await issueToken(
    SECRET,
    { tenant: TENANT, sub: 'bench', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )

  const hello: Variant = {
    name: 'hello',
    fetch: new Hono().get('/', (c) => c.text('Hello Hono!')).fetch,
    path: '/',
    method: 'GET',
    headers: {},
  }
  const on = await toolCallVariant('countingOn', token)
  const off = await toolCallVariant('countingOff', token)
  const variants = [hello, on.variant, off.variant, on.read]

  const servers = await Promise.all(variants.map((v) => listen(v.fetch)))
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
  const http: Record<Variant['name'], number[]> = { hello: [], countingOn: [], countingOff: [], read: [] }
  const local: Record<Variant['name'], number[]> = { hello: [], countingOn: [], countingOff: [], read: [] }
  const cpu: Record<Variant['name'], { us: number; requests: number }> = {
    hello: { us: 0, requests: 0 },
    countingOn: { us: 0, requests: 0 },
    countingOff: { us: 0, requests: 0 },
    read: { us: 0, requests: 0 },
  }
  let served = 0
  try {
    // Warm-up: JIT, sockets, caches.
    for (let i = 0; i < variants.length; i++) await driveHttp(variants[i], servers[i].port, agent, concurrency, 300)
    for (const v of variants) await driveInProcess(v, concurrency, 200)
    await on.deps.usage.flush()
    const baseline = await countedCalls(on.deps)

    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [0, 1, 2, 3] : [3, 2, 1, 0]
      for (const i of order) {
        const c0 = process.cpuUsage()
        const rps = await driveHttp(variants[i], servers[i].port, agent, concurrency, roundMs)
        const used = process.cpuUsage(c0)
        cpu[variants[i].name].us += used.user + used.system
        cpu[variants[i].name].requests += (rps * roundMs) / 1000
        http[variants[i].name].push(rps)
        if (variants[i].name === 'countingOn') served += Math.round((rps * roundMs) / 1000)
      }
    }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? [0, 1, 2, 3] : [3, 2, 1, 0]
      for (const i of order) local[variants[i].name].push(await driveInProcess(variants[i], concurrency, Math.round(roundMs / 2)))
    }
    await on.deps.usage.flush()
    const counted = (await countedCalls(on.deps)) - baseline
    const listener = await listenerCost()

    const medians = (m: typeof http) => ({
      hello: median(m.hello),
      countingOn: median(m.countingOn),
      countingOff: median(m.countingOff),
      read: median(m.read),
    })
    const rps = medians(http)
    const inProcess = medians(local)
    const cpuUs = {
      hello: cpu.hello.us / cpu.hello.requests,
      countingOn: cpu.countingOn.us / cpu.countingOn.requests,
      countingOff: cpu.countingOff.us / cpu.countingOff.requests,
      read: cpu.read.us / cpu.read.requests,
    }
    const perRound = (m: typeof http, f: (on: number, off: number, hello: number, read: number) => number) =>
      median(m.countingOn.map((on, r) => f(on, m.countingOff[r], m.hello[r], m.read[r])))
    const vsHello = perRound(http, (on, _off, hello) => on / hello)
    const cost = perRound(http, (on, off) => 1 - on / off)
    const localVsHello = perRound(local, (on, _off, hello) => on / hello)
    const localCost = perRound(local, (on, off) => 1 - on / off)
    const readVsHello = perRound(http, (_on, _off, hello, read) => read / hello)
    const vsRead = perRound(http, (on, _off, _hello, read) => on / read)
    const localVsRead = perRound(local, (on, _off, _hello, read) => on / read)
    const ratios = [
      { name: 'whoami tool call (counting on) / hello-world, HTTP', value: vsHello, goal: '≥ 0.30', met: vsHello >= 0.3 },
      { name: 'cost of counting: 1 − on/off, HTTP', value: cost, goal: '≤ 10 %', met: cost <= 0.1 },
    ]
    const fmt = (n: number) => n.toFixed(0).padStart(7)
    log('')
    log(
      `usage bench — ${rounds} rounds × ${roundMs} ms per variant, ${concurrency} in flight, keep-alive HTTP on 127.0.0.1 (req/s, median of rounds)`,
    )
    log(`  hello-world            ${fmt(rps.hello)}    in-process ${fmt(inProcess.hello)}`)
    log(`  whoami, counting on    ${fmt(rps.countingOn)}    in-process ${fmt(inProcess.countingOn)}`)
    log(`  whoami, counting off   ${fmt(rps.countingOff)}    in-process ${fmt(inProcess.countingOff)}`)
    log(`  GET process (read)     ${fmt(rps.read)}    in-process ${fmt(inProcess.read)}`)
    log(
      `  CPU µs per request (HTTP, client + server): hello ${cpuUs.hello.toFixed(0)}, read ${cpuUs.read.toFixed(0)}, whoami on ${cpuUs.countingOn.toFixed(0)}, off ${cpuUs.countingOff.toFixed(0)}`,
    )
    log(
      `  on / hello-world       ${vsHello.toFixed(2)}×  (goal ≥ 0.30)   in-process ${localVsHello.toFixed(2)}×   (median of per-round ratios)`,
    )
    log(
      `  read / hello-world     ${readVsHello.toFixed(2)}×  (no goal: the floor of any authenticated route)   CPU ${(cpuUs.hello / cpuUs.read).toFixed(2)}×`,
    )
    log(
      `  on / read              ${vsRead.toFixed(2)}×  (a tool call beyond an authenticated read)   in-process ${localVsRead.toFixed(2)}×   CPU ${(cpuUs.read / cpuUs.countingOn).toFixed(2)}×`,
    )
    log(
      `  cost of counting       ${(cost * 100).toFixed(1)} %  (goal ≤ 10 %)  in-process ${(localCost * 100).toFixed(1)} %   (median of per-round 1 − on/off)`,
    )
    log(
      `  counter alone          ${listener.withUs.toFixed(2)} µs vs ${listener.withoutUs.toFixed(2)} µs per dispatch: +${listener.deltaUs.toFixed(2)} µs = ${((listener.deltaUs / (1e6 / inProcess.countingOn)) * 100).toFixed(2)} % of one in-process route call`,
    )
    log(`  counted whoami calls during the measured rounds: ${counted} (HTTP ≈ ${served} + in-process rounds)`)
    const summary = ratios.map(
      (r) =>
        `usage: ${r.name} = ${r.name.startsWith('cost') ? `${(r.value * 100).toFixed(1)} %` : `${r.value.toFixed(2)}×`} (goal ${r.goal}) ${r.met ? 'met' : 'NOT met'}`,
    )
    summary.push(
      `usage: authenticated read (GET process) / hello-world, HTTP = ${readVsHello.toFixed(2)}×; whoami / read = ${vsRead.toFixed(2)}×; CPU µs per request hello ${cpuUs.hello.toFixed(0)}, read ${cpuUs.read.toFixed(0)}, whoami ${cpuUs.countingOn.toFixed(0)}`,
    )
    summary.push(
      `usage: counter alone +${listener.deltaUs.toFixed(2)} µs per dispatch (${listener.withoutUs.toFixed(2)} → ${listener.withUs.toFixed(2)} µs)`,
    )
    return { rps, inProcess, cpuUs, ratios, listener, counted, served, summary }
  } finally {
    agent.destroy()
    await Promise.all(servers.map(({ server }) => new Promise<void>((r) => server.close(() => r()))))
  }
}

async function countedCalls(deps: ReturnType<typeof createMemoryDeps>): Promise<number> {
  const insights = await deps.usage.insights(TENANT, PROJECT)
  return insights
    .flatMap((r) => r.tools)
    .filter((t) => t.toolName === 'whoami')
    .reduce((s, t) => s + t.calls, 0)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchUsage().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      process.exit(1)
    },
  )
}
