/**
 * QuotaRuleSource behind the per-container document cache (lib/documents/stamped-cache.ts): the
 * first time a container reads a tenant/project's rules it reads them at once, beside the
 * tenant's stamp read, and memoises nothing. Two containers over one in-memory store and stamp
 * store, as Lambda containers share the DynamoDB tables.
 */
import { describe, expect, it } from 'vitest'
import { BundledLayer } from '../../../lib/documents/bundled'
import { DocumentCascade } from '../../../lib/documents/cascade'
import { StampedDocumentCache } from '../../../lib/documents/stamped-cache'
import { QuotaRuleSource } from '../../../lib/quotas/limiter'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryDocumentStore } from '../../../lib/stores/memory/document-store'
import { MemoryTenantStampStore } from '../../../lib/stores/memory/tenant-stamp-store'
import { latch } from '../../support/latch'

const KEY = { scope: 'acme#_tenant', path: 'quotas.yaml' }
const rules = (n: number) =>
  `rules:\n${Array.from({ length: n }, (_, i) => `  - match: { tool: t${i} }\n    volume: { requests: 10, per: day }\n`).join('')}`

describe('QuotaRuleSource on a cold container', () => {
  it('never memoises rules read beside the stamp: a rule written between the two reads applies to the next call', async () => {
    const store = new MemoryDocumentStore()
    const stamps = new MemoryTenantStampStore()
    const clock = new ManualClock()
    let current: object | undefined
    let ids = 0
    const container = () => new StampedDocumentCache({ store, stamps, request: () => current, clock, newWriteId: () => `w${++ids}` })
    const [a, b] = [container(), container()]
    const source = new QuotaRuleSource(new DocumentCascade(b, new BundledLayer()), clock, undefined, (t) => b.generation(t))
    const request = async <T>(fn: () => Promise<T>) => {
      current = {}
      try {
        return await fn()
      } finally {
        current = undefined
      }
    }
    await a.put({ key: KEY, body: rules(1), actor: 'u' })
    // b's read of the rules is answered before its stamp read, and a second rule is written in between
    const { opened: gate, open: release } = latch()
    const read = stamps.read.bind(stamps)
    stamps.read = async (tenant: string) => {
      await gate
      return read(tenant)
    }
    const first = request(async () => {
      const placed = await source.rules('acme', 'p1')
      await b.freshen('acme')
      return placed.length
    })
    await a.put({ key: KEY, body: rules(2), actor: 'u' })
    release()
    expect(await first).toBe(1)
    stamps.read = read
    expect(await request(async () => (await source.rules('acme', 'p1')).length)).toBe(2)
  })
})
