/**
 * Issue 10 F10: a timeout reaches every nested run and host call of its call tree. A tool that
 * calls itself 32 times at every level (depth 4) — sequentially, or all at once after an await —
 * times out at the top; the sandbox must then be idle (no run, no waiting run, no extra worker).
 * Asserted on outcomes and the sandbox's own stats, never on a duration (durations are printed).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { tokenFor } from '../support/http'
import { ISOLATIONS, invoke, js, putScript, rssMb, sandboxApp, settled, UNMETERED } from './sandbox-support'

const BASE_WORKERS = 4

describe.each(ISOLATIONS)('cancellation of nested scripts (%s)', (isolation) => {
  const app = sandboxApp({ isolation, asyncEngines: BASE_WORKERS, maxStatements: UNMETERED })
  afterAll(async () => {
    await settled(app, BASE_WORKERS)
  })

  it('ends all 32 × depth-4 sequential self-calls when the top-level script times out', async () => {
    await putScript(
      app,
      'fan',
      'fan',
      'var n = 0; for (var i = 0; i < 32; i++) { try { vance.tools.call("fan", {}); n++ } catch (e) {} } n',
      2000,
    )
    const rss = rssMb()
    const started = performance.now()
    const res = await invoke(app, 'fan', 'fan')
    const body = await res.json()
    expect(res.status).toBe(200)
    expect(body).toMatchObject({ isError: true, content: { error: 'TIMEOUT' } })

    const stats = await settled(app, BASE_WORKERS)
    console.log(
      `[F10 ${isolation}] sequential fan-out: answered after ${Math.round(performance.now() - started)} ms; RSS ${rss} → ${rssMb()} MB; stats ${JSON.stringify(stats.scheduler)} workers ${stats.workers ?? '-'}`,
    )
    expect(stats.scheduler).toEqual({ running: 0, nested: 0, queued: 0 })
    expect(stats.workers ?? 0).toBeLessThanOrEqual(BASE_WORKERS)
    expect(stats.engines.filter((e) => e.busy)).toEqual([])
  }, 30_000)

  it('ends a concurrent fan-out (Promise.all of 32 self-calls after an await) when the top-level script times out', async () => {
    await putScript(
      app,
      'fan',
      'burst',
      // Every level fans out, then spins: only the cancellation from the top ends the tree.
      'async function go() { await null; var calls = []; for (var i = 0; i < 32; i++) calls.push(vance.tools.call("burst", {}).then(function () { return 1 }, function () { return 0 })); await Promise.all(calls); for (;;) {} } go()',
      2000,
    )
    const started = performance.now()
    const res = await invoke(app, 'fan', 'burst')
    expect((await res.json()).content).toMatchObject({ error: 'TIMEOUT' })
    const answered = performance.now() - started
    const stats = await settled(app, BASE_WORKERS)
    console.log(
      `[F10 ${isolation}] concurrent fan-out: answered after ${Math.round(answered)} ms, idle after ${Math.round(performance.now() - started)} ms; stats ${JSON.stringify(stats.scheduler)} workers ${stats.workers ?? '-'}`,
    )
    expect(stats.scheduler).toEqual({ running: 0, nested: 0, queued: 0 })
    expect(stats.workers ?? 0).toBeLessThanOrEqual(BASE_WORKERS)
  }, 30_000)

  it('ends nested execute_javascript runs that stall when their parent times out', async () => {
    // Each level starts a child that spins for its whole 30 s timeout; the parent gives up after 1 s.
    const res = await js(
      app,
      'fan',
      'vance.tools.call("execute_javascript", { code: "vance.tools.call(\\"execute_javascript\\", { code: \\"for (;;) {}\\", timeoutMs: 30000 })", timeoutMs: 30000 })',
      1000,
    )
    const body = await res.json()
    expect(body.content, JSON.stringify(body)).toMatchObject({ error: 'TIMEOUT' })
    const stats = await settled(app, BASE_WORKERS)
    expect(stats.scheduler).toEqual({ running: 0, nested: 0, queued: 0 })
    expect(stats.workers ?? 0).toBeLessThanOrEqual(BASE_WORKERS)
  }, 30_000)

  it('still answers another tenant at once after a cancelled call tree', async () => {
    const res = await js(app, 'other', '1 + 1')
    expect(await res.json()).toEqual({ isError: false, content: { value: 2, durationMs: expect.any(Number) } })
  })
})

// Inline, a spinning script holds the very thread that would notice the caller leaving: there its
// parent's deadline (inherited by every nested run) is what ends it, tested above.
describe('cancellation when the caller goes away (worker)', () => {
  const app = sandboxApp({ isolation: 'worker', asyncEngines: BASE_WORKERS, maxStatements: UNMETERED })

  it('ends a stalled script and everything under it when its caller goes away', async () => {
    const caller = new AbortController()
    const pending = js(
      app,
      'fan',
      'vance.tools.call("execute_javascript", { code: "for (;;) {}", timeoutMs: 30000 })',
      30000,
      caller.signal,
    )
    // Aborted once the nested run holds its place, so the whole tree is in flight when the caller leaves.
    for (let i = 0; i < 200 && (await app.deps.sandbox.stats()).scheduler.nested === 0; i++) await new Promise((r) => setTimeout(r, 25))
    caller.abort()
    const body = await (await pending).json()
    expect(body.content).toMatchObject({ error: 'TIMEOUT', message: expect.stringMatching(/cancelled/) })
    const stats = await settled(app, BASE_WORKERS)
    expect(stats.scheduler).toEqual({ running: 0, nested: 0, queued: 0 })
  }, 30_000)

  it('ends a stalled script and everything under it when the caller of a process tool call goes away', async () => {
    const token = await tokenFor('fan')
    const spawned = await (await app.as('fan')).post('/brain/fan/projects/p1/processes', {})
    expect(spawned.status).toBe(201)
    const { id } = await spawned.json()
    const caller = new AbortController()
    const pending = app.app.request(`/brain/fan/projects/p1/processes/${id}/tool-calls`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'execute_javascript',
        params: { code: 'vance.tools.call("execute_javascript", { code: "for (;;) {}", timeoutMs: 30000 })', timeoutMs: 30000 },
      }),
      signal: caller.signal,
    })
    // Aborted once the nested run holds its place, so the whole tree is in flight when the caller leaves.
    for (let i = 0; i < 200 && (await app.deps.sandbox.stats()).scheduler.nested === 0; i++) await new Promise((r) => setTimeout(r, 25))
    caller.abort()
    const body = (await (await pending).json()) as { content: unknown }
    expect(body.content).toMatchObject({ error: 'TIMEOUT', message: expect.stringMatching(/cancelled/) })
    const stats = await settled(app, BASE_WORKERS)
    expect(stats.scheduler).toEqual({ running: 0, nested: 0, queued: 0 })
  }, 30_000)
})
