/**
 * `npm run bench -- fair-gate`: what the fair-share gate (lib/runtime/fair-gate.ts) costs a
 * request — `enter` and its release on the real clock and busy meter, as functions/deps.ts
 * composes them — in CPU µs per request (`process.cpuUsage`), alone (the path of every request
 * of a quiet server) and with two other tenants present. Read against a tool call's own CPU
 * (bench/usage.ts: whoami ~430 µs per request over HTTP).
 */
import { performance } from 'node:perf_hooks'
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

export function benchFairGate() {
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
  const summary = [
    `fair-gate: enter + release ${alone.toFixed(2)} µs CPU per request alone, ${shared.toFixed(2)} µs with other tenants present`,
  ]
  console.log(`  ${summary[0]}`)
  return { summary }
}
