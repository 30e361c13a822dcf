/**
 * The hostile harness's bystander (harness.ts `bystander`), in a worker thread of its own: a row's
 * attack requests are sent and their answers read on the harness's event loop (800 at once, in
 * one row), and a bystander timed on that same loop would be charged for the client's work
 * instead of the app's. workerData `{ url, token, gapMs }`: calls `url` (whoami) one at a time,
 * `gapMs` apart, until the parent posts 'stop'; then posts `{ latencies, failures }`.
 */
import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'

const { url, token, gapMs } = workerData
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const body = JSON.stringify({ params: {} })
let stopped = false
parentPort.once('message', () => {
  stopped = true
})
const latencies = []
const failures = []
do {
  const t0 = performance.now()
  try {
    const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(180_000) })
    const text = await res.text()
    if (res.status !== 200) failures.push(`${res.status}: ${text.slice(0, 200)}`)
  } catch (e) {
    failures.push(`request failed: ${e.message}`)
  }
  latencies.push(performance.now() - t0)
  if (!stopped) await new Promise((r) => setTimeout(r, gapMs))
} while (!stopped)
parentPort.postMessage({ latencies, failures })
