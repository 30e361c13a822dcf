/**
 * Issue 21, third pass, D3: `GET …/documents?bodies=true` (the CLI's plan, apply and pull) carried
 * every body of the layer: 20 documents of 1 MB were one 19.5 MB answer (142 CPU ms). Each row
 * asserts on the bytes of bodies one answer carries against `documentBodies`
 * (lib/config/expansion-budget.ts) and on the requests the CLI makes for the rest.
 */
import assert from 'node:assert/strict'
import { ServerToolsClient } from '../../../functions/cli/client'
import { WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import type { AttackClass, HostileApp, HostileRowSet } from '../harness'
import { answered, ENVELOPE, ok } from './discovery'

const BODIES = WORK_BUDGETS.documentBodies.limit

interface Exported {
  path: string
  bytes: number
  body?: string
  bodyOmitted?: boolean
}

/** `count` notes of `body(i)` under `dir/`, `parallel` writes at a time. */
async function notes(app: HostileApp, tenant: string, dir: string, count: number, body: (i: number) => string, parallel = 4) {
  for (let i = 0; i < count; i += parallel)
    await Promise.all(
      Array.from({ length: Math.min(parallel, count - i) }, async (_, k) =>
        ok(
          await app.call(tenant, 'PUT', `/projects/p1/documents/${dir}/n${String(i + k).padStart(4, '0')}.md`, body(i + k), {
            'content-type': 'text/markdown',
          }),
          'note PUT',
        ),
      ),
    )
}

/** The export answer within the bodies budget (UTF-8 bytes), every document listed, the rest marked omitted. */
async function exportWithinBudget(app: HostileApp, tenant: string, query: string, expected: number) {
  const text = await ok(await app.call(tenant, 'GET', `/projects/p1/documents?bodies=true${query}`), 'export')
  const { documents } = JSON.parse(text) as { documents: Exported[] }
  assert.equal(documents.length, expected)
  const carried = documents.reduce((a, d) => a + (d.body === undefined ? 0 : Buffer.byteLength(d.body)), 0)
  assert.ok(carried <= BODIES, `${carried} bytes of bodies in one answer`)
  assert.ok(Buffer.byteLength(text) <= BODIES + 200 * expected + ENVELOPE, `an answer of ${text.length} characters`)
  const omitted = documents.filter((d) => d.bodyOmitted)
  assert.ok(omitted.length > 0, 'nothing omitted')
  assert.ok(
    documents.every((d) => (d.body === undefined) === (d.bodyOmitted === true)),
    'a document with neither body nor bodyOmitted',
  )
  return { documents, omitted: omitted.length }
}

export const rowSet: HostileRowSet = {
  name: 'hostile layer exports (issue 21 third pass: documents with bodies)',
  rows: [
    {
      name: `D3: a layer of 4 notes of 700,000 bytes exported with bodies: one answer carries at most ${BODIES.toLocaleString('en-US')} bytes of them`,
      async run(app) {
        const T = 'mallory-d3'
        await notes(app, T, 'big', 4, (i) => String(i % 10).repeat(700_000), 2)
        await exportWithinBudget(app, T, '', 4)
      },
    },
    {
      name: 'D3 variant: 300 notes of 8,000 bytes (many small bodies) under a prefix are carried while they fit, the rest omitted',
      async run(app) {
        const T = 'mallory-d3b'
        await notes(app, T, 'small', 300, (i) => `${i} `.padEnd(8_000, 's'), 8)
        const { omitted } = await exportWithinBudget(app, T, '&prefix=small/', 300)
        assert.ok(omitted >= 300 - Math.floor(BODIES / 8_000), `${omitted} omitted`)
      },
    },
    {
      name: 'D3 variant: bodies of three-byte characters are charged in UTF-8 bytes, not characters',
      async run(app) {
        const T = 'mallory-d3c'
        await notes(app, T, 'euro', 3, () => '€'.repeat(250_000), 2)
        const { documents } = await exportWithinBudget(app, T, '', 3)
        assert.equal(documents.filter((d) => d.body !== undefined).length, 2)
      },
    },
    {
      name: 'D3 variant: the CLI export of the 4-note layer reads every body, the omitted ones one request each',
      async run(app) {
        const T = 'mallory-d3' // the layer of the first D3 row
        const requests: string[] = []
        const cli = new ServerToolsClient(`${app.base}/brain/${T}`, await app.token(T), (url, init) => {
          requests.push(new URL(String(url)).pathname)
          return fetch(url, init)
        })
        const docs = (await cli.listLayer('p1', { bodies: true })).filter((d) => d.path.startsWith('big/'))
        assert.equal(docs.length, 4)
        assert.ok(
          docs.every((d, i) => d.body?.length === 700_000 && d.body[0] === String(i % 10)),
          'a body missing',
        )
        assert.equal(requests.length, 1 + 4 - Math.floor(BODIES / 700_000))
      },
    },
  ],
}

/** For `npm run bench -- hostile`. */
export const attacks: AttackClass[] = [
  {
    name: 'D3 export of a layer of 12 notes of 900,000 bytes',
    prepare: (app: HostileApp, tenant: string) => notes(app, tenant, 'big', 12, (i) => String(i % 10).repeat(900_000), 2),
    async once(app: HostileApp, tenant: string) {
      await answered((look) => app.stream(tenant, 'GET', '/projects/p1/documents?bodies=true', look), 'export', '"documents":[')
    },
  },
]
