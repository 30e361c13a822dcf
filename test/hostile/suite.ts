/**
 * vitest wiring for the hostile harness (see harness.ts for the whole story): one app per suite,
 * one `it` per row. Each row asserts that it ran clean, that every bystander call succeeded and
 * that the app is alive; the suite's last test asserts the app still answers and its settled RSS
 * is within 100 MB of the baseline. Timings are printed and written to the report, never asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  BYSTANDER,
  describeRow,
  GOALS,
  type HostileApp,
  type HostileRowSet,
  type RowReport,
  runRow,
  settledRss,
  startApp,
  warmUp,
  writeReport,
} from './harness'

export function hostileSuite(set: HostileRowSet) {
  const { name, rows } = set
  describe(name, () => {
    let app: HostileApp
    let baseline = 0
    const reports: RowReport[] = []

    beforeAll(async () => {
      app = await startApp({ env: set.env, label: name })
      await warmUp(app)
      await set.warmUp?.(app)
      baseline = await settledRss(app)
    }, 60_000)

    afterAll(async () => {
      await app?.stop()
    })

    for (const row of rows) {
      it(
        row.name,
        async () => {
          const report = await runRow(app, row)
          reports.push(report)
          console.log(`[hostile] ${describeRow(report)}`)
          expect(report.error, app.output().slice(-2000)).toBeUndefined()
          expect(report.alive, app.output().slice(-4000)).toBe(true)
          expect(report.bystander.failures).toEqual([])
          expect(report.bystander.calls).toBeGreaterThan(0)
        },
        set.timeoutMs ?? 120_000,
      )
    }

    it('leaves the app alive, answering, and within 100 MB of its RSS before the suite', async () => {
      expect(app.alive(), app.output().slice(-4000)).toBe(true)
      const res = await app.call(BYSTANDER, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })
      expect(res.status).toBe(200)
      const after = await settledRss(app)
      const file = writeReport({ suite: name, rssBaselineMb: baseline, rssAfterMb: after, rows: reports })
      console.log(`[hostile] ${name}: RSS ${baseline} → ${after} MB (goal: within ${GOALS.rssDeltaMb} MB); figures in ${file}`)
      expect(after - baseline).toBeLessThan(GOALS.rssDeltaMb)
    }, 60_000)
  })
}
