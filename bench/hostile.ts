/**
 * `npm run bench -- hostile`: the rows of test/hostile/ (every `rowSet` in test/hostile/rows/*.ts)
 * against `npm start`'s app, where the goals of issue 10 are checked — timings belong here, not
 * in the tests. Per row: the bystander tenant's whoami p99 against the 200 ms goal and against the
 * quiet p99 measured on the same app just before (the floor), the app's worst event-loop delay
 * against the ~50 ms budget; per set: settled RSS after the rows against the 100 MB goal.
 * `HOSTILE_ROWS=<substring>` runs only the sets/rows whose name contains it.
 */
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  describeRow,
  GOALS,
  type HostileRow,
  type HostileRowSet,
  runRow,
  settledRss,
  startApp,
  warmUp,
  writeReport,
} from '../test/hostile/harness'

const ROWS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../test/hostile/rows')

async function rowSets(): Promise<HostileRowSet[]> {
  const sets: HostileRowSet[] = []
  for (const file of readdirSync(ROWS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const module = (await import(pathToFileURL(join(ROWS_DIR, file)).href)) as { rowSet?: HostileRowSet }
    if (module.rowSet) sets.push(module.rowSet)
  }
  return sets
}

/** The bystander alone for ~2 s: the floor the attacked p99 is compared with. */
const quiet: HostileRow = { name: 'quiet (no attack)', run: () => new Promise((r) => setTimeout(r, 2_000)) }

export async function benchHostile() {
  const filter = process.env.HOSTILE_ROWS?.toLowerCase()
  const summary: string[] = []
  for (const set of await rowSets()) {
    const rows = set.rows.filter((r) => !filter || set.name.toLowerCase().includes(filter) || r.name.toLowerCase().includes(filter))
    if (rows.length === 0) continue
    console.log(`\n${set.name} (npm start app, bystander tenant calling whoami throughout)`)
    const app = await startApp({ env: set.env, label: set.name })
    try {
      await warmUp(app)
      await set.warmUp?.(app)
      const baseline = await settledRss(app)
      const floor = await runRow(app, quiet)
      console.log(`  ${describeRow(floor)}`)
      const reports = [floor]
      for (const row of rows) {
        const r = await runRow(app, row)
        reports.push(r)
        const ratio = floor.bystander.p99Ms > 0 ? (r.bystander.p99Ms / floor.bystander.p99Ms).toFixed(1) : 'n/a'
        const verdict =
          r.error || !r.alive || r.bystander.failures.length ? 'FAILED' : r.bystander.p99Ms <= GOALS.bystanderP99Ms ? 'ok' : 'OVER GOAL'
        console.log(`  [${verdict}] ${describeRow(r)}; p99 ×${ratio} of quiet`)
        if (r.error) console.log(`    ${r.error.split('\n').slice(0, 3).join('\n    ')}`)
        summary.push(
          `hostile ${verdict}: ${r.name}: bystander p99 ${r.bystander.p99Ms} ms (goal ${GOALS.bystanderP99Ms}, quiet ${floor.bystander.p99Ms}), loop max ${r.loopMaxMs} ms`,
        )
        if (!r.alive) break
      }
      const after = app.alive() ? await settledRss(app) : NaN
      const delta = Math.round((after - baseline) * 10) / 10
      const ok = delta < GOALS.rssDeltaMb
      console.log(`  RSS ${baseline} → ${after} MB: ${delta} MB (goal < ${GOALS.rssDeltaMb} MB) ${ok ? 'ok' : 'OVER GOAL'}`)
      summary.push(`hostile ${ok ? 'ok' : 'OVER GOAL'}: ${set.name}: RSS delta ${delta} MB (goal < ${GOALS.rssDeltaMb})`)
      writeReport({ suite: `bench ${set.name}`, rssBaselineMb: baseline, rssAfterMb: after, rows: reports })
      if (!ok || reports.some((r) => r.error || !r.alive || r.bystander.failures.length)) process.exitCode = 1
    } finally {
      await app.stop()
    }
  }
  return { summary }
}
