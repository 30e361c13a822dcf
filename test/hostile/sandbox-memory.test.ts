/**
 * Issue 10 F2: a script that goes over SANDBOX_MEMORY_MB ends in RESOURCE_EXHAUSTED close to that
 * limit — whatever allocates the memory (arrays, strings, ArrayBuffers, typed arrays, object graphs,
 * Maps, memory held across awaits), on the sync and the asyncify build — and the process gives the
 * memory back. Before the fix the reproduction succeeded at 1.5 GB and RSS stayed there.
 * RSS is read after a full GC (here and in the workers) and printed; the assertion allows 100 MB.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { collectedRssMb, ISOLATIONS, js, sandboxApp, settled, UNMETERED } from './sandbox-support'

const LIMIT_MB = 32
const RSS_SLACK_MB = 100
const OUT_OF_MEMORY = { error: 'RESOURCE_EXHAUSTED', message: `the script ran out of memory (limit ${LIMIT_MB} MiB)` }

/** Each is run as is (sync build) and with `typeof vance;` in front (asyncify build). */
const HOGS: [string, string][] = [
  ["the issue's 400 arrays of 100,000 numbers", 'var a=[]; for(var i=0;i<400;i++) a.push(new Array(1e5).fill(i)); a.length'],
  ['strings of a million characters', 'var a=[]; for(var i=0;;i++) a.push("x".repeat(1e6) + i)'],
  ['ArrayBuffers of 1 MiB', 'var a=[]; for(;;) a.push(new ArrayBuffer(1 << 20))'],
  ['typed arrays', 'var a=[]; for(;;) a.push(new Float64Array(1 << 17))'],
  ['a graph of small objects', 'var head = null; for(var i=0;;i++) head = { i: i, s: "n" + i, next: head, peer: { back: head } }'],
  ['a Map of arrays', 'var m = new Map(); for(var i=0;;i++) m.set(i, [i, i + 1, String(i)])'],
  ['memory held across awaits', 'async function grow(a) { for(;;) { a.push(new ArrayBuffer(1 << 18)); await null } } grow([])'],
]

describe.each(ISOLATIONS)('a real memory ceiling for scripts (%s)', (isolation) => {
  const app = sandboxApp({ isolation, memoryBytes: LIMIT_MB * 1024 * 1024, maxStatements: UNMETERED })
  let baseline = 0

  // The baseline is taken with as many workers (and engines) running as the tests below leave
  // behind — four tenants at once — so what is compared is memory kept by runs at the ceiling,
  // not the size of the worker pool (three more workers alone measured ~90 MB).
  beforeAll(async () => {
    await Promise.all(['w1', 'w2', 'w3', 'w4'].map((t) => js(app, t, '1 + 1')))
    await Promise.all(['w1', 'w2', 'w3', 'w4'].map((t) => js(app, t, 'typeof vance; 1 + 1')))
    await settled(app, 4)
    baseline = await collectedRssMb(app)
  })

  for (const [shape, code] of HOGS) {
    for (const build of ['sync', 'asyncify'] as const) {
      it(`ends ${shape} in RESOURCE_EXHAUSTED (${build} build)`, async () => {
        const res = await js(app, 'hog', build === 'sync' ? code : `typeof vance; ${code}`, 30_000)
        expect((await res.json()).content).toEqual(OUT_OF_MEMORY)
      })
    }
  }

  it(`lets a script hold close to ${LIMIT_MB} MiB and no more`, async () => {
    for (const prefix of ['', 'typeof vance; ']) {
      const res = await js(app, 'hog', `${prefix}var a=[]; try { for(;;) a.push(new ArrayBuffer(1 << 20)) } catch (e) {} a.length`, 30_000)
      const held = (await res.json()).content.value as number
      console.log(`[F2 ${isolation}] ${prefix ? 'asyncify' : 'sync'} build: a script held ${held} × 1 MiB under a ${LIMIT_MB} MiB limit`)
      expect(held).toBeGreaterThanOrEqual(LIMIT_MB - 8)
      expect(held).toBeLessThanOrEqual(LIMIT_MB)
    }
  })

  it('ends four tenants at once at their ceiling and keeps answering', async () => {
    const results = await Promise.all(['h1', 'h2', 'h3', 'h4'].map((t) => js(app, t, HOGS[0][1], 30_000).then((r) => r.json())))
    for (const r of results) expect(r.content).toEqual(OUT_OF_MEMORY)
    expect((await (await js(app, 'other', '1 + 1')).json()).content.value).toBe(2)
  })

  it('gives the memory back: RSS after all of the above is near where it started', async () => {
    await settled(app, 4)
    const after = await collectedRssMb(app)
    const stats = await app.deps.sandbox.stats()
    console.log(
      `[F2 ${isolation}] RSS ${baseline} → ${after} MB after ${HOGS.length * 2 + 6} runs at the ceiling; engines retired ${stats.enginesRetired}; engine memory ${stats.engines.map((e) => Math.round(e.wasmBytes / 1048576)).join('/')} MiB`,
    )
    expect(after - baseline).toBeLessThan(RSS_SLACK_MB)
    expect(stats.enginesRetired).toBeGreaterThan(0)
    for (const engine of stats.engines) expect(engine.wasmBytes).toBeLessThanOrEqual((LIMIT_MB + 6) * 1024 * 1024)
  })
})
