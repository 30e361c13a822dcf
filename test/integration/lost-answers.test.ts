/**
 * Every store write with its first answer lost (test/support/lost-answer-proxy.ts: applied in
 * dynalite, then the socket reset or left silent): each ends in the state, and gives the answer,
 * that the same calls give with nothing lost, and no document is left unreadable.
 * Each scenario runs twice on fresh tables — once clean, once with the fault — and the two
 * outcomes are compared whole.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { INLINE_BODY_LIMIT, scopeOf } from '../../lib/documents/ports'
import { StampedDocumentCache } from '../../lib/documents/stamped-cache'
import { isServerToolsError } from '../../lib/errors'
import type { ProcessStore } from '../../lib/recipes/ports'
import { ManualClock } from '../../lib/runtime/clock'
import { silentLogger } from '../../lib/runtime/logger'
import { auditTableSpec, DynamoAuditStore } from '../../lib/stores/aws/audit-store'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { DynamoClient } from '../../lib/stores/aws/dynamo/client'
import { DynamoObservedLimitStore, observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { DynamoProcessStore, processesTableSpec } from '../../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { DynamoTenantStampStore, STAMP_SHARDS } from '../../lib/stores/aws/tenant-stamp-store'
import { DynamoToolUsageStore, toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { newWriteId } from '../../lib/stores/aws/write-ids'
import { UsageRecorder } from '../../lib/usage/recorder'
import { bodyOfBytes } from '../contract/document-store.contract'
import { sampleProcess } from '../contract/process-store.contract'
import { awsTestClients, TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { type LossMode, type LostAnswerProxy, loseFirstAttempts, startLostAnswerProxy } from '../support/lost-answer-proxy'

let proxy: LostAnswerProxy
const clients: DynamoClient[] = []

beforeAll(async () => {
  proxy = await startLostAnswerProxy(inject('dynamoEndpoint'))
})
afterAll(async () => {
  for (const c of clients) c.destroy()
  await proxy.close()
})

interface World {
  docs: DynamoDocumentStore
  /** The documents through the per-container cache, whose writes also mark the tenant's stamp copies. */
  cached: StampedDocumentCache
  stamps: DynamoTenantStampStore[]
  blobs: S3BlobStore
  processes: ProcessStore
  usage: DynamoToolUsageStore
  recorder: UsageRecorder
  limits: DynamoObservedLimitStore
  audit: DynamoAuditStore
  clock: ManualClock
}

/** Fresh tables and bucket, with stores whose DynamoDB requests go through the proxy. */
async function world(): Promise<World> {
  const direct = awsTestClients()
  const suffix = uniqueSuffix()
  const names = {
    docs: `docs-${suffix}`,
    procs: `procs-${suffix}`,
    usage: `usage-${suffix}`,
    limits: `limits-${suffix}`,
    audit: `audit-${suffix}`,
  }
  await Promise.all([
    ensureTable(direct.dynamo, documentsTableSpec(names.docs)),
    ensureTable(direct.dynamo, processesTableSpec(names.procs)),
    ensureTable(direct.dynamo, toolUsageTableSpec(names.usage)),
    ensureTable(direct.dynamo, observedLimitsTableSpec(names.limits)),
    ensureTable(direct.dynamo, auditTableSpec(names.audit)),
    ensureBucket(direct.s3, `blobs-${suffix}`),
  ])
  // backoffs recorded, not slept; a silent answer ends the attempt after 300 ms
  const dynamo = new DynamoClient({
    region: TEST_REGION,
    endpoint: proxy.endpoint,
    credentials: TEST_CREDENTIALS,
    attemptTimeoutMs: 300,
    sleep: async () => {},
  })
  clients.push(dynamo)
  const clock = new ManualClock(Date.UTC(2026, 0, 1))
  const blobs = new S3BlobStore({ s3: direct.s3, bucket: `blobs-${suffix}` })
  const usage = new DynamoToolUsageStore({ dynamo, tableName: names.usage })
  const docs = new DynamoDocumentStore({ dynamo, tableName: names.docs, blobs, clock })
  const stamps = Array.from({ length: STAMP_SHARDS }, (_, shard) => new DynamoTenantStampStore({ dynamo, tableName: names.docs, shard }))
  return {
    docs,
    cached: new StampedDocumentCache({ store: docs, stamps: stamps[0], request: () => undefined, clock, newWriteId }),
    stamps,
    blobs,
    processes: new DynamoProcessStore({ dynamo, tableName: names.procs }),
    usage,
    recorder: new UsageRecorder({ store: usage, clock, log: silentLogger, flushDelayMs: 0, sleep: async () => {} }),
    limits: new DynamoObservedLimitStore({ dynamo, tableName: names.limits }),
    audit: new DynamoAuditStore({ dynamo, tableName: names.audit }),
    clock,
  }
}

