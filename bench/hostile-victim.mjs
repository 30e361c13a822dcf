/**
 * The victim of `benchHostileClasses` (bench/hostile.ts), run in a worker thread of its own: the
 * attack floods share the bench's event loop (building a 340 KB body, reading answers), and a
 * victim timed on that same loop would be charged for the bench's own work instead of the app's.
 * workerData `{ base, token, ms, trace, nice }`; posts `{ nice, latencies, failures, sched, calls }` when `ms`
 * is over: `sched` is this thread's schedstat over the run (ms on a CPU, ms waiting on a run
 * queue); with `trace`, `calls` has each call's start and end on the machine's monotonic clock
 * (the one probe.mjs stamps the app's side with) and this thread's run-queue wait during it.
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'

const { base, token, ms, trace, nice } = workerData

/**
 * This thread's nice value, set on the thread alone (Linux: a thread id given to setpriority names
 * that thread). The victim stands for a tenant's client on another machine: its own wait for one of
 * the 2 cores the app and the attack client share is not the service's latency. Returns the value
 * in force (0 when the platform or the user's rights refuse it).
 */
function boost() {
  if (!nice) return 0
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    setPriority(tid, nice)
    return nice
  } catch {
    return 0
  }
}
const niceInForce = boost()
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const calls = [
  ['whoami', JSON.stringify({ params: {} })],
  ['execute_javascript', JSON.stringify({ params: { code: '1+1' } })],
]
/** This thread's time on a CPU and waiting on a run queue, in ms; zeros without /proc. */
function sched() {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')
    return { runMs: Number(run) / 1e6, waitMs: Number(wait) / 1e6 }
  } catch {
    return { runMs: 0, waitMs: 0 }
  }
}
const monoMs = () => Number(process.hrtime.bigint()) / 1e6
const latencies = []
const timed = []
let failures = 0
const first = sched()
const end = performance.now() + ms
for (let i = 0; performance.now() < end; i++) {
  const [tool, body] = calls[i % 2]
  const before = trace ? { startMs: monoMs(), ...sched() } : undefined
  const t0 = performance.now()
  try {
    const res = await fetch(`${base}/brain/bystander/projects/p1/tools/${tool}/invoke`, { method: 'POST', headers, body })
    const text = await res.text()
    if (res.status !== 200 || JSON.parse(text).isError) failures++
  } catch {
    failures++
  }
  latencies.push(performance.now() - t0)
  if (before) timed.push({ startMs: before.startMs, endMs: monoMs(), waitMs: sched().waitMs - before.waitMs })
}
const last = sched()
parentPort.postMessage({
  nice: niceInForce,
  latencies,
  failures,
  sched: { runMs: last.runMs - first.runMs, waitMs: last.waitMs - first.waitMs },
  calls: timed,
})
