/**
 * The probe's request trace (probe.mjs, `startApp({ trace })`), which `benchHostileClasses` uses
 * under HOSTILE_TRACE to split a victim call into the client's and the app's parts: only the
 * requests whose URL holds the traced path are kept, each one inside the client's own span on the
 * machine's monotonic clock, and the main thread's scheduler figures come back in every sample.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BYSTANDER, type HostileApp, startApp } from './harness'

const monoMs = () => Number(process.hrtime.bigint()) / 1e6

describe('the probe traces the requests of one path', () => {
  let app: HostileApp
  beforeAll(async () => {
    app = await startApp({ label: 'probe trace', trace: `/brain/${BYSTANDER}/` })
  }, 60_000)
  afterAll(async () => {
    await app?.stop()
  })

  it('keeps each traced request, inside the span its client saw, and no other tenant’s', async () => {
    await app.sample({ reset: true })
    const spans: { startMs: number; endMs: number }[] = []
    for (let i = 0; i < 3; i++) {
      const startMs = monoMs()
      const res = await app.call(BYSTANDER, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })
      await res.text()
      spans.push({ startMs, endMs: monoMs() })
      expect(res.status).toBe(200)
      await (await app.call('someone-else', 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })).text()
    }
    const { requests, pauses } = await app.sample({ reset: true })
    expect(requests).toHaveLength(3)
    expect(Array.isArray(pauses)).toBe(true)
    for (const [i, r] of (requests ?? []).entries()) {
      expect(r.startMs).toBeGreaterThanOrEqual(spans[i].startMs)
      expect(r.endMs).toBeLessThanOrEqual(spans[i].endMs)
      expect(r.endMs).toBeGreaterThanOrEqual(r.startMs)
      expect(r.waitMs).toBeGreaterThanOrEqual(0)
    }
    expect((await app.sample()).requests).toHaveLength(0)
  })

  it('reports the main thread’s and the other threads’ time on a core from /proc', async () => {
    const { main, others } = await app.sample()
    expect(main.runMs).toBeGreaterThan(0)
    expect(others.runMs).toBeGreaterThan(0)
    expect(main.waitMs).toBeGreaterThanOrEqual(0)
  })
})

describe('the probe traces nothing by default', () => {
  let app: HostileApp
  beforeAll(async () => {
    app = await startApp({ label: 'probe no trace' })
  }, 60_000)
  afterAll(async () => {
    await app?.stop()
  })

  it('answers without requests or pauses when no path is traced', async () => {
    await (await app.call(BYSTANDER, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })).text()
    const sample = await app.sample()
    expect(sample.requests).toBeUndefined()
    expect(sample.pauses).toBeUndefined()
  })
})
