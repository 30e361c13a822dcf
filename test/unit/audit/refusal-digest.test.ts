/**
 * What refusals cost the audit log: a window's first few are entries of their own, the rest one
 * digest per kind, and past the digests a count in a log line — whatever the sender varies.
 * Counts of entries written, on the memory store with a manual clock.
 */
import { describe, expect, it } from 'vitest'
import type { AuditEntry } from '../../../lib/audit/ports'
import { type AuditDraft, AuditRecorder } from '../../../lib/audit/recorder'
import { commonTarget, REFUSAL_DIGEST_LIMITS, type RefusalDigestLimits } from '../../../lib/audit/refusal-digest'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemoryMetrics } from '../../../lib/runtime/metrics'
import { MemoryAuditStore } from '../../../lib/stores/memory/audit-store'

const MINUTE = 60_000

function setup(refusals: RefusalDigestLimits = REFUSAL_DIGEST_LIMITS) {
  const store = new MemoryAuditStore()
  const clock = new ManualClock()
  const log = new MemoryLogger()
  const metrics = new MemoryMetrics()
  const recorder = new AuditRecorder({ store, clock, log, metrics, flushDelayMs: 0, refusals })
  const all = async (tenant: string): Promise<AuditEntry[]> => (await store.query(tenant, {}, { limit: 200 }, 0)).entries.reverse()
  return { store, clock, log, metrics, recorder, all }
}

const spawnRefused = (i: number, over: Partial<AuditDraft> = {}): AuditDraft => ({
  tenant: 'mallory',
  actor: { subject: 'bot@mallory.test', issuer: 'server-tools' },
  action: 'process.spawn',
  target: `projects/p${i % 7}/processes`,
  outcome: 'failed',
  status: 400,
  reason: 'INVALID_INPUT',
  requestId: `r${i}`,
  contentHash: `sha256:${i}`,
  sourceAddress: `198.51.100.${i % 250}`,
  ...over,
})

