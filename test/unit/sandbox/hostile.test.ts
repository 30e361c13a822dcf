import { describe, expect, it } from 'vitest'
import { success, toolError } from '../../../lib/calls/outcome'
import { createSandbox, QuickJsSandbox, type SandboxIsolation, type SandboxResult } from '../../../lib/sandbox'
import type { ScriptSandbox } from '../../../lib/tools/types/scripted'
import { HOSTILE_SCRIPTS, type HostileScript } from '../../fixtures/hostile-scripts/corpus'
import { echo, FakeSiblings, never, ok } from './fakes'

// One tenant runs up to 50 scripts at once here: its queue is made room for (fairness has tests of its own).
const sandboxesFor = (isolation: SandboxIsolation) => ({
  default: createSandbox(isolation, { tenantQueue: 64 }),
  unmetered: createSandbox(isolation, { maxStatements: 1e12 }),
  shallow: createSandbox(isolation, { maxStatements: 1e12, stackBytes: 32 * 1024 }),
})
const bySandbox = { worker: sandboxesFor('worker'), inline: sandboxesFor('inline') }
const sandboxes = bySandbox.worker

function siblingsFor(script: HostileScript, sandbox: ScriptSandbox): FakeSiblings {
  const fake: FakeSiblings = new FakeSiblings({
    echo,
    hang: never,
    fail: () => toolError('the upstream refused'),
    // The calling script again, one level deeper — what a scripted tool calling itself amounts to.
    self: async (_params, depth) => {
      const r = await sandbox.run({ source: script.source, host: fake.host(depth), timeoutMs: 5000 })
      return 'error' in r ? { isError: true, content: { error: r.error, message: r.message } } : success(r.value)
    },
  })
  return fake
}

/** A run that must come out clean after any hostile one: no state, no tampering, both builds working. */
const PROBE =
  '[typeof polluted, typeof leak, JSON.stringify({ a: 1 }), [1, 2].map((x) => x * 2).join(), typeof Object.prototype.toJSON, a + b]'
const CLEAN = ['undefined', 'undefined', '{"a":1}', '2,4', 'undefined', 12]

async function expectClean(sandbox: ScriptSandbox) {
  expect(ok(await sandbox.run({ source: PROBE, inputs: { a: 5, b: 7 } }))).toEqual(CLEAN)
  const viaVance = await sandbox.run({
    source: `[vance.tools.call("echo", { n: 1 }).n, ${PROBE}]`,
    inputs: { a: 5, b: 7 },
    host: new FakeSiblings({ echo }).host(),
  })
  expect(ok(viaVance)).toEqual([1, CLEAN])
}

describe('the hostile-script corpus', () => {
  it('holds at least 30 scripts', () => {
    expect(HOSTILE_SCRIPTS.length).toBeGreaterThanOrEqual(30)
  })

  for (const script of HOSTILE_SCRIPTS)
    for (const isolation of ['worker', 'inline'] as const) {
      it(`ends ${script.name} in ${script.expected.error} and keeps answering (${isolation})`, async () => {
        const own = bySandbox[isolation]
        const sandbox = isolation === 'inline' && script.inlineStackBytes ? own.shallow : own[script.sandbox ?? 'default']
        const result: SandboxResult = await sandbox.run({
          source: script.source,
          inputs: script.inputs,
          timeoutMs: script.timeoutMs ?? 5000,
          host: siblingsFor(script, sandbox).host(),
        })
        expect(result).toEqual({ error: script.expected.error, message: expect.stringMatching(script.expected.message) })
        await expectClean(sandbox)
      })
    }

  it('keeps 50 concurrent invocations apart: no run sees another run’s state', async () => {
    const sandbox = sandboxes.default
    const fake = new FakeSiblings({
      echo: async (p) => {
        await new Promise((r) => setTimeout(r, Number(p.wait)))
        return success(p)
      },
    })
    const source = (i: number, withSibling: boolean) => `
      const before = [typeof globalThis.mine, Object.prototype.owner === undefined, typeof shared]
      globalThis.mine = ${i}
      Object.prototype.owner = ${i}
      var shared = (typeof shared === "number" ? shared : 0) + 1
      ${withSibling ? `const echoed = vance.tools.call("echo", { i: ${i}, wait: ${i % 7} }).i;` : `const echoed = ${i};`}
      ({ before, after: [globalThis.mine, ({}).owner, shared, echoed, id] })`
    const runs = Array.from({ length: 50 }, (_, i) =>
      sandbox.run({ source: source(i, i % 2 === 0), inputs: { id: `run-${i}` }, host: fake.host() }),
    )
    const results = await Promise.all(runs)
    results.forEach((r, i) => expect(ok(r)).toEqual({ before: ['undefined', true, 'undefined'], after: [i, i, 1, i, `run-${i}`] }))
    expect(fake.calls).toHaveLength(25)
    await expectClean(sandbox)
  })

  it('meters every one of many concurrent sync-build runs by its own budget', async () => {
    const sandbox = new QuickJsSandbox()
    const hostile = '({ toJSON() { for (;;) {} } })'
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => sandbox.run({ source: i % 2 ? hostile : 'Promise.resolve(a + b)', inputs: { a: i, b: 1 } })),
    )
    results.forEach((r, i) =>
      expect(r).toEqual(
        i % 2
          ? { error: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(/statement budget/) }
          : { value: i + 1, durationMs: expect.any(Number) },
      ),
    )
  })

  it('terminates the worker of a run that holds its thread past the deadline, while another run completes', async () => {
    // Catching its own stack overflow keeps QuickJS building backtraces between interrupt polls:
    // only the watchdog (worker terminated at deadline + grace) ends it. No wall-clock assertion here.
    const sandbox = new QuickJsSandbox({ maxStatements: 1e12, asyncEngines: 2 })
    const hostile = sandbox.run({ source: 'function f() { try { f() } catch (e) { f() } }\nf()', timeoutMs: 300 })
    const trivial = sandbox.run({ source: 'a + b', inputs: { a: 1, b: 2 } })
    const withSibling = sandbox.run({ source: 'vance.tools.call("echo", { n: 3 }).n', host: new FakeSiblings({ echo }).host() })
    expect(await hostile).toEqual({ error: 'TIMEOUT', message: 'the script did not finish within its 300 ms timeout' })
    expect(ok(await trivial)).toBe(3)
    expect(ok(await withSibling)).toBe(3)
    expect((await sandbox.stats()).enginesReplaced).toBeGreaterThanOrEqual(1)
    await expectClean(sandbox)
  })

  it('replaces an engine that failed inside WebAssembly and says so in its stats', async () => {
    const sandbox = new QuickJsSandbox()
    const before = (await sandbox.stats()).enginesReplaced
    await sandbox.run({ source: 'JSON.parse("[".repeat(200000) + "]".repeat(200000))' })
    const r = await sandbox.run({ source: 'eval("(".repeat(200000) + "1" + ")".repeat(200000))' })
    expect(r).toMatchObject({ error: 'RESOURCE_EXHAUSTED' })
    expect((await sandbox.stats()).enginesReplaced).toBeGreaterThanOrEqual(before)
    await expectClean(sandbox)
  })
})
