/**
 * DynamoDB requests on the wire per operation of an agent turn, counted at Node's HTTP client
 * diagnostics channel (every request our DynamoDB client sends, retries included), on a
 * cold-started Lambda container (functions/api.ts) over dynalite, with a quota rule selecting
 * every call. Counts, after warm-up; no timings.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { utcDay } from '../../lib/usage/ports'
import {
  coldStartLambda,
  DynamoOperationCounter,
  type LambdaHandler,
  lambdaFetch,
  provisionLambdaLinks,
  uniqueSuffix,
} from '../support/aws'
import { tokenFor } from '../support/http'

const SECRET = `storage-requests-${uniqueSuffix()}`
const BASE = 'https://abc123.lambda-url.us-east-1.on.aws/brain/acme'
let fetch: ReturnType<typeof lambdaFetch>
let headers: Record<string, string>
const operations = new DynamoOperationCounter()
const counted = (run: () => Promise<unknown>) => operations.counted(run)

const json = async (res: Response, status = 200) => {
  expect(res.status, await res.clone().text()).toBe(status)
  return (await res.json()) as Record<string, unknown>
}
const put = (path: string, body: string, project = 'p1') =>
  fetch(`${BASE}/projects/${project}/documents/${path}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/yaml' },
    body,
  })
const spawn = async () =>
  (await json(await fetch(`${BASE}/projects/p1/processes`, { method: 'POST', headers, body: '{}' }), 201)).id as string
const manifest = async (id: string) => json(await fetch(`${BASE}/projects/p1/processes/${id}/manifest`, { headers }))
const call = async (id: string, name: string) =>
  json(
    await fetch(`${BASE}/projects/p1/processes/${id}/tool-calls`, { method: 'POST', headers, body: JSON.stringify({ name, params: {} }) }),
  )

beforeAll(async () => {
  const links = await provisionLambdaLinks('storage-requests')
  fetch = lambdaFetch([await coldStartLambda<LambdaHandler>(links, SECRET)])
  headers = {
    authorization: `Bearer ${await tokenFor('acme', 'tools:read tools:write tools:invoke tenant:admin', 'a@example.test', SECRET)}`,
    'content-type': 'application/json',
  }
  const doc = (primary: boolean) => `type: doc_lookup\ndescription: Notes.\nprimary: ${primary}\nparameters:\n  path: notes.md\n`
  expect((await put('notes.md', '# notes\n')).status).toBe(201)
  expect((await put('server-tools/notes_primary.yaml', doc(true))).status).toBe(201)
  expect((await put('server-tools/notes_deferred.yaml', doc(false))).status).toBe(201)
  expect((await put('quotas.yaml', 'rules:\n  - match: {}\n    volume: { requests: 1000000, per: day }\n', '_tenant')).status).toBe(201)
  operations.start()
})

afterAll(() => {
  operations.stop()
  vi.unstubAllEnvs()
})

describe('DynamoDB requests per operation, quotas on', () => {
  it('counts spawn, manifest, a primary tool call and an activated tool call', async () => {
    /** Warm-up, then each operation counted. */
    const measure = async () => {
      // warm-up: the container's caches, the quota lease, the deferred tool's activation
      const warm = await spawn()
      await manifest(warm)
      await call(warm, 'notes_primary')
      await call(warm, 'notes_deferred')

      const id = await spawn()
      const spawned = await counted(spawn)
      const manifested = await counted(() => manifest(id))
      await call(id, 'notes_deferred') // activates it in this process
      const primary = await counted(async () => {
        for (let i = 0; i < 10; i++) expect((await call(id, 'notes_primary')).isError).toBe(false)
      })
      const activated = await counted(async () => {
        for (let i = 0; i < 10; i++) expect((await call(id, 'notes_deferred')).isError).toBe(false)
      })
      return { spawned, manifested, primary, activated }
    }
    // a UTC midnight inside a run opens a new quota window and moves the usage day: those once-a-day
    // requests are counted in aws-usage-store.test.ts, not here — a run that straddles one is run again
    let run: Awaited<ReturnType<typeof measure>>
    for (;;) {
      const day = utcDay(Date.now())
      run = await measure()
      if (utcDay(Date.now()) === day) break
    }
    const { spawned, manifested, primary, activated } = run
    // Per tool call: the process and the tenant's stamp, read together (one BatchGetItem across the
    // processes and documents tables), and, flushed at the end of each Lambda invocation, the usage
    // row of the (role, tool), which also counts the day (1 UpdateItem). Everything the call reads from documents — the tool's
    // definition through the cascade, and doc_lookup's own read of notes.md — is served from the
    // container's cache, the stamp saying nothing changed. The quota adds nothing per call: its
    // rules come from the same cache and its lease (a slice of 500 of this rule's 1,000,000) was
    // taken in the warm-up. An activated tool's call rewrites the process only when its stamp is
    // older than a tenth of the activation TTL: not within these ten calls.
    // A manifest is the same read alone; a spawn reads the stamp (GetItem: no process yet) and
    // writes the process.
    expect({ spawned, manifested, primary, activated }).toEqual({
      spawned: { GetItem: 1, PutItem: 1 },
      manifested: { BatchGetItem: 1 },
      primary: { BatchGetItem: 10, UpdateItem: 10 },
      activated: { BatchGetItem: 10, UpdateItem: 10 },
    })
    // the goals of issue 25, amortised over the ten calls
    const perCall = (ops: Record<string, number>) => Object.values(ops).reduce((a, b) => a + b, 0) / 10
    expect([perCall(primary), perCall(activated)]).toEqual([2, 2])
  })
})
