/**
 * The ToolUsageStore contract (spec §14.4). Every adapter runs it: test/unit/usage-stores.test.ts
 * (memory) and test/integration/aws-usage-store.test.ts (dynalite).
 */
import { beforeEach, describe, expect, it } from 'vitest'
import type { ToolUsageStore, UsageIncrement } from '../../lib/usage/ports'

const inc = (over: Partial<UsageIncrement> & Pick<UsageIncrement, 'role' | 'tool'>): UsageIncrement => ({
  tenant: 'acme',
  project: 'shop',
  family: over.tool.split('_')[0],
  calls: 0,
  discoveryHits: 0,
  listedHits: 0,
  ...over,
  day: over.day ?? '2026-03-01',
})

export function toolUsageStoreContract(name: string, make: () => Promise<ToolUsageStore>) {
  describe(`ToolUsageStore contract (${name})`, () => {
    let store: ToolUsageStore

    beforeEach(async () => {
      store = await make()
    })

    it('lists nothing for a project that has recorded nothing', async () => {
      expect(await store.list('acme', 'shop')).toEqual([])
      expect(await store.list('acme', 'shop', 'coder')).toEqual([])
    })

    it('creates a row on the first increment with all three counters, the family and the given instants', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 2, lastCallAt: '2026-01-01T00:00:00.000Z' }))
      expect(await store.list('acme', 'shop')).toEqual([
        {
          role: 'coder',
          tool: 'file_read',
          family: 'file',
          calls: 2,
          discoveryHits: 0,
          listedHits: 0,
          lastCallAt: '2026-01-01T00:00:00.000Z',
        },
      ])
    })

    it('adds to the counters and moves the instants that an increment carries, keeping the others', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1, lastCallAt: '2026-01-01T00:00:00.000Z' }))
      await store.increment(inc({ role: 'coder', tool: 'file_read', discoveryHits: 3, lastDiscoveryAt: '2026-01-02T00:00:00.000Z' }))
      await store.increment(
        inc({
          role: 'coder',
          tool: 'file_read',
          calls: 4,
          listedHits: 5,
          lastCallAt: '2026-01-03T00:00:00.000Z',
          lastListedAt: '2026-01-03T00:00:00.000Z',
        }),
      )
      expect(await store.list('acme', 'shop', 'coder')).toEqual([
        {
          role: 'coder',
          tool: 'file_read',
          family: 'file',
          calls: 5,
          discoveryHits: 3,
          listedHits: 5,
          lastCallAt: '2026-01-03T00:00:00.000Z',
          lastDiscoveryAt: '2026-01-02T00:00:00.000Z',
          lastListedAt: '2026-01-03T00:00:00.000Z',
        },
      ])
    })

    it('adds calls from code and refusals in the same increment as the calls, and reads rows without them as absent', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 3, codeCalls: 2, refusals: 4 }))
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1, codeCalls: 1 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', calls: 1 }))
      const [fileRead, grep] = await store.list('acme', 'shop')
      expect(fileRead).toMatchObject({ tool: 'file_read', calls: 4, codeCalls: 3, refusals: 4 })
      expect(grep.codeCalls ?? 0).toBe(0)
      expect(grep.refusals ?? 0).toBe(0)
    })

    it('adds an increment repeated with the same flush id once, even after three other flushes of the key', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 2, flushId: 'f1' }))
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 2, flushId: 'f1' }))
      for (const id of ['f2', 'f3', 'f4']) await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1, flushId: id }))
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 2, flushId: 'f1' }))
      // another key's flush with the same id is its own
      await store.increment(inc({ role: 'coder', tool: 'file_write', calls: 5, flushId: 'f1' }))
      expect((await store.list('acme', 'shop')).map((r) => [r.tool, r.calls])).toEqual([
        ['file_read', 5],
        ['file_write', 5],
      ])
    })

    it('overwrites the family with the latest increment', async () => {
      await store.increment(inc({ role: 'coder', tool: 'gmail__send', family: 'gmail', calls: 1 }))
      await store.increment(inc({ role: 'coder', tool: 'gmail__send', family: 'mail', calls: 1 }))
      expect((await store.list('acme', 'shop'))[0]).toMatchObject({ family: 'mail', calls: 2 })
    })

    it('loses no count when 100 increments of the same key run concurrently', async () => {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1, discoveryHits: i % 2, listedHits: 2 })),
        ),
      )
      expect((await store.list('acme', 'shop'))[0]).toMatchObject({ calls: 100, discoveryHits: 50, listedHits: 200 })
    })

    it('keeps roles, projects and tenants apart', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1 }))
      await store.increment(inc({ role: 'chat', tool: 'file_read', calls: 2 }))
      await store.increment(inc({ project: 'other', role: 'coder', tool: 'file_read', calls: 4 }))
      await store.increment(inc({ tenant: 'globex', role: 'coder', tool: 'file_read', calls: 8 }))
      expect((await store.list('acme', 'shop')).map((r) => [r.role, r.calls])).toEqual([
        ['chat', 2],
        ['coder', 1],
      ])
      expect((await store.list('acme', 'shop', 'coder')).map((r) => r.calls)).toEqual([1])
      expect((await store.list('acme', 'other')).map((r) => r.calls)).toEqual([4])
      expect((await store.list('globex', 'shop')).map((r) => r.calls)).toEqual([8])
    })

    it('reads one role without the rows of a role whose name extends it', async () => {
      await store.increment(inc({ role: 'coder', tool: 'file_read', calls: 1 }))
      await store.increment(inc({ role: 'coder#2', tool: 'file_read', calls: 2 }))
      await store.increment(inc({ role: 'coder2', tool: 'file_read', calls: 3 }))
      expect((await store.list('acme', 'shop', 'coder')).map((r) => [r.role, r.calls])).toEqual([['coder', 1]])
    })

    it('sorts rows by role, then tool', async () => {
      for (const [role, tool] of [
        ['zeta', 'a_tool'],
        ['alpha', 'z_tool'],
        ['alpha', 'b_tool'],
        ['_unknown', 'whoami'],
      ]) {
        await store.increment(inc({ role, tool, calls: 1 }))
      }
      expect((await store.list('acme', 'shop')).map((r) => `${r.role}/${r.tool}`)).toEqual([
        '_unknown/whoami',
        'alpha/b_tool',
        'alpha/z_tool',
        'zeta/a_tool',
      ])
    })

    it('counts calls per role and day beside the totals, and reads a window of days sorted by day then role', async () => {
      await Promise.all(
        Array.from({ length: 40 }, () => store.increment(inc({ role: 'coder', tool: 'file_read', day: '2026-03-02', calls: 1 }))),
      )
      await store.increment(inc({ role: 'chat', tool: 'file_read', day: '2026-03-02', calls: 3 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 5 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-02', calls: 2 }))
      await store.increment(inc({ role: 'coder', tool: 'file_read', day: '2026-03-04', calls: 7 }))
      await store.increment(inc({ project: 'other', role: 'coder', tool: 'file_read', day: '2026-03-02', calls: 9 }))
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-03')).toEqual([
        { role: 'coder', day: '2026-03-01', calls: 5 },
        { role: 'chat', day: '2026-03-02', calls: 3 },
        { role: 'coder', day: '2026-03-02', calls: 42 },
      ])
      expect(await store.listDays('acme', 'shop', '2026-03-04', '2026-03-04')).toEqual([{ role: 'coder', day: '2026-03-04', calls: 7 }])
      expect((await store.list('acme', 'shop', 'coder')).map((r) => [r.tool, r.calls])).toEqual([
        ['file_read', 47],
        ['grep', 7],
      ])
    })

    it("counts a day's calls on that day when they arrive after the same tool's calls of a later day", async () => {
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 1 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-03', calls: 2 }))
      // a container flushing what it counted before midnight, after another moved the tool on
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-02', calls: 4 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 8 }))
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-03')).toEqual([
        { role: 'coder', day: '2026-03-01', calls: 9 },
        { role: 'coder', day: '2026-03-02', calls: 4 },
        { role: 'coder', day: '2026-03-03', calls: 2 },
      ])
      expect((await store.list('acme', 'shop'))[0].calls).toBe(15)
    })

    it('loses no count when increments of one tool for three days race, in any order', async () => {
      const days = ['2026-03-01', '2026-03-02', '2026-03-03']
      // orders invented to make rolls and late arrivals meet: ascending, descending, interleaved
      const orders = [
        Array.from({ length: 60 }, (_, i) => days[Math.floor(i / 20)]),
        Array.from({ length: 60 }, (_, i) => days[2 - Math.floor(i / 20)]),
        Array.from({ length: 60 }, (_, i) => days[(i * 7) % 3]),
      ]
      for (const [n, order] of orders.entries()) {
        const tool = `tool_${n}`
        await Promise.all(order.map((day) => store.increment(inc({ role: 'coder', tool, day, calls: 1 }))))
      }
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-03')).toEqual(
        days.map((day) => ({ role: 'coder', day, calls: 60 })),
      )
      expect((await store.list('acme', 'shop')).map((r) => r.calls)).toEqual([60, 60, 60])
    })

    it("adds the closed days of many tools of one role into the role's day once each", async () => {
      const tools = Array.from({ length: 12 }, (_, i) => `tool_${i}`)
      await Promise.all(tools.map((tool, i) => store.increment(inc({ role: 'coder', tool, day: '2026-03-01', calls: i + 1 }))))
      await Promise.all(
        tools.flatMap((tool) => [1, 2].map(() => store.increment(inc({ role: 'coder', tool, day: '2026-03-02', calls: 1 })))),
      )
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-02')).toEqual([
        { role: 'coder', day: '2026-03-01', calls: 78 },
        { role: 'coder', day: '2026-03-02', calls: 24 },
      ])
    })

    it('adds an increment once per flush id across a new day and a late one', async () => {
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 3, flushId: 'f1' }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 3, flushId: 'f1' }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-02', calls: 2, flushId: 'f2' }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-02', calls: 2, flushId: 'f2' }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 1, flushId: 'f3' }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 1, flushId: 'f3' }))
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-02')).toEqual([
        { role: 'coder', day: '2026-03-01', calls: 4 },
        { role: 'coder', day: '2026-03-02', calls: 2 },
      ])
      expect((await store.list('acme', 'shop'))[0].calls).toBe(6)
    })

    it('counts nothing per day for an increment without calls, and keeps day counts out of the per-tool rows', async () => {
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', discoveryHits: 2, listedHits: 1 }))
      expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-01')).toEqual([])
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-01', calls: 1 }))
      await store.increment(inc({ role: 'coder', tool: 'grep', day: '2026-03-02', calls: 1 }))
      expect((await store.list('acme', 'shop')).map((r) => r.tool)).toEqual(['grep'])
      expect((await store.list('acme', 'shop', 'coder')).map((r) => r.tool)).toEqual(['grep'])
    })

    it('reads every row of a project larger than one result page', async () => {
      // ~3 KB per item: 600 items are more than DynamoDB's 1 MB result page.
      const family = 'f'.repeat(3000)
      const tools = Array.from({ length: 600 }, (_, i) => `tool_${String(i).padStart(4, '0')}`)
      for (let i = 0; i < tools.length; i += 50) {
        await Promise.all(tools.slice(i, i + 50).map((tool) => store.increment(inc({ role: 'coder', tool, family, calls: 1 }))))
      }
      const rows = await store.list('acme', 'shop', 'coder')
      expect(rows).toHaveLength(600)
      expect(rows.every((r) => r.calls === 1)).toBe(true)
    })
  })
}
