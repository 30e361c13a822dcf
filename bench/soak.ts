/**
 * `npm run bench -- soak` (issue 10 F9): `npm start`'s app (functions/local.ts as a child on a
 * free port, embedded dynalite + s3rver, worker sandboxes) takes 50,000 listings and 20,000
 * scripted calls, 8 at a time; the app's RSS and heap are sampled (after a GC) ~28 times
 * over the run and the slope per 1,000 requests is fitted by least squares per phase (listings,
 * scripted calls), after its first two samples. Goal: ≈ 0 — before the dynalite patch it was ~18 KB per listing.
 * `SOAK_LISTINGS` / `SOAK_CALLS` change the counts.
 */
import { BYSTANDER, type HostileApp, startApp } from '../test/hostile/harness'
import { hammer, listing } from '../test/hostile/rows/store'

const SCRIPT =
  'type: scripted\ndescription: Add two numbers.\nparameters:\n  inputs: [{ name: a, type: number }, { name: b, type: number }]\n  source: a + b\n'
const DOC = 'type: doc_lookup\ndescription: Soak.\nparameters:\n  path: documents/getting-started.md\n'

interface Sample {
  requests: number
  rssMb: number
  heapMb: number
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length
  const mx = xs.reduce((a, b) => a + b, 0) / n
  const my = ys.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my)
    den += (xs[i] - mx) ** 2
  }
  return den === 0 ? 0 : num / den
}

async function phase(
  app: HostileApp,
  label: string,
  total: number,
  every: number,
  send: (i: number) => Promise<Response>,
  samples: Sample[],
  offset: number,
) {
  const t0 = performance.now()
  for (let done = 0; done < total; done += every) {
    const n = Math.min(every, total - done)
    await hammer(n, 8, send)
    const s = await app.sample({ gc: true })
    samples.push({ requests: offset + done + n, rssMb: s.rssMb, heapMb: s.heapUsedMb })
    process.stdout.write(
      `  ${label.padEnd(9)} ${String(offset + done + n).padStart(6)} requests  RSS ${s.rssMb.toFixed(1).padStart(7)} MB  heap ${s.heapUsedMb.toFixed(1).padStart(6)} MB\n`,
    )
  }
  return (total / ((performance.now() - t0) / 1000)).toFixed(0)
}

export async function benchSoak() {
  const listings = Number(process.env.SOAK_LISTINGS ?? 50_000)
  const calls = Number(process.env.SOAK_CALLS ?? 20_000)
  // ~28 samples over the run, none closer than 500 requests
  const every = Math.max(500, Math.round((listings + calls) / 28 / 100) * 100)
  console.log(
    `\nsoak: ${listings} listings + ${calls} scripted calls on npm start's app (8 concurrent; RSS/heap after a GC every ${every})`,
  )
  const app = await startApp({ label: 'soak' })
  try {
    const headers = { 'content-type': 'application/yaml' }
    for (const [layer, name, body] of [
      ['p1', 'soak_doc', DOC],
      ['_tenant', 'soak_tenant_doc', DOC],
      ['p1', 'add', SCRIPT],
    ]) {
      const res = await app.call(BYSTANDER, 'PUT', `/projects/${layer}/server-tools/${name}`, body, headers)
      if (res.status !== 201) throw new Error(`setup PUT ${name}: ${res.status} ${await res.text()}`)
    }
    const start = await app.sample({ gc: true })
    const samples: Sample[] = [{ requests: 0, rssMb: start.rssMb, heapMb: start.heapUsedMb }]
    const listRate = await phase(app, 'listings', listings, every, listing(app, BYSTANDER), samples, 0)
    const callRate = await phase(
      app,
      'scripted',
      calls,
      every,
      (i) => app.call(BYSTANDER, 'POST', '/projects/p1/tools/add/invoke', { params: { a: i, b: 1 } }),
      samples,
      listings,
    )
    if (!app.alive()) throw new Error('the app died during the soak')

    // each phase is fitted on its own after its first samples: the first scripted call starts the
    // sandbox workers (a step of ~150 MB of WASM), which is a level, not a slope
    const fitLine = (from: number, to: number, pick: (s: Sample) => number) => {
      const part = samples.filter((s) => s.requests > from && s.requests <= to)
      const steady = part.slice(Math.min(2, Math.max(0, part.length - 3)))
      return slope(
        steady.map((s) => s.requests / 1000),
        steady.map(pick),
      )
    }
    const kb = (mb: number) => `${(mb * 1024).toFixed(0)} KB`
    const listRss = fitLine(0, listings, (s) => s.rssMb)
    const listHeap = fitLine(0, listings, (s) => s.heapMb)
    const callRss = fitLine(listings, listings + calls, (s) => s.rssMb)
    const callHeap = fitLine(listings, listings + calls, (s) => s.heapMb)
    const first = samples[0]
    const last = samples[samples.length - 1]
    console.log(`  throughput: ${listRate} listings/s, ${callRate} scripted calls/s`)
    console.log(`  RSS ${first.rssMb} → ${last.rssMb} MB, heap ${first.heapMb} → ${last.heapMb} MB over ${last.requests} requests`)
    console.log(`  slope per 1,000 requests after warm-up (goal ≈ 0; unpatched dynalite: ~18,000 KB of RSS per 1,000 listings):`)
    console.log(`    listings: RSS ${kb(listRss)}, heap ${kb(listHeap)}`)
    console.log(`    scripted: RSS ${kb(callRss)}, heap ${kb(callHeap)}`)
    return {
      summary: [
        `soak: per 1k requests, listings RSS ${kb(listRss)} heap ${kb(listHeap)}; scripted RSS ${kb(callRss)} heap ${kb(callHeap)}; RSS ${first.rssMb} → ${last.rssMb} MB over ${last.requests} requests`,
      ],
    }
  } finally {
    await app.stop()
  }
}