describe('refusals in the audit log', () => {
  it('records a tenant’s first 20 refusals of a window one entry each and the rest as one digest per kind when the window ends', async () => {
    const { clock, recorder, all, store } = setup()
    for (let i = 0; i < 5_000; i++) {
      recorder.record(spawnRefused(i))
      clock.advance(10)
    }
    await recorder.flush()
    // 5,000 refusals over 50 s: the window is still open, so only its first 20 are written
    expect((await all('mallory')).length).toBe(20)
    clock.advance(MINUTE)
    await recorder.flush()
    const entries = await all('mallory')
    expect(entries.length).toBe(21)
    const digest = entries[20]
    expect(digest).toMatchObject({
      action: 'process.spawn',
      outcome: 'failed',
      reason: 'INVALID_INPUT',
      status: 400,
      actor: { subject: 'bot@mallory.test', issuer: 'server-tools' },
      repeated: 4_980,
      target: 'projects/',
      firstAt: new Date(Date.UTC(2026, 0, 1) + 200).toISOString(),
      lastAt: new Date(Date.UTC(2026, 0, 1) + 49_990).toISOString(),
    })
    expect(digest.samples?.targets).toHaveLength(5)
    expect(digest.samples?.sourceAddresses).toHaveLength(5)
    // a digest names no single request
    expect(digest).not.toHaveProperty('requestId')
    expect(digest).not.toHaveProperty('contentHash')
    expect(digest).not.toHaveProperty('sourceAddress')
    // 21 entries went to the store (and the two reads above), nothing else
    expect(store.requests).toBe(21 + 2)
  })

  it('gives a tenant 20 entries of its own again in the next window', async () => {
    const { clock, recorder, all } = setup()
    for (let window = 0; window < 3; window++) {
      for (let i = 0; i < 100; i++) recorder.record(spawnRefused(i))
      clock.advance(MINUTE)
    }
    await recorder.flush()
    const entries = await all('mallory')
    expect(entries.filter((e) => e.repeated === undefined).length).toBe(60)
    expect(entries.filter((e) => e.repeated !== undefined).map((e) => e.repeated)).toEqual([80, 80, 80])
  })

  it('never collapses a write that took effect, however many there are', async () => {
    const { recorder, all } = setup()
    for (let i = 0; i < 150; i++) recorder.record({ ...spawnRefused(i), outcome: 'ok', status: 201, reason: undefined })
    await recorder.flush()
    expect((await all('mallory')).length).toBe(150)
  })

  it('does not give more entries to a sender varying what costs it nothing: path, address, body, request', async () => {
    const { clock, recorder, all } = setup()
    for (let i = 0; i < 3_000; i++)
      recorder.record(
        spawnRefused(i, {
          target: `projects/p${i}/documents/${'x'.repeat(i % 40)}${i}.yaml`,
          sourceAddress: `2001:db8::${i.toString(16)}`,
          contentHash: `sha256:${i}`,
          requestId: `req-${i}`,
          traceId: `${i}`.padStart(32, '0'),
          action: 'document.put',
        }),
      )
    clock.advance(MINUTE)
    await recorder.flush()
    const entries = await all('mallory')
    expect(entries.length).toBe(21)
    expect(entries[20]).toMatchObject({ repeated: 2_980, target: 'projects/' })
  })

  it('keeps kinds apart: actions, reasons, outcomes and actors each get a digest of their own', async () => {
    const { clock, recorder, all } = setup()
    const variants: Partial<AuditDraft>[] = [
      {},
      { reason: 'TOO_LARGE', status: 413 },
      { action: 'document.put' },
      { outcome: 'denied', action: 'auth.forbidden', reason: 'scope:tools:write', status: 403 },
      { actor: { subject: 'other@mallory.test', issuer: 'server-tools' } },
    ]
    for (let i = 0; i < 500; i++) recorder.record(spawnRefused(i, variants[i % variants.length]))
    clock.advance(MINUTE)
    await recorder.flush()
    const digests = (await all('mallory')).filter((e) => e.repeated !== undefined)
    expect(digests.length).toBe(5)
    expect(digests.reduce((sum, d) => sum + (d.repeated ?? 0), 0)).toBe(480)
  })

  it('writes at most 600 entries of their own and 1,000 digests a window over made-up tenants, and counts the rest in a warning and a metric', async () => {
    const { clock, recorder, store, log, metrics } = setup()
    // a client with no token spraying 401s over 5,000 tenant ids that need not exist
    for (let i = 0; i < 5_000; i++)
      for (let j = 0; j < 2; j++)
        recorder.record({
          tenant: `t${i}`,
          actor: {},
          action: 'auth.unauthenticated',
          target: 'projects/p1/processes',
          outcome: 'denied',
          status: 401,
          reason: 'UNAUTHENTICATED',
        })
    clock.advance(MINUTE)
    await recorder.flush()
    // 600 of their own, then the first 1,000 kinds as digests; the other 7,400 refusals in a count
    expect(store.requests).toBe(600 + 1_000)
    const uncounted = log.find('audit.refusals_uncounted')
    expect(uncounted).toHaveLength(1)
    expect(uncounted[0]).toMatchObject({ level: 'warn', fields: { refusals: 10_000 - 600 - 2 * 1_000, kinds: 1_000 } })
    expect(metrics.sum('AuditRefusalsUncounted')).toBe(uncounted[0].fields.refusals)
  })

  it('writes the open window’s digests when asked to end it (a server stopping)', async () => {
    const { recorder, all } = setup()
    for (let i = 0; i < 30; i++) recorder.record(spawnRefused(i))
    await recorder.flush({ endWindow: true })
    expect((await all('mallory')).map((e) => e.repeated ?? 1).reduce((a, b) => a + b, 0)).toBe(30)
  })

  it('writes a window’s digests on a long-running server when the window ends, with no further request', async () => {
    const store = new MemoryAuditStore()
    const recorder = new AuditRecorder({
      store,
      clock: { now: () => Date.now() },
      log: new MemoryLogger(),
      flushDelayMs: 5,
      refusals: { ...REFUSAL_DIGEST_LIMITS, windowMs: 50 },
    })
    for (let i = 0; i < 40; i++) recorder.record(spawnRefused(i))
    await new Promise((r) => setTimeout(r, 200))
    const entries = (await store.query('mallory', {}, { limit: 100 }, 0)).entries
    expect(entries.map((e) => e.repeated ?? 1).reduce((a, b) => a + b, 0)).toBe(40)
  })
})

describe('a digest’s target', () => {
  it('is what the targets have in common, cut where a target filter’s prefix may end', () => {
    expect(commonTarget('projects/p1/documents/a.yaml', 'projects/p1/documents/b.yaml')).toBe('projects/p1/documents/')
    expect(commonTarget('projects/p1/documents/ab.yaml', 'projects/p1/documents/ac.yaml')).toBe('projects/p1/documents/')
    expect(commonTarget('host:api.example.test', 'host:api.example.org')).toBe('host:')
    expect(commonTarget('secrets/A', 'projects/p1')).toBe('')
    expect(commonTarget('projects/p1/sandbox', 'projects/p1/sandbox')).toBe('projects/p1/sandbox')
  })
})
