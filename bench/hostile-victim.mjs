/**
 * The victim of `benchHostileClasses` (bench/hostile.ts), a process of its own, started under
 * `nice` by the bench and kept for the whole run. It stands for another tenant's client on another
 * machine: as a worker thread of the bench it shared the bench's V8 helper threads (whose garbage
 * collection and compiling the attack client keeps busy) and its event loop's process, so its
 * latency carried the attack client's work as well as the app's.
 * Each IPC message `{ base, token, ms, trace }` runs one window: whoami and execute_javascript "1+1"
 * in turn, one call in flight, for `ms`; the answer is `{ nice, latencies, failures, sched, calls }`:
 * `sched` is this process's schedstat summed over its threads (ms on a CPU, ms waiting on a run
 * queue); with `trace`, `calls` has each call's start and end on the machine's monotonic clock (the
 * one probe.mjs stamps the app's side with) and this process's run-queue wait during it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { getPriority } from 'node:os'
import { performance } from 'node:perf_hooks'

const calls = [
  ['whoami', JSON.stringify({ params: {} })],
  ['execute_javascript', JSON.stringify({ params: { code: '1+1' } })],
]

/** This process's time on a CPU and waiting on a run queue, in ms, summed over its threads; zeros without /proc. */
function sched() {
  let runMs = 0
  let waitMs = 0
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      try {
        const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')
        runMs += Number(run) / 1e6
        waitMs += Number(wait) / 1e6
      } catch {
        // a thread that ended between the listing and the read
      }
    }
  } catch {
    // no /proc
  }
  return { runMs, waitMs }
}
const monoMs = () => Number(process.hrtime.bigint()) / 1e6

async function window({ base, token, ms, trace }) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
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
  return {
    nice: getPriority(),
    latencies,
    failures,
    sched: { runMs: last.runMs - first.runMs, waitMs: last.waitMs - first.waitMs },
    calls: timed,
  }
}

process.on('message', (m) => {
  window(m).then(
    (r) => process.send(r),
    (e) => process.send({ error: String(e?.stack ?? e) }),
  )
})
process.on('disconnect', () => process.exit(0))
