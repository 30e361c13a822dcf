/**
 * The fair scheduler in front of the sandbox (lib/sandbox/scheduler.ts), with a fake inner sandbox
 * whose runs end when the test says so: places per tenant, round-robin between tenants, bounded
 * queues (OVERLOADED with a Retry-After), nested places, cancellation, inherited deadlines.
 */
import { describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../../lib/errors'
import { type FairnessLimits, FairSandbox, type SandboxRequest, type SandboxResult } from '../../../lib/sandbox'
import { FakeSiblings } from './fakes'

interface Held {
  req: SandboxRequest
  finish(value?: unknown): void
}

/** Runs that start at once and end when finished by the test (or, like a real run, when their signal fires). */
class HeldSandbox {
  readonly held: Held[] = []
  run(req: SandboxRequest): Promise<SandboxResult> {
    return new Promise((resolve) => {
      req.onStarted?.()
      const held: Held = { req, finish: (value = req.source) => resolve({ value, durationMs: 0 }) }
      req.signal?.addEventListener('abort', () => resolve({ error: 'TIMEOUT', message: 'cancelled' }), { once: true })
      this.held.push(held)
    })
  }
  async stats() {
    return { engines: [] }
  }
  of(source: string) {
    return this.held.find((h) => h.req.source === source)!
  }
}

const LIMITS: FairnessLimits = { slots: 4, tenantSlots: 2, tenantQueue: 2, queue: 3, nestedSlots: 3, tenantNestedSlots: 2 }

function setup(limits: Partial<FairnessLimits> = {}, now = () => 0) {
  const inner = new HeldSandbox()
  const fair = new FairSandbox(inner, { ...LIMITS, ...limits }, now)
  const run = (tenant: string, source: string, extra: Partial<SandboxRequest> = {}) =>
    fair.run({ source, timeoutMs: 30_000, host: new FakeSiblings({}).host(0, { tenant, project: 'p1' }), ...extra })
  return { inner, fair, run }
}

const tick = () => new Promise((r) => setTimeout(r, 0))
const scheduler = async (fair: FairSandbox<unknown>) => (await fair.stats()).scheduler

describe('the fair scheduler', () => {
  it("queues a tenant's runs beyond its places and serves them in order as its places free", async () => {
    const { inner, fair, run } = setup()
    const results = ['a1', 'a2', 'a3'].map((s) => run('a', s))
    await tick()
    expect(inner.held.map((h) => h.req.source)).toEqual(['a1', 'a2'])
    expect(await scheduler(fair)).toEqual({ running: 2, nested: 0, queued: 1 })
    inner.of('a1').finish()
    await tick()
    expect(inner.held.map((h) => h.req.source)).toEqual(['a1', 'a2', 'a3'])
    expect(await results[0]).toEqual({ value: 'a1', durationMs: 0 })
  })

  it('lets another tenant run at once while one tenant holds all its places and waits for more', async () => {
    const { inner, run } = setup()
    for (const s of ['a1', 'a2', 'a3', 'a4']) void run('a', s)
    void run('b', 'b1')
    await tick()
    expect(inner.held.map((h) => h.req.source)).toEqual(['a1', 'a2', 'b1'])
  })

  it('gives a freed place to the next tenant in turn, not to the one with the longest backlog', async () => {
    const { inner, run } = setup({ tenantSlots: 4, tenantQueue: 3, queue: 5 })
    for (const s of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) void run('a', s)
    void run('b', 'b1')
    await tick()
    inner.of('a1').finish()
    await tick()
    inner.of('a2').finish()
    await tick()
    // a5 was waiting first, then b1; after a5 had its turn b1 is next, ahead of a's a6.
    expect(inner.held.map((h) => h.req.source)).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'b1'])
  })

  it("refuses a run beyond the tenant's queue with OVERLOADED and a Retry-After from the first deadline", async () => {
    let now = 0
    const { run } = setup({}, () => now)
    for (const s of ['a1', 'a2', 'a3', 'a4']) void run('a', s)
    await tick()
    now = 12_400
    const refused = await run('a', 'a5').catch((e: unknown) => e)
    expect(isServerToolsError(refused, 'OVERLOADED')).toBe(true)
    expect((refused as { details: { retryAfterSeconds: number } }).details.retryAfterSeconds).toBe(18) // 30 s deadlines started at 0
  })

  it('refuses any tenant once the queue across tenants is full', async () => {
    const { run } = setup()
    for (const [t, s] of [
      ['a', 'a1'],
      ['a', 'a2'],
      ['b', 'b1'],
      ['b', 'b2'],
      ['c', 'c1'],
      ['c', 'c2'],
      ['d', 'd1'],
    ])
      void run(t, s)
    await tick()
    await expect(run('e', 'e1')).rejects.toMatchObject({
      code: 'OVERLOADED',
      message: expect.stringMatching(/3 scripts are waiting \(at most 3\)/),
    })
  })

  it('refuses a run that could not start within its own timeout', async () => {
    const { run } = setup()
    for (const s of ['a1', 'a2']) void run('a', s)
    await expect(run('a', 'a3', { timeoutMs: 20 })).rejects.toMatchObject({
      code: 'OVERLOADED',
      message: expect.stringMatching(/could not start within its 20 ms/),
    })
  })

  it('takes a waiting run out of the queue when its caller goes away', async () => {
    const { inner, fair, run } = setup()
    for (const s of ['a1', 'a2']) void run('a', s)
    const caller = new AbortController()
    const waiting = run('a', 'a3', { signal: caller.signal })
    await tick()
    caller.abort()
    expect(await waiting).toMatchObject({ error: 'TIMEOUT', message: expect.stringMatching(/cancelled/) })
    expect(await scheduler(fair)).toEqual({ running: 2, nested: 0, queued: 0 })
    inner.of('a1').finish()
    await tick()
    expect(inner.held).toHaveLength(2)
  })

  it('never queues a nested run: it takes a nested place or is refused, whatever the top-level places', async () => {
    const { inner, run } = setup()
    for (const s of ['a1', 'a2', 'b1', 'b2']) void run(s[0], s)
    const nested = (tenant: string, source: string) =>
      run(tenant, source, { host: new FakeSiblings({}).host(1, { tenant, project: 'p1' }) })
    void nested('a', 'n1')
    void nested('a', 'n2')
    expect(await nested('a', 'n3')).toMatchObject({
      error: 'RESOURCE_EXHAUSTED',
      message: expect.stringMatching(/this tenant already runs 2 nested scripts/),
    })
    void nested('b', 'n4')
    expect(await nested('c', 'n5')).toMatchObject({
      error: 'RESOURCE_EXHAUSTED',
      message: expect.stringMatching(/all 3 places for nested scripts/),
    })
    await tick()
    expect(inner.held.map((h) => h.req.source).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'n1', 'n2', 'n4'])
  })

  it("ends a run's host calls and nested runs with the run, and gives nested runs at most the parent's time left", async () => {
    let now = 0
    const { inner, run } = setup({}, () => now)
    const seen: (AbortSignal | undefined)[] = []
    const tools = new FakeSiblings({})
    const host = {
      ...tools.host(0, { tenant: 'a', project: 'p1' }),
      tools: {
        ...tools.tools(0),
        call: async (_n: string, _p: unknown, o?: { signal?: AbortSignal }) => (seen.push(o?.signal), { isError: false, content: null }),
      },
    }
    const parent = run('a', 'parent', { host, timeoutMs: 1000 })
    await tick()
    await inner.of('parent').req.host!.tools.call('x', {})
    const signal = seen[0]!
    expect(signal.aborted).toBe(false)

    now = 700
    void run('a', 'child', { signal, timeoutMs: 30_000, host: tools.host(1, { tenant: 'a', project: 'p1' }) })
    await tick()
    expect(inner.of('child').req.timeoutMs).toBe(300)

    inner.of('parent').finish()
    await parent
    expect(signal.aborted).toBe(true)
    expect(inner.of('child').req.signal!.aborted).toBe(true)
    now = 2000
    expect(await run('a', 'late', { signal, host: tools.host(1, { tenant: 'a', project: 'p1' }) })).toMatchObject({ error: 'TIMEOUT' })
  })
})
