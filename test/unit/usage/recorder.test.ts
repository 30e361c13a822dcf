/** The usage buffer: coalescing, flushing, and failures that never reach a tool call. */
import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import { whoamiTool } from '../../../lib/tools/builtins/whoami'
import type { ToolGate } from '../../../lib/tools/dispatcher'
import { ToolDispatcher } from '../../../lib/tools/dispatcher'
import { UsageCounter } from '../../../lib/usage/counting'
import type { UsageIncrement } from '../../../lib/usage/ports'
import { UsageRecorder } from '../../../lib/usage/recorder'

const key = { tenant: 'acme', project: 'shop', role: 'coder', tool: 'whoami' }

/** A memory store whose first `failures` increments reject, like a throttled or unreachable table. */
class FlakyStore extends MemoryToolUsageStore {
  attempts = 0
  constructor(private failures: number) {
    super()
  }
  override async increment(inc: UsageIncrement) {
    this.attempts++
    if (this.failures > 0) {
      this.failures--
      throw new Error('ProvisionedThroughputExceededException')
    }
    return super.increment(inc)
  }
}

describe('UsageRecorder', () => {
  it('writes nothing until flushed when automatic flushing is off, then one increment per key, which also counts the day', async () => {
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0 })
    for (let i = 0; i < 10; i++) recorder.record(key, 'whoami', { calls: 1 })
    recorder.record({ ...key, tool: 'tool_list' }, 'tool', { calls: 1 })
    expect(store.roundTrips).toBe(0)
    expect(recorder.pendingKeys).toBe(2)
    expect(await recorder.flush()).toEqual({ written: 2, failed: 0 })
    expect(recorder.pendingKeys).toBe(0)
    expect((await store.list('acme', 'shop')).map((r) => [r.tool, r.calls])).toEqual([
      ['tool_list', 1],
      ['whoami', 10],
    ])
    expect(await store.listDays('acme', 'shop', '2026-01-01', '2026-01-01')).toEqual([{ role: 'coder', day: '2026-01-01', calls: 11 }])
  })

  it('counts calls per role and UTC day: a call past midnight goes to the next day', async () => {
    const store = new MemoryToolUsageStore()
    const clock = new ManualClock(Date.UTC(2026, 2, 1, 23, 59, 59))
    const recorder = new UsageRecorder({ store, clock, log: new MemoryLogger(), flushDelayMs: 0 })
    recorder.record(key, 'whoami', { calls: 2 })
    recorder.record({ ...key, role: 'writer' }, 'whoami', { calls: 1 })
    recorder.record(key, 'whoami', { discoveryHits: 4, listedHits: 2 })
    clock.advance(2000)
    recorder.record(key, 'whoami', { calls: 1 })
    await recorder.flush()
    expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-02')).toEqual([
      { role: 'coder', day: '2026-03-01', calls: 2 },
      { role: 'writer', day: '2026-03-01', calls: 1 },
      { role: 'coder', day: '2026-03-02', calls: 1 },
    ])
  })

  it('flushes by itself shortly after the first count', async () => {
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 5 })
    recorder.record(key, 'whoami', { calls: 1 })
    await expect.poll(async () => (await store.list('acme', 'shop')).length).toBe(1)
    expect(recorder.pendingKeys).toBe(0)
  })

  it('flushes at once when the pending keys reach the cap', async () => {
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0, maxPendingKeys: 3 })
    for (const tool of ['a', 'b', 'c']) recorder.record({ ...key, tool }, tool, { calls: 1 })
    expect(recorder.pendingKeys).toBe(0)
    await recorder.flush()
    expect(await store.list('acme', 'shop')).toHaveLength(3)
  })

  it('retries a failing write with growing pauses and keeps every count', async () => {
    const store = new FlakyStore(2)
    const pauses: number[] = []
    const log = new MemoryLogger()
    const recorder = new UsageRecorder({
      store,
      clock: new ManualClock(),
      log,
      flushDelayMs: 0,
      retryDelaysMs: [10, 40, 160],
      sleep: async (ms) => void pauses.push(ms),
    })
    recorder.record(key, 'whoami', { calls: 3 })
    expect(await recorder.flush()).toEqual({ written: 1, failed: 0 })
    expect(store.attempts).toBe(3)
    expect(pauses).toHaveLength(2)
    expect(pauses[0]).toBeGreaterThanOrEqual(10)
    expect(pauses[1]).toBeGreaterThanOrEqual(40)
    expect((await store.list('acme', 'shop'))[0].calls).toBe(3)
    expect(log.find('usage.write_recovered')).toEqual([
      expect.objectContaining({ level: 'info', fields: expect.objectContaining({ attempts: 3 }) }),
    ])
  })

  it('gives up after the last retry and logs the exact counts it could not write', async () => {
    const store = new FlakyStore(100)
    const log = new MemoryLogger()
    const recorder = new UsageRecorder({
      store,
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
      log,
      flushDelayMs: 0,
      retryDelaysMs: [1, 1],
      sleep: async () => {},
    })
    recorder.record(key, 'whoami', { calls: 2, discoveryHits: 1 })
    expect(await recorder.flush()).toEqual({ written: 0, failed: 1 })
    expect(store.attempts).toBe(3)
    expect(recorder.pendingKeys).toBe(0)
    expect(log.find('usage.write_failed')).toEqual([
      {
        level: 'error',
        event: 'usage.write_failed',
        fields: expect.objectContaining({
          ...key,
          family: 'whoami',
          calls: 2,
          discoveryHits: 1,
          listedHits: 0,
          day: '2026-01-01',
          lastCallAt: '2026-01-01T00:00:00.000Z',
          attempts: 3,
          error: 'ProvisionedThroughputExceededException',
        }),
      },
    ])
  })

  it('never fails a tool call when every counter write fails', async () => {
    const store = new FlakyStore(Number.MAX_SAFE_INTEGER)
    const log = new MemoryLogger()
    const recorder = new UsageRecorder({
      store,
      clock: new ManualClock(),
      log,
      flushDelayMs: 0,
      maxPendingKeys: 1,
      retryDelaysMs: [1],
      sleep: async () => {},
    })
    const dispatcher = new ToolDispatcher(log)
    dispatcher.addListener(new UsageCounter(recorder))
    const gate: ToolGate = { resolve: async (n) => (n === 'whoami' ? whoamiTool : undefined), names: async () => ['whoami'] }
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        dispatcher.call(gate, { tenant: 'acme', project: 'shop', subject: 's', role: 'coder' }, 'whoami', {}),
      ),
    )
    expect(outcomes.every((o) => !o.isError)).toBe(true)
    await recorder.flush()
    expect(log.find('usage.write_failed').length).toBeGreaterThan(0)
    expect(log.find('tool.failed')).toEqual([])
  })

  it('waits in flush() for a flush that is already writing', async () => {
    let release!: () => void
    const gateOpen = new Promise<void>((r) => (release = r))
    class SlowStore extends MemoryToolUsageStore {
      override async increment(inc: UsageIncrement) {
        await gateOpen
        return super.increment(inc)
      }
    }
    const store = new SlowStore()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0 })
    recorder.record(key, 'whoami', { calls: 1 })
    const first = recorder.flush()
    let secondDone = false
    const second = recorder.flush().then(() => (secondDone = true))
    await new Promise((r) => setImmediate(r))
    expect(secondDone).toBe(false)
    release()
    await Promise.all([first, second])
    expect((await store.list('acme', 'shop'))[0].calls).toBe(1)
  })

  it('ignores a record with nothing to add', async () => {
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0 })
    recorder.record(key, 'whoami', { calls: 0 })
    expect(recorder.pendingKeys).toBe(0)
  })

  it('writes at most tenantKeysPerFlush keys of a tenant per automatic flush, oldest first, beside the other tenants; the rest add up and follow', async () => {
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({
      store,
      clock: new ManualClock(),
      log: new MemoryLogger(),
      flushDelayMs: 0,
      maxPendingKeys: 5,
      tenantKeysPerFlush: 2,
    })
    for (const tool of ['a1', 'a2', 'a3', 'a4']) recorder.record({ ...key, tool }, tool, { listedHits: 1 })
    recorder.record({ ...key, tenant: 'umbrella', tool: 'b1' }, 'b1', { listedHits: 1 })
    // the fifth key started a flush: a1, a2 and b1 are written, a3 and a4 wait
    expect(recorder.pendingKeys).toBe(2)
    expect(recorder.writes).toBe(3)
    recorder.record({ ...key, tool: 'a3' }, 'a3', { listedHits: 1 })
    expect(recorder.pendingKeys).toBe(2)
    await recorder.flush()
    expect(recorder.writes).toBe(5)
    const rows = await store.list('acme', 'shop')
    expect(Object.fromEntries(rows.map((r) => [r.tool, r.listedHits]))).toEqual({ a1: 1, a2: 1, a3: 2, a4: 1 })
    expect((await store.list('umbrella', 'shop')).map((r) => r.tool)).toEqual(['b1'])
  })

  it('paces a tenant touching hundreds of keys to one bounded flush at a time, and writes every count in the end', async () => {
    vi.useFakeTimers()
    onTestFinished(() => void vi.useRealTimers())
    const store = new MemoryToolUsageStore()
    const recorder = new UsageRecorder({
      store,
      clock: new ManualClock(),
      log: new MemoryLogger(),
      flushDelayMs: 5,
      tenantKeysPerFlush: 50,
    })
    // five pages of a 1,000-operation pack listed, twice
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 1_000; i++) recorder.record({ ...key, tool: `wide__op${i}` }, 'wide', { listedHits: 1 })
    recorder.record({ ...key, tenant: 'umbrella', tool: 'whoami' }, 'whoami', { calls: 1 })
    await vi.advanceTimersByTimeAsync(5)
    // the first flush: 50 keys of the tenant that touched 1,000, and the other tenant's one
    expect(recorder.writes).toBe(51)
    expect(await store.list('umbrella', 'shop')).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(5)
    expect(recorder.writes).toBe(101)
    await vi.advanceTimersByTimeAsync(5 * 20)
    expect(recorder.pendingKeys).toBe(0)
    await recorder.flush()
    const rows = await store.list('acme', 'shop')
    expect(rows).toHaveLength(1_000)
    expect(rows.every((r) => r.listedHits === 2)).toBe(true)
    expect(recorder.writes).toBe(1_001)
  })

  it("drops counts for a tenant's new keys past tenantPendingKeys and logs their numbers, keeping other tenants' counts", async () => {
    const store = new MemoryToolUsageStore()
    const log = new MemoryLogger()
    const recorder = new UsageRecorder({ store, clock: new ManualClock(), log, flushDelayMs: 0, tenantPendingKeys: 3 })
    for (let i = 0; i < 5; i++) recorder.record({ ...key, tool: `t${i}` }, 't', { listedHits: 1 })
    recorder.record({ ...key, tool: 't0' }, 't', { calls: 1 })
    recorder.record({ ...key, tenant: 'umbrella' }, 'whoami', { calls: 1 })
    expect(recorder.pendingKeys).toBe(4)
    expect(await recorder.flush()).toEqual({ written: 4, failed: 0 })
    expect(log.find('usage.dropped')).toEqual([
      {
        level: 'error',
        event: 'usage.dropped',
        fields: { tenant: 'acme', pendingKeysCap: 3, records: 2, calls: 0, discoveryHits: 0, listedHits: 2, refusals: 0 },
      },
    ])
    expect((await store.list('acme', 'shop')).map((r) => [r.tool, r.calls, r.listedHits])).toEqual([
      ['t0', 1, 1],
      ['t1', 0, 1],
      ['t2', 0, 1],
    ])
    expect(await store.list('umbrella', 'shop')).toHaveLength(1)
  })
})
