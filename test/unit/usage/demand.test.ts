/** Measured demand for the triage: one read per role per memo window, never an error. */
import { describe, expect, it } from 'vitest'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import { familyOfName } from '../../../lib/usage/counting'
import { DemandReader, familyDemand, MAX_DEMAND_TTL_MS } from '../../../lib/usage/demand'

async function seeded() {
  const store = new MemoryToolUsageStore()
  const base = { tenant: 'acme', project: 'shop', listedHits: 0, day: '2026-01-01' }
  await store.increment({ ...base, role: 'coder', tool: 'file_read', family: 'file', calls: 5, discoveryHits: 1 })
  await store.increment({ ...base, role: 'coder', tool: 'file_write', family: 'file', calls: 2, discoveryHits: 0 })
  await store.increment({ ...base, role: 'coder', tool: 'slack_post', family: 'slack', calls: 0, discoveryHits: 0, listedHits: 9 })
  await store.increment({ ...base, role: 'chat', tool: 'slack_post', family: 'slack', calls: 40, discoveryHits: 0 })
  return store
}

describe('DemandReader', () => {
  it("answers each tool's positive demand (calls + discoveryHits) of one role only", async () => {
    const reader = new DemandReader({ store: await seeded(), clock: new ManualClock(), log: new MemoryLogger() })
    expect([...(await reader.toolDemand('acme', 'shop', 'coder'))]).toEqual([
      ['file_read', 6],
      ['file_write', 2],
    ])
  })

  it('sums demand per family', async () => {
    const reader = new DemandReader({ store: await seeded(), clock: new ManualClock(), log: new MemoryLogger() })
    expect([...familyDemand(await reader.toolDemand('acme', 'shop', 'coder'), familyOfName)]).toEqual([['file', 8]])
  })

  it('reads the store once per role within the memo window and again after it', async () => {
    const store = await seeded()
    const clock = new ManualClock()
    const reader = new DemandReader({ store, clock, log: new MemoryLogger(), ttlMs: 60_000 })
    await Promise.all([reader.toolDemand('acme', 'shop', 'coder'), reader.toolDemand('acme', 'shop', 'coder')])
    await reader.toolDemand('acme', 'shop', 'chat')
    clock.advance(59_999)
    await reader.toolDemand('acme', 'shop', 'coder')
    expect(reader.reads).toBe(2)
    clock.advance(1)
    await reader.toolDemand('acme', 'shop', 'coder')
    expect(reader.reads).toBe(3)
  })

  it('caps the memo at five minutes whatever it is configured to', async () => {
    const clock = new ManualClock()
    const reader = new DemandReader({ store: await seeded(), clock, log: new MemoryLogger(), ttlMs: 3_600_000 })
    await reader.toolDemand('acme', 'shop', 'coder')
    clock.advance(MAX_DEMAND_TTL_MS)
    await reader.toolDemand('acme', 'shop', 'coder')
    expect(reader.reads).toBe(2)
  })

  it('answers no demand, logs, and tries again next time when the read fails', async () => {
    const store = await seeded()
    const log = new MemoryLogger()
    let fail = true
    const flaky = {
      increment: store.increment.bind(store),
      listDays: store.listDays.bind(store),
      list: (...a: Parameters<typeof store.list>) => (fail ? Promise.reject(new Error('table gone')) : store.list(...a)),
    }
    const reader = new DemandReader({ store: flaky, clock: new ManualClock(), log })
    expect((await reader.toolDemand('acme', 'shop', 'coder')).size).toBe(0)
    expect(log.find('usage.demand_read_failed')).toHaveLength(1)
    fail = false
    expect((await reader.toolDemand('acme', 'shop', 'coder')).get('file_read')).toBe(6)
  })
})
