/**
 * `npm run bench -- fair-gate`: what the fair-share gate (lib/runtime/fair-gate.ts) costs a
 * request — `enter` and its release on the real clock and busy meter, as functions/deps.ts
 * composes them — in CPU µs per request (`process.cpuUsage`), alone (the path of every request
 * of a quiet server) and with two other tenants present; then a whoami call over HTTP (real
 * sockets on 127.0.0.1, client and server in this process) with the gate and without it, CPU µs
 * per call, medians of alternating batches — the gate's whole cost on the hot path.
 */
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { serve } from '@hono/node-server'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { issueToken } from '../functions/http/auth'
import { FAIR_GATE_DEFAULTS, FairGate, type Release } from '../lib/runtime/fair-gate'

const clock = {
  now: () => performance.now(),
  after(ms: number, fn: () => void) {
    const t = setTimeout(fn, ms)
    t.unref()
    return () => clearTimeout(t)
  },
}
const meter = { busyMs: () => performance.eventLoopUtilization().active }

function cpuUsPerRequest(requests: number, one: (gate: FairGate, i: number) => number): number {
  const gate = new FairGate(clock, meter, FAIR_GATE_DEFAULTS)
  for (let i = 0; i < 10_000; i++) one(gate, i)
  const c0 = process.cpuUsage()
  let served = 0
  for (let i = 0; i < requests; i++) served += one(gate, i)
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / served
}

async function httpCpuUsPerCall(): Promise<{ on: number; off: number }> {
  const secret = 'bench-fair-gate-secret'
  const servers: ReturnType<typeof serve>[] = []
  const listen = async (on: boolean) => {
    const app = createApp(createMemoryDeps({ jwtSecret: secret, fairShare: on ? undefined : false }))
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    servers.push(s)
    await new Promise<void>((r) => s.once('listening', () => r()))
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}/brain/acme/projects/p1/tools/whoami/invoke`
  }
  const urls = { on: await listen(true), off: await listen(false) }
  const token = await issueToken(
    secret,
    { tenant: 'acme', sub: 'bench', scope: 'tools:invoke', expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const batch = async (url: string, n: number) => {
    const c0 = process.cpuUsage()
    for (let i = 0; i < n; i++) await (await fetch(url, { method: 'POST', headers, body: '{"params":{}}' })).text()
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / n
  }
  await batch(urls.on, 300)
  await batch(urls.off, 300)
  const cpu = { on: [] as number[], off: [] as number[] }
  for (let r = 0; r < 12; r++)
    for (const m of r % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const)) cpu[m].push(await batch(urls[m], 400))
  for (const s of servers) s.close()
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  return { on: median(cpu.on), off: median(cpu.off) }
}

export async function benchFairGate() {
  const alone = cpuUsPerRequest(1_000_000, (gate) => {
    ;(gate.enter('acme') as Release)()
    return 1
  })
  // another tenant's request in flight whenever one of these starts: the path that counts shares
  const shared = cpuUsPerRequest(1_000_000, (gate, i) => {
    const a = gate.enter('acme') as Release
    const b = gate.enter(i % 2 ? 'beta' : 'gamma')
    if (typeof b === 'function') b()
    a()
    return 2
  })
  const http = await httpCpuUsPerCall()
  const summary = [
    `fair-gate: enter + release ${alone.toFixed(2)} µs CPU per request alone, ${shared.toFixed(2)} µs with other tenants present`,
    `fair-gate: whoami over HTTP ${http.on.toFixed(1)} µs CPU per call with the gate, ${http.off.toFixed(1)} without (client and server), on/off ${(http.on / http.off).toFixed(3)}`,
  ]
  for (const line of summary) console.log(`  ${line}`)
  return { summary }
}