const key = { scope: scopeOf('acme', 'shop'), path: 'server-tools/hello.yaml' }
const pkey = { tenant: 'acme', project: 'shop', id: 'proc-1' }
const NOW = Date.UTC(2026, 0, 1)
const LATER = NOW + 3_600_000
const big = (n: number) => bodyOfBytes(INLINE_BODY_LIMIT + 1000 * n)

/** An answer as the caller sees it: the value, or the error's code. */
const answer = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value: value === undefined ? null : value }),
    (e: unknown) => ({ error: isServerToolsError(e) ? e.code : String(e) }),
  )

/** What a document store holds: every document readable, with its version and body hash. */
async function documentState(w: World) {
  const versions = await w.docs.listVersions(key.scope, '')
  const docs = await w.docs.list(key.scope, '')
  return { versions, docs: docs.map((d) => ({ path: d.key.path, version: d.version, sha256: d.sha256, bytes: d.body.length })) }
}

/** Documents: answers reduced to what the caller relies on (versions, created, hashes; not instants). */
const doc = (v: unknown) => {
  const d = v as { version: number; created: boolean; sha256: string } | undefined
  return d && { version: d.version, created: d.created, sha256: d.sha256 }
}

interface Scenario {
  setup?: (w: World) => Promise<unknown>
  /** The calls whose first write answer is lost. */
  act: (w: World) => Promise<unknown>
  state: (w: World) => Promise<unknown>
}

