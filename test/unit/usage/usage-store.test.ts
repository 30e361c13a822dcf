import { describe, expect, it } from 'vitest'
import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import { USAGE_DAY_RETENTION_DAYS, utcDay } from '../../../lib/usage/ports'
import { toolUsageStoreContract } from '../../contract/tool-usage-store.contract'

toolUsageStoreContract('memory', async () => new MemoryToolUsageStore())

describe('MemoryToolUsageStore day rows', () => {
  it('holds at most the retention of day rows: a new day forgets the rows older than it', async () => {
    const store = new MemoryToolUsageStore()
    const start = Date.UTC(2026, 0, 1)
    for (let i = 0; i < USAGE_DAY_RETENTION_DAYS + 30; i++)
      await store.increment({
        tenant: 'acme',
        project: 'shop',
        role: 'coder',
        tool: 'grep',
        family: 'grep',
        day: utcDay(start + i * 86_400_000),
        calls: 1,
        discoveryHits: 0,
        listedHits: 0,
      })
    const rows = await store.listDays('acme', 'shop', '2000-01-01', '2100-01-01')
    expect(rows).toHaveLength(USAGE_DAY_RETENTION_DAYS + 1)
    expect(rows[0].day).toBe(utcDay(start + 29 * 86_400_000))
  })
})
