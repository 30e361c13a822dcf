/**
 * bench/quotas — what quotas cost on the tool-call path, and whether a tenant flooding past its
 * quota slows another tenant. Side by side in one run, in-process through `app.fetch` (no
 * sockets: the route's own cost is the whole cost), memory stores:
 *
 *   throughput  POST /projects/{p}/tools/whoami/invoke, closed loop, 16 in flight
 *     off   no quotas.yaml
 *     on    a _tenant quotas.yaml whose two rules (a rate and a daily volume, never reached)
 *           select every call: each call is matched and spends leased budget
 *     goal  on / off ≥ 0.95 (median of per-round ratios; rounds alternate off/on); beside it the
 *           CPU time per call of each side (process.cpuUsage, steadier than throughput on a
 *           shared machine) and the admission's own CPU per call, measured alone
 *
 *   flood       tenant `quiet` calls whoami one at a time and its p99 is taken, alone and while
 *               tenant `flood` sends 10× its quota (50 a second → 500 a second, open loop); the
 *               flood's surplus is refused with 429 before any tool runs
 *     goal  quiet p99 flooded / quiet p99 alone ≤ 1.2 (alternating rounds, p99 over all samples)
 *
 * Run with `npm run bench -- quotas` or `npx tsx bench/run.ts quotas`.
 */
import { performance } from 'node:perf_hooks'
import { type BuiltDeps, createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { ALL_SCOPES, issueToken } from '../functions/http/auth'

const SECRET = 'bench-quotas-secret'
const ROUNDS = Number(process.env.QUOTAS_ROUNDS ?? 8)
const ROUND_MS = Number(process.env.QUOTAS_ROUND_MS ?? 500)
const FLOOD_QUOTA = 50

type App = ReturnType<typeof createApp>

const token = (tenant: string) =>
  issueToken(
    SECRET,
    { tenant, sub: 'bench@example.test', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )

async function appWith(quotas: Record<string, string>): Promise<App> {
  return (await depsWith(quotas)).app
}

async function depsWith(quotas: Record<string, string>) {
  const deps = createMemoryDeps({ jwtSecret: SECRET })
  const app = createApp(deps)
  for (const [tenant, body] of Object.entries(quotas)) {
    const res = await app.request(`/brain/${tenant}/projects/_tenant/documents/quotas.yaml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await token(tenant)}`, 'content-type': 'application/yaml' },
      body,
    })
    if (res.status !== 201) throw new Error(`quotas.yaml for ${tenant}: ${res.status} ${await res.text()}`)
  }
  return { app, deps }
}

function invoker(app: App, tenant: string, auth: string) {
  const init = { method: 'POST', headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: '{"params":{}}' }
  return async () => (await app.request(`/brain/${tenant}/projects/p1/tools/whoami/invoke`, init)).status
}

/** CPU time (user + system, µs) per request of the closed loops run so far, per side. */
const cpu = { off: { us: 0, calls: 0 }, on: { us: 0, calls: 0 } }

/** Requests per second of a closed loop with `concurrency` in flight, for `ms` (its CPU time added to `side`). */
async function closedLoop(call: () => Promise<number>, ms: number, concurrency = 16, side?: keyof typeof cpu): Promise<number> {
  const end = performance.now() + ms
  const cpu0 = process.cpuUsage()
  let done = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const status = await call()
        if (status !== 200) throw new Error(`unexpected status ${status}`)
        done++
        await new Promise((r) => setImmediate(r))
      }
    }),
  )
  if (side) {
    const used = process.cpuUsage(cpu0)
    cpu[side].us += used.user + used.system
    cpu[side].calls += done
  }
  return (done / ms) * 1000
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]

/** Latencies (ms) of one-at-a-time calls for `ms`. */
async function latencies(call: () => Promise<number>, ms: number): Promise<number[]> {
  const out: number[] = []
  const end = performance.now() + ms
  while (performance.now() < end) {
    const t0 = performance.now()
    const status = await call()
    out.push(performance.now() - t0)
    if (status !== 200) throw new Error(`bystander answered ${status}`)
    // in-process calls on memory stores settle in microtasks: yield, or no timer (the flood's) ever runs
    await new Promise((r) => setImmediate(r))
  }
  return out
}

