/**
 * F9: the embedded store must not leak. dynalite 4.0.0 wrapped each abstract-level iterator in a
 * stream whose destroy() called `iterator.return()`, which abstract-level iterators do not have,
 * so no Query/Scan iterator was ever closed: each stayed attached to the database with its
 * level snapshot (~18 KB per listing, never released). patches/dynalite+4.0.0.patch closes them.
 * This row lists through `npm start`'s app and bounds the growth.
 */
import assert from 'node:assert/strict'
import type { HostileApp, HostileRowSet } from '../harness'
import { settledRss } from '../harness'

const YAML = { 'content-type': 'application/yaml' }

/** Sends `count` requests, `concurrency` at a time, each must answer 200. */
export async function hammer(count: number, concurrency: number, send: (i: number) => Promise<Response>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++
        const res = await send(i)
        const text = await res.text()
        if (res.status !== 200) throw new Error(`request ${i} answered ${res.status}: ${text.slice(0, 200)}`)
      }
    }),
  )
}

export const listing = (app: HostileApp, tenant: string) => () => app.call(tenant, 'GET', '/projects/p1/server-tools')

/** Growth of the app's settled heap and RSS (MB) across `work`. */
export async function growth(app: HostileApp, work: () => Promise<void>): Promise<{ heapMb: number; rssMb: number }> {
  const heapBefore = (await app.sample({ gc: true })).heapUsedMb
  const rssBefore = await settledRss(app)
  await work()
  const rssAfter = await settledRss(app)
  const heapAfter = (await app.sample({ gc: true })).heapUsedMb
  return { heapMb: Math.round((heapAfter - heapBefore) * 10) / 10, rssMb: Math.round((rssAfter - rssBefore) * 10) / 10 }
}

export const rowSet: HostileRowSet = {
  name: 'embedded store soak',
  async warmUp(app) {
    const tool = 'type: doc_lookup\ndescription: Soak.\nparameters:\n  path: documents/getting-started.md\n'
    for (const layer of ['p1', '_tenant'])
      assert.equal(
        (await app.call('soak', 'PUT', `/projects/${layer}/server-tools/soak_${layer.replace('_', '')}`, tool, YAML)).status,
        201,
      )
    await hammer(500, 8, listing(app, 'soak'))
  },
  rows: [
    {
      name: 'F9: 1,000 listings through the app (2,000 dynalite Queries) leave its heap within 10 MB of where it was',
      async run(app) {
        const grown = await growth(app, () => hammer(1_000, 8, listing(app, 'soak')))
        console.log(
          `[soak] 1,000 listings: heap ${grown.heapMb >= 0 ? '+' : ''}${grown.heapMb} MB, RSS ${grown.rssMb >= 0 ? '+' : ''}${grown.rssMb} MB`,
        )
        // unpatched: ~20 KB of RSS per listing (4,000 listings: +80 MB RSS), held for good; the precise
        // bound is test/integration/dynalite-soak.test.ts, the long run `npm run bench -- soak`
        assert.ok(grown.heapMb < 10, `the heap grew ${grown.heapMb} MB over 1,000 listings`)
      },
    },
  ],
}
