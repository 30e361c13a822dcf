/**
 * The AuditStore contract. Every adapter runs it: test/unit/audit/audit-store.test.ts (memory) and
 * test/integration/aws-audit-store.test.ts (dynalite).
 */
import { beforeEach, describe, expect, it } from 'vitest'
import type { AuditEntry, AuditStore } from '../../lib/audit/ports'

export const NOW = Math.floor(Date.UTC(2026, 5, 1) / 1000)

let n = 0
export function entry(over: Partial<AuditEntry> = {}): AuditEntry {
  const at = over.at ?? `2026-05-01T00:00:${String(n % 60).padStart(2, '0')}.000Z`
  return {
    tenant: 'acme',
    id: `${at}#${(n++).toString(36).padStart(6, '0')}`,
    at,
    actor: { subject: 'alice', issuer: 'server-tools' },
    action: 'document.put',
    target: 'projects/p1/documents/a.yaml',
    outcome: 'ok',
    status: 200,
    expiresAt: NOW + 3600,
    ...over,
  }
}

async function all(store: AuditStore, tenant: string, filter = {}, limit = 2): Promise<AuditEntry[]> {
  const out: AuditEntry[] = []
  let cursor: string | undefined
  for (let i = 0; i < 50; i++) {
    const page = await store.query(tenant, filter, { limit, ...(cursor ? { cursor } : {}) }, NOW)
    expect(page.entries.length).toBeLessThanOrEqual(limit)
    out.push(...page.entries)
    if (!page.next) return out
    cursor = page.next
  }
  throw new Error('paging did not end')
}

export function auditStoreContract(name: string, make: () => Promise<AuditStore>) {
  describe(`AuditStore contract (${name})`, () => {
    let store: AuditStore
    beforeEach(async () => {
      store = await make()
    })

    it('reads back an appended entry with every field it was written with', async () => {
      const e = entry({
        versionBefore: '3',
        versionAfter: '4',
        contentHash: `sha256:${'a'.repeat(64)}`,
        requestId: 'r-1',
        traceId: 'f'.repeat(32),
        sourceAddress: '203.0.113.9',
        client: 'cli apply',
        reason: 'x',
      })
      await store.append(e)
      expect((await store.query('acme', {}, { limit: 10 }, NOW)).entries).toEqual([e])
    })

    it('refuses a second entry with the same tenant and id and keeps the first', async () => {
      const e = entry()
      await store.append(e)
      await expect(store.append({ ...e, action: 'secret.delete' })).rejects.toMatchObject({ code: 'ALREADY_EXISTS' })
      expect((await store.query('acme', {}, { limit: 10 }, NOW)).entries.map((x) => x.action)).toEqual(['document.put'])
    })

    it('pages newest first through every entry exactly once', async () => {
      const written = [entry(), entry(), entry(), entry(), entry()]
      for (const e of written) await store.append(e)
      expect((await all(store, 'acme')).map((e) => e.id)).toEqual(written.map((e) => e.id).reverse())
    })

    it('never returns another tenant’s entries, even with that tenant’s cursor', async () => {
      for (let i = 0; i < 3; i++) await store.append(entry({ tenant: 'globex' }))
      await store.append(entry())
      const theirs = await store.query('globex', {}, { limit: 1 }, NOW)
      expect(theirs.next).toBeDefined()
      const mine = await store.query('acme', {}, { limit: 10, cursor: theirs.next! }, NOW)
      expect(mine.entries.every((e) => e.tenant === 'acme')).toBe(true)
      expect((await all(store, 'acme')).map((e) => e.tenant)).toEqual(['acme'])
    })

    it('leaves out entries that have expired, although nothing deleted them', async () => {
      await store.append(entry({ expiresAt: NOW - 1 }))
      await store.append(entry({ expiresAt: NOW }))
      const kept = entry({ expiresAt: NOW + 1 })
      await store.append(kept)
      expect((await all(store, 'acme')).map((e) => e.id)).toEqual([kept.id])
    })

    it('filters by time range, actor, action (exact or prefix) and target (exact or prefix)', async () => {
      const early = entry({ at: '2026-04-01T10:00:00.000Z' })
      const bob = entry({ at: '2026-04-02T10:00:00.000Z', actor: { subject: 'bob' }, action: 'secret.put', target: 'secrets/API_KEY' })
      const late = entry({ at: '2026-04-03T10:00:00.000Z', action: 'secret.delete', target: 'secrets/OTHER' })
      for (const e of [early, bob, late]) await store.append(e)
      const ids = async (f: object) => (await all(store, 'acme', f)).map((e) => e.id)
      expect(await ids({ from: '2026-04-02T00:00:00.000Z' })).toEqual([late.id, bob.id])
      expect(await ids({ to: '2026-04-02T10:00:00.000Z' })).toEqual([bob.id, early.id])
      expect(await ids({ actor: 'bob' })).toEqual([bob.id])
      expect(await ids({ action: 'secret.' })).toEqual([late.id, bob.id])
      expect(await ids({ action: 'secret.put' })).toEqual([bob.id])
      expect(await ids({ target: 'secrets/' })).toEqual([late.id, bob.id])
      expect(await ids({ target: 'secrets/OTHER' })).toEqual([late.id])
      expect(await ids({ action: 'secret', target: 'secrets/' })).toEqual([])
    })
  })
}