/** `rate` calls a second, open loop (each fired on schedule whatever the last one did), until `stop`. */
async function openLoop(call: () => Promise<number>, rate: number, stop: () => boolean, statuses: Map<number, number>) {
  const inFlight = new Set<Promise<void>>()
  const t0 = performance.now()
  let sent = 0
  while (!stop()) {
    const due = Math.floor(((performance.now() - t0) / 1000) * rate)
    for (; sent < due; sent++) {
      const p: Promise<void> = call().then((s) => {
        statuses.set(s, (statuses.get(s) ?? 0) + 1)
        inFlight.delete(p)
      })
      inFlight.add(p)
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  await Promise.all(inFlight)
}

export async function benchQuotas(opts: { log?: (l: string) => void } = {}) {
  const log = opts.log ?? ((l: string) => console.log(l))
  const acme = await token('acme')

  // ── throughput, quotas off / on ──
  const off = invoker(await appWith({}), 'acme', acme)
  const withQuotas = await depsWith({
    acme: 'rules:\n  - match: { tool: whoami }\n    rate: { requests: 1000000000, per: second }\n  - match: {}\n    volume: { requests: 1000000000, per: day }\n',
  })
  const on = invoker(withQuotas.app, 'acme', acme)
  await closedLoop(off, 300)
  await closedLoop(on, 300)
  const rounds: { off: number; on: number }[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const pair =
      i % 2
        ? { on: await closedLoop(on, ROUND_MS, 16, 'on'), off: await closedLoop(off, ROUND_MS, 16, 'off') }
        : { off: await closedLoop(off, ROUND_MS, 16, 'off'), on: await closedLoop(on, ROUND_MS, 16, 'on') }
    rounds.push(pair)
  }
  const ratio = median(rounds.map((r) => r.on / r.off))
  const offRps = median(rounds.map((r) => r.off))
  const onRps = median(rounds.map((r) => r.on))
  // CPU per call is what a shared machine disturbs least: it does not count the time other
  // processes hold the cores. Admission alone, called the way the dispatcher calls it, shows
  // what quotas add to a call whatever else the call costs.
  const cpuOff = cpu.off.us / cpu.off.calls
  const cpuOn = cpu.on.us / cpu.on.calls
  const admitUs = await admissionCpu(withQuotas.deps.quotas.limiter)

  // ── flood: one tenant at 10× its quota, another's p99 ──
  const app = await appWith({ flood: `rules:\n  - match: {}\n    rate: { requests: ${FLOOD_QUOTA}, per: second }\n` })
  const quiet = invoker(app, 'quiet', await token('quiet'))
  const flooder = invoker(app, 'flood', await token('flood'))
  await latencies(quiet, 300)
  const alone: number[] = []
  const flooded: number[] = []
  const statuses = new Map<number, number>()
  for (let i = 0; i < ROUNDS; i++) {
    alone.push(...(await latencies(quiet, ROUND_MS)))
    let stopped = false
    const flood = openLoop(flooder, 10 * FLOOD_QUOTA, () => stopped, statuses)
    flooded.push(...(await latencies(quiet, ROUND_MS)))
    stopped = true
    await flood
  }
  const p99Alone = p(alone, 0.99)
  const p99Flooded = p(flooded, 0.99)
  const floodRatio = p99Flooded / p99Alone
  const admitted = statuses.get(200) ?? 0
  const refused = statuses.get(429) ?? 0

  const lines = [
    `quotas throughput: off ${offRps.toFixed(0)} req/s, on ${onRps.toFixed(0)} req/s (each the median of its side), on/off ${ratio.toFixed(3)} (the median of ${rounds.length} paired rounds' ratios; goal ≥ 0.95) ${ratio >= 0.95 ? 'ok' : 'NOT MET'}`,
    `quotas CPU per call: off ${cpuOff.toFixed(1)} µs, on ${cpuOn.toFixed(1)} µs, off/on ${(cpuOff / cpuOn).toFixed(3)} (goal ≥ 0.95) ${cpuOff / cpuOn >= 0.95 ? 'ok' : 'NOT MET'}; admission alone ${admitUs.toFixed(2)} µs a call (two rules selecting it, budget leased)`,
    `quotas flood: quiet tenant p99 alone ${p99Alone.toFixed(2)} ms (${alone.length} calls), flooded ${p99Flooded.toFixed(2)} ms (${flooded.length} calls), ×${floodRatio.toFixed(2)} (goal ≤ 1.2) ${floodRatio <= 1.2 ? 'ok' : 'NOT MET'}; flood tenant: ${admitted} admitted, ${refused} refused (429) at ${10 * FLOOD_QUOTA}/s against ${FLOOD_QUOTA}/s`,
  ]
  for (const l of lines) log(l)
  return { summary: lines, ratio, floodRatio, offRps, onRps, cpuOff, cpuOn, admitUs, p99Alone, p99Flooded, admitted, refused }
}

/** CPU µs of one admission (rules cached, leases holding budget), over 200,000 calls. */
async function admissionCpu(limiter: BuiltDeps['quotas']['limiter']): Promise<number> {
  const caller = { tenant: 'acme', project: 'p1', role: 'bench' }
  const subject = { role: 'bench', tool: 'whoami', type: 'builtin', labels: [] }
  for (let i = 0; i < 10_000; i++) await limiter.admit(caller, subject)
  const n = 200_000
  const t0 = process.cpuUsage()
  for (let i = 0; i < n; i++) if (await limiter.admit(caller, subject)) throw new Error('admission refused a call in the bench')
  const used = process.cpuUsage(t0)
  return (used.user + used.system) / n
}
