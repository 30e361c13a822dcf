/**
 * The victim of `benchHostileClasses` (bench/hostile.ts), run in a worker thread of its own: the
 * attack floods share the bench's event loop (building a 340 KB body, reading answers), and a
 * victim timed on that same loop would be charged for the bench's own work instead of the app's.
 * workerData `{ base, token, ms }`; posts `{ latencies, failures }` when `ms` is over.
 */
import { performance } from 'node:perf_hooks'
import { parentPort, workerData } from 'node:worker_threads'

const { base, token, ms } = workerData
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
const calls = [
  ['whoami', JSON.stringify({ params: {} })],
  ['execute_javascript', JSON.stringify({ params: { code: '1+1' } })],
]
const latencies = []
let failures = 0
const end = performance.now() + ms
for (let i = 0; performance.now() < end; i++) {
  const [tool, body] = calls[i % 2]
  const t0 = performance.now()
  try {
    const res = await fetch(`${base}/brain/bystander/projects/p1/tools/${tool}/invoke`, { method: 'POST', headers, body })
    const text = await res.text()
    if (res.status !== 200 || JSON.parse(text).isError) failures++
  } catch {
    failures++
  }
  latencies.push(performance.now() - t0)
}
parentPort.postMessage({ latencies, failures })