const scenarios: Record<string, Scenario> = {
  'a document create (create-only, inline)': {
    act: async (w) => answer(w.docs.put({ key, body: 'hello', actor: 'alice' }, { createOnly: true }).then(doc)),
    state: documentState,
  },
  'an unconditional put over a live document': {
    setup: (w) => w.docs.put({ key, body: 'v1', actor: 'alice' }),
    act: async (w) => answer(w.docs.put({ key, body: 'v2', actor: 'bob' }).then(doc)),
    state: documentState,
  },
  'a put with If-Match': {
    setup: (w) => w.docs.put({ key, body: 'v1', actor: 'alice' }),
    act: async (w) => answer(w.docs.put({ key, body: 'v2', actor: 'bob' }, { expectedVersion: 1 }).then(doc)),
    state: documentState,
  },
  'a put with a stale If-Match (CONFLICT either way)': {
    setup: (w) => w.docs.put({ key, body: 'v1', actor: 'alice' }),
    act: async (w) => answer(w.docs.put({ key, body: big(1), actor: 'bob' }, { expectedVersion: 7 }).then(doc)),
    state: documentState,
  },
  'a blob-backed create': {
    act: async (w) => answer(w.docs.put({ key, body: big(1), actor: 'alice' }, { createOnly: true }).then(doc)),
    state: documentState,
  },
  'a blob-backed put over a blob-backed document': {
    setup: (w) => w.docs.put({ key, body: big(1), actor: 'alice' }),
    act: async (w) => answer(w.docs.put({ key, body: big(2), actor: 'bob' }, { expectedVersion: 1 }).then(doc)),
    state: documentState,
  },
  'an unconditional blob-backed put': {
    setup: (w) => w.docs.put({ key, body: big(1), actor: 'alice' }),
    act: async (w) => answer(w.docs.put({ key, body: big(3), actor: 'bob' }).then(doc)),
    state: documentState,
  },
  'a document delete': {
    setup: (w) => w.docs.put({ key, body: big(1), actor: 'alice' }),
    act: async (w) => answer(w.docs.delete(key)),
    state: documentState,
  },
  'a delete with If-Match': {
    setup: (w) => w.docs.put({ key, body: 'v1', actor: 'alice' }),
    act: async (w) => answer(w.docs.delete(key, { expectedVersion: 1 })),
    state: documentState,
  },
  'a create-only put over a tombstone': {
    setup: async (w) => {
      await w.docs.put({ key, body: 'v1', actor: 'alice' })
      await w.docs.delete(key)
    },
    act: async (w) => answer(w.docs.put({ key, body: 'again', actor: 'alice' }, { createOnly: true }).then(doc)),
    state: documentState,
  },
  'a document put through the cache (the stamp marked before and after)': {
    setup: (w) => w.docs.put({ key, body: 'v1', actor: 'alice' }),
    act: async (w) => answer(w.cached.put({ key, body: 'v2', actor: 'bob' }).then(doc)),
    // every copy moved on and lists no write in progress (a retried mark may move a generation twice)
    state: async (w) => ({
      documents: await documentState(w),
      stamps: (await Promise.all(w.stamps.map((s) => s.read('acme')))).map((s) => ({ moved: s.generation > 0, writing: s.writing })),
    }),
  },
  'a process create': {
    act: async (w) => answer(w.processes.create(sampleProcess())),
    state: (w) => w.processes.get(pkey, NOW),
  },
  'a client-tools update (twice)': {
    setup: (w) => w.processes.create(sampleProcess()),
    act: async (w) => [
      await answer(
        w.processes.setClientTools(pkey, [{ name: 'pick', description: 'x', inputSchema: {}, labels: [], primary: true }], {
          expiresAt: LATER,
          now: NOW,
        }),
      ),
      await answer(w.processes.setClientTools(pkey, [], { expectedVersion: 1, expiresAt: LATER, now: NOW })),
    ],
    state: (w) => w.processes.get(pkey, NOW),
  },
  'an activation stamp': {
    setup: (w) => w.processes.create(sampleProcess()),
    act: async (w) => answer(w.processes.stampActivations(pkey, ['doc_read', 'weather-now'], NOW + 5, LATER, NOW)),
    state: (w) => w.processes.get(pkey, NOW),
  },
  'a phantom report (twice)': {
    setup: (w) => w.processes.create(sampleProcess()),
    act: async (w) => [
      await answer(w.processes.markPhantoms(pkey, ['ghost', 'spook'], NOW)),
      await answer(w.processes.markPhantoms(pkey, ['spook', 'wraith'], NOW)),
    ],
    state: (w) => w.processes.get(pkey, NOW),
  },
  'a process end': {
    setup: (w) => w.processes.create(sampleProcess()),
    act: async (w) => [await answer(w.processes.end(pkey, NOW)), await answer(w.processes.end(pkey, NOW))],
    state: (w) => w.processes.get(pkey, NOW),
  },
  'a usage flush': {
    act: async (w) => {
      w.recorder.record({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' }, 'file', { calls: 3, discoveryHits: 1 })
      w.recorder.record({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_write' }, 'file', { listedHits: 2 })
      return w.recorder.flush()
    },
    // the tool rows and the day row of the calls
    state: async (w) => [await w.usage.list('acme', 'shop'), await w.usage.listDays('acme', 'shop', '2000-01-01', '2100-01-01')],
  },
  'a usage flush on a new day (the closed day moved, and a late flush of it)': {
    setup: async (w) => {
      w.recorder.record({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' }, 'file', { calls: 3 })
      w.recorder.record({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'grep' }, 'grep', { calls: 1 })
      await w.recorder.flush()
      w.clock.advance(86_400_000)
    },
    act: async (w) => {
      w.recorder.record({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' }, 'file', { calls: 2 })
      const flushed = await w.recorder.flush()
      // another container's flush of what it counted before midnight, after file_read moved on
      const late = await answer(
        w.usage.increment({
          tenant: 'acme',
          project: 'shop',
          role: 'coder',
          tool: 'file_read',
          family: 'file',
          day: '2026-01-01',
          calls: 4,
          discoveryHits: 0,
          listedHits: 0,
          flushId: 'late-1',
        }),
      )
      return [flushed, late]
    },
    state: async (w) => [await w.usage.list('acme', 'shop'), await w.usage.listDays('acme', 'shop', '2000-01-01', '2100-01-01')],
  },
  'a learned limit (lowered, then not)': {
    act: async (w) => {
      const r = {
        tenant: 'acme',
        endpoint: 'openai/gpt-4o',
        observedAt: '2026-01-01T00:00:00.000Z',
        expiresAt: 2_000_000_000,
        catalog: 'none',
      }
      const nowSec = 1_767_225_600
      return [
        await answer(w.limits.lower({ ...r, maxTools: 128 }, nowSec)),
        await answer(w.limits.lower({ ...r, maxTools: 200 }, nowSec)),
        await answer(w.limits.lower({ ...r, maxTools: 100 }, nowSec)),
      ]
    },
    state: (w) => w.limits.getMany('acme', ['openai/gpt-4o'], 1_767_225_600),
  },
  'an audit entry': {
    act: async (w) =>
      answer(
        w.audit.append({
          tenant: 'acme',
          id: '2026-01-01T00:00:00.000Z#a1',
          at: '2026-01-01T00:00:00.000Z',
          actor: { subject: 'alice' },
          action: 'document.put',
          target: 'projects/shop/documents/a.md',
          outcome: 'ok',
          status: 201,
          expiresAt: Math.floor(NOW / 1000) + 86_400,
        }),
      ),
    state: (w) => w.audit.query('acme', {}, { limit: 10 }, Math.floor(NOW / 1000)),
  },
}

async function outcome(s: Scenario, loss: LossMode | undefined) {
  const w = await world()
  proxy.lose = () => undefined
  await s.setup?.(w)
  const lostBefore = proxy.lost.length
  if (loss) proxy.lose = loseFirstAttempts(loss)
  const got = await s.act(w)
  proxy.lose = () => undefined
  return { answer: got, state: await s.state(w), lost: proxy.lost.length - lostBefore }
}

describe.each(['reset', 'silence'] as const)('every store write with its first answer lost (%s)', (loss) => {
  it.each(Object.keys(scenarios))('%s ends as it does with nothing lost', async (name) => {
    const clean = await outcome(scenarios[name], undefined)
    const faulty = await outcome(scenarios[name], loss)
    expect(clean.lost).toBe(0)
    // the fault happened: at least one write was applied and its answer lost
    expect(faulty.lost).toBeGreaterThan(0)
    expect(faulty.answer).toEqual(clean.answer)
    expect(faulty.state).toEqual(clean.state)
  })
})

describe.each(['drop', 'reset'] as const)('a usage day move whose day-row writes all fail (%s)', (mode) => {
  it('keeps the closed day counted once, the increment applied, and the next increment finishes the move', async () => {
    const w = await world()
    const key = { tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' }
    w.recorder.record(key, 'file', { calls: 3 })
    await w.recorder.flush()
    w.clock.advance(86_400_000)
    // drop: the day row never sees the move; reset: it applies it and the answer is lost, every attempt
    proxy.lose = (r) => (r.operation === 'UpdateItem' && r.body.includes('acme#shop#day') ? mode : undefined)
    w.recorder.record(key, 'file', { calls: 2 })
    const flushed = await w.recorder.flush()
    proxy.lose = () => undefined
    expect(flushed).toEqual({ written: 1, failed: 0 })
    expect(await w.usage.rawItem(key)).toMatchObject({ movedDay: '2026-01-01', movedCalls: 3 })
    const days = () => w.usage.listDays('acme', 'shop', '2026-01-01', '2026-01-03')
    expect(await days()).toEqual([
      { role: 'coder', day: '2026-01-01', calls: 3 },
      { role: 'coder', day: '2026-01-02', calls: 2 },
    ])
    w.clock.advance(86_400_000)
    w.recorder.record(key, 'file', { calls: 1 })
    expect(await w.recorder.flush()).toEqual({ written: 1, failed: 0 })
    expect(await days()).toEqual([
      { role: 'coder', day: '2026-01-01', calls: 3 },
      { role: 'coder', day: '2026-01-02', calls: 2 },
      { role: 'coder', day: '2026-01-03', calls: 1 },
    ])
    expect(await w.usage.rawItem(key)).not.toHaveProperty('movedDay')
    expect((await w.usage.list('acme', 'shop'))[0].calls).toBe(6)
  })
})
