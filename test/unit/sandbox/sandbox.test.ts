import { describe, expect, it } from 'vitest'
import { success, toolError } from '../../../lib/calls/outcome'
import { QuickJsSandbox } from '../../../lib/sandbox'
import { echo, FakeSiblings, never, ok } from './fakes'

const sandbox = new QuickJsSandbox()
const siblings = () =>
  new FakeSiblings({
    echo,
    jira_get_issue: (p) => success({ id: p.id, summary: `Summary of ${p.id}`, status: 'open' }),
    fail: () => toolError('the upstream said no'),
    hang: never,
    deep: () => {
      let v: unknown = 1
      for (let i = 0; i < 80; i++) v = [v]
      return success(v)
    },
  })

describe('a run and its result', () => {
  it('binds inputs as top-level variables and returns the value of the last expression', async () => {
    const r = await sandbox.run({ source: 'a + b', inputs: { a: 5, b: 7 } })
    expect(r).toEqual({ value: 12, durationMs: expect.any(Number) })
  })

  it('binds objects and arrays as JSON values and a null input as null', async () => {
    const r = await sandbox.run({
      source: '[o.x[1], o.y.z, list.length, n === null, typeof s]',
      inputs: { o: { x: [1, 2], y: { z: 'deep' } }, list: [1, 2, 3], n: null, s: 'text' },
    })
    expect(ok(r)).toEqual([2, 'deep', 3, true, 'string'])
  })

  it('returns null for undefined, functions and symbols, which JSON cannot carry', async () => {
    for (const source of ['undefined', 'let x = 1', '(function () {})', 'Symbol("s")', 'NaN'])
      expect(ok(await sandbox.run({ source }))).toBeNull()
  })

  it('returns objects as their JSON form, dropping what JSON drops', async () => {
    const r = await sandbox.run({ source: '({ when: new Date(0), f() {}, u: undefined, list: [1, undefined], nested: { ok: true } })' })
    expect(ok(r)).toEqual({ when: '1970-01-01T00:00:00.000Z', list: [1, null], nested: { ok: true } })
  })

  it('refuses a BigInt result as not JSON', async () => {
    expect(await sandbox.run({ source: '10n ** 20n' })).toEqual({ error: 'GUEST_EXCEPTION', message: expect.stringMatching(/BigInt/) })
    expect(await sandbox.run({ source: '({ n: 1n })' })).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/^the result is not JSON: .*BigInt/),
    })
  })

  it('settles a returned promise', async () => {
    expect(ok(await sandbox.run({ source: 'Promise.resolve(41).then((x) => x + 1)' }))).toBe(42)
    expect(ok(await sandbox.run({ source: '(async () => { await null; return "later" })()' }))).toBe('later')
  })

  it('settles top-level await and keeps the value of the last expression', async () => {
    expect(ok(await sandbox.run({ source: 'const x = await Promise.resolve(2)\nx * 3' }))).toBe(6)
  })

  it('reports a rejected promise as a guest exception', async () => {
    expect(await sandbox.run({ source: 'Promise.reject(new RangeError("nope"))' })).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/^RangeError: nope \(line 1, column \d+\)$/),
    })
  })

  it('reports a syntax error with its line and column', async () => {
    const r = await sandbox.run({ source: 'const a = 1\nconst = 2', filename: 'scripts/x.js' })
    expect(r).toEqual({ error: 'GUEST_EXCEPTION', message: expect.stringMatching(/^SyntaxError: .*\(line 2, column \d+\)$/) })
  })

  it('reports a thrown error with its name, message and line', async () => {
    expect(await sandbox.run({ source: '\n\nthrow new TypeError("bad input")' })).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/^TypeError: bad input \(line 3, column \d+\)$/),
    })
    expect(await sandbox.run({ source: 'throw 42' })).toEqual({ error: 'GUEST_EXCEPTION', message: 'the script threw 42' })
  })

  it('clips a very long error message', async () => {
    const r = await sandbox.run({ source: 'throw new Error("x".repeat(100000))' })
    expect(r).toMatchObject({ error: 'GUEST_EXCEPTION' })
    expect((r as { message: string }).message.length).toBeLessThanOrEqual(2001)
  })

  it('rejects a timeout outside 1 to 30000 ms before running anything', async () => {
    await expect(sandbox.run({ source: '1', timeoutMs: 0 })).rejects.toThrow(/timeoutMs/)
    await expect(sandbox.run({ source: '1', timeoutMs: 30_001 })).rejects.toThrow(/timeoutMs/)
    await expect(sandbox.run({ source: '1', timeoutMs: 1.5 })).rejects.toThrow(/timeoutMs/)
  })
})

describe('limits', () => {
  it('ends a script that never stops when its statement budget is spent', async () => {
    expect(await sandbox.run({ source: 'for (;;) {}' })).toEqual({
      error: 'RESOURCE_EXHAUSTED',
      message: 'the script used up its statement budget (about 1,000,000 statements)',
    })
  })

  it('lets a finite script finish under a larger statement budget that the default budget stops', async () => {
    const source = 'let n = 0; for (let i = 0; i < 3000000; i++) n++; n'
    expect(await sandbox.run({ source })).toMatchObject({ error: 'RESOURCE_EXHAUSTED' })
    const generous = new QuickJsSandbox({ maxStatements: 10_000_000 })
    expect(ok(await generous.run({ source, timeoutMs: 30_000 }))).toBe(3_000_000)
  })

  it('ends a script that outlives its wall-clock timeout', async () => {
    const unmetered = new QuickJsSandbox({ maxStatements: 1e12 })
    expect(await unmetered.run({ source: 'for (;;) {}', timeoutMs: 50 })).toEqual({
      error: 'TIMEOUT',
      message: 'the script did not finish within its 50 ms timeout',
    })
  })

  it('applies the memory limit given at construction', async () => {
    const small = new QuickJsSandbox({ memoryBytes: 8 * 1024 * 1024 })
    const source = 'new Uint8Array(16 * 1024 * 1024).length'
    expect(await small.run({ source })).toEqual({ error: 'RESOURCE_EXHAUSTED', message: 'the script ran out of memory (limit 8 MiB)' })
    expect(ok(await sandbox.run({ source }))).toBe(16 * 1024 * 1024)
  })

  it('refuses a stack limit above 256 KiB and other nonsense limits at construction', () => {
    expect(() => new QuickJsSandbox({ stackBytes: 512 * 1024 })).toThrow(/stackBytes/)
    expect(() => new QuickJsSandbox({ memoryBytes: -1 })).toThrow(/memoryBytes/)
    expect(() => new QuickJsSandbox({ asyncEngines: 0 })).toThrow(/asyncEngines/)
  })

  it('reports deep recursion as an exhausted stack', async () => {
    expect(await sandbox.run({ source: 'function down(n) { return down(n + 1) + 1 } down(0)' })).toEqual({
      error: 'RESOURCE_EXHAUSTED',
      message: 'the script overflowed its stack (limit 256 KiB): recursion too deep',
    })
  })

  it('accepts a result of up to 1 MiB of JSON and refuses a larger one', async () => {
    // JSON of a string of n ASCII letters is n + 2 bytes.
    expect(ok<string>(await sandbox.run({ source: `"x".repeat(${1024 * 1024 - 2})` })).length).toBe(1024 * 1024 - 2)
    expect(await sandbox.run({ source: `"x".repeat(${1024 * 1024 - 1})` })).toEqual({
      error: 'RESOURCE_EXHAUSTED',
      message: 'the result is 1,048,577 bytes of JSON; the limit is 1,048,576 (1 MiB)',
    })
    expect(await sandbox.run({ source: `"é".repeat(600 * 1024)` })).toMatchObject({ error: 'RESOURCE_EXHAUSTED' })
  })

  it('accepts a result nested 64 deep and refuses 65', async () => {
    const nest = (n: number) => `let v = 1; for (let i = 0; i < ${n}; i++) v = [v]; v`
    expect(ok(await sandbox.run({ source: nest(64) }))).toBeInstanceOf(Array)
    expect(await sandbox.run({ source: nest(65) })).toEqual({
      error: 'RESOURCE_EXHAUSTED',
      message: 'the result nests deeper than 64 levels',
    })
  })

  it('hands every run a fresh context with nothing left by the one before', async () => {
    await sandbox.run({ source: 'globalThis.leak = "secret"; Object.prototype.polluted = true; Array.prototype.join = () => "hacked"; 1' })
    expect(ok(await sandbox.run({ source: '[typeof leak, ({}).polluted === undefined, [1, 2].join("-")]' }))).toEqual([
      'undefined',
      true,
      '1-2',
    ])
  })
})

describe('the vance host API', () => {
  it('calls a sibling synchronously and hands the script its content', async () => {
    const fake = siblings()
    const r = await sandbox.run({
      source: 'const issue = vance.tools.call("jira_get_issue", { id: ticket });\n({ summary: issue.summary, status: issue.status })',
      inputs: { ticket: 'ABC-123' },
      host: fake.host(),
    })
    expect(ok(r)).toEqual({ summary: 'Summary of ABC-123', status: 'open' })
    expect(fake.calls).toEqual([{ name: 'jira_get_issue', params: { id: 'ABC-123' }, depth: 1 }])
  })

  it('passes params to the sibling as a JSON copy', async () => {
    const fake = siblings()
    await sandbox.run({ source: 'vance.tools.call("echo", { when: new Date(0), skip: undefined, list: [1, () => 1] })', host: fake.host() })
    expect(fake.calls[0].params).toEqual({ when: '1970-01-01T00:00:00.000Z', list: [1, null] })
    await sandbox.run({ source: 'vance.tools.call("echo")', host: fake.host() })
    expect(fake.calls[1].params).toEqual({})
  })

  it('refuses params that are not an object and a name that is not a string', async () => {
    const fake = siblings()
    expect(await sandbox.run({ source: 'vance.tools.call("echo", [1, 2])', host: fake.host() })).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/^TypeError: vance.tools.call\('echo'\): params must be an object/),
    })
    expect(await sandbox.run({ source: 'vance.tools.call(42, {})', host: fake.host() })).toMatchObject({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/name must be a non-empty string/),
    })
    expect(fake.calls).toEqual([])
  })

  it("throws a failing sibling into the script as an Error with the sibling's message", async () => {
    const r = await sandbox.run({
      source: 'try { vance.tools.call("fail", {}) } catch (e) { [e instanceof Error, e.message] }',
      host: siblings().host(),
    })
    expect(ok(r)).toEqual([true, 'the upstream said no'])
  })

  it('reports an uncaught sibling failure as HOST_EXCEPTION with the sibling message', async () => {
    expect(await sandbox.run({ source: 'vance.tools.call("fail", {}); "unreached"', host: siblings().host() })).toEqual({
      error: 'HOST_EXCEPTION',
      message: 'the upstream said no',
    })
    expect(await sandbox.run({ source: 'try { vance.tools.call("fail", {}) } catch (e) { throw e }', host: siblings().host() })).toEqual({
      error: 'HOST_EXCEPTION',
      message: 'the upstream said no',
    })
  })

  it('reports a new error thrown after catching a sibling failure as GUEST_EXCEPTION', async () => {
    const r = await sandbox.run({
      source: 'try { vance.tools.call("fail", {}) } catch (e) { throw new Error("wrapped: " + e.message) }',
      host: siblings().host(),
    })
    expect(r).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(/^Error: wrapped: the upstream said no \(line 1, column \d+\)$/),
    })
  })

  it('lists and checks siblings and exposes the invocation context', async () => {
    const r = await sandbox.run({
      source: '[vance.tools.list(), vance.tools.has("echo"), vance.tools.has("nope"), vance.context]',
      host: siblings().host(),
    })
    expect(ok(r)).toEqual([
      ['deep', 'echo', 'fail', 'hang', 'jira_get_issue'],
      true,
      false,
      { tenant: 'acme', project: 'p1', processId: 'proc-1' },
    ])
  })

  it('freezes vance so a script cannot rewire it', async () => {
    const r = await sandbox.run({ source: '"use strict"; vance.tools.call = () => 1', host: siblings().host() })
    expect(r).toMatchObject({ error: 'GUEST_EXCEPTION', message: expect.stringMatching(/^TypeError/) })
  })

  it('lets vance.tools.call be awaited, also after an earlier await', async () => {
    const fake = siblings()
    const r = await sandbox.run({
      source:
        'const a = await vance.tools.call("echo", { n: 1 });\nconst b = await vance.tools.call("echo", { n: a.n + 1 });\nconst c = await (async () => { await null; return vance.tools.call("echo", { n: b.n + 1 }) })();\n[a.n, b.n, c.n]',
      host: fake.host(),
    })
    expect(ok(r)).toEqual([1, 2, 3])
    expect(fake.calls.map((c) => c.params)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
  })

  it('fails loudly when a call made after an await is used without await', async () => {
    const r = await sandbox.run({
      source: 'await null\nconst issue = vance.tools.call("echo", { id: 1 })\nissue.id',
      host: siblings().host(),
    })
    expect(r).toEqual({
      error: 'GUEST_EXCEPTION',
      message: expect.stringMatching(
        /vance.tools.call\(\) was called after an await, so it returned a Promise: write await vance.tools.call/,
      ),
    })
  })

  it('refuses the 33rd sibling call of one run', async () => {
    const fake = siblings()
    const r = await sandbox.run({ source: 'for (let i = 0; i < 40; i++) vance.tools.call("echo", { i })', host: fake.host() })
    expect(r).toEqual({ error: 'RESOURCE_EXHAUSTED', message: "sibling call to 'echo' refused: a run may make at most 32 sibling calls" })
    expect(fake.calls).toHaveLength(32)
  })

  it('refuses a sibling call that would nest deeper than 4, without calling the sibling', async () => {
    const fake = siblings()
    const r = await sandbox.run({ source: 'vance.tools.call("echo", {})', host: fake.host(4) })
    expect(r).toEqual({
      error: 'HOST_EXCEPTION',
      message: "sibling call to 'echo' refused: tools are already nested 4 deep, the most allowed is 4",
    })
    expect(fake.calls).toEqual([])
  })

  it('answers TIMEOUT when a sibling outlives the deadline, even if the script catches the failure', async () => {
    expect(await sandbox.run({ source: 'vance.tools.call("hang", {})', host: siblings().host(), timeoutMs: 50 })).toEqual({
      error: 'TIMEOUT',
      message: 'the script did not finish within its 50 ms timeout',
    })
    expect(
      await sandbox.run({ source: 'try { vance.tools.call("hang", {}) } catch {} "done"', host: siblings().host(), timeoutMs: 50 }),
    ).toMatchObject({ error: 'TIMEOUT' })
    expect(
      await sandbox.run({
        source: 'await vance.tools.call("echo", {}); await vance.tools.call("hang", {})',
        host: siblings().host(),
        timeoutMs: 50,
      }),
    ).toMatchObject({ error: 'TIMEOUT' })
  })

  it('refuses a sibling result nested deeper than 64 levels', async () => {
    expect(await sandbox.run({ source: 'vance.tools.call("deep", {})', host: siblings().host() })).toEqual({
      error: 'HOST_EXCEPTION',
      message: "the result of 'deep' nests deeper than 64 levels",
    })
  })

  it('answers every vance.tools.call with a clear failure when no siblings are wired', async () => {
    expect(await sandbox.run({ source: 'vance.tools.call("echo", {})' })).toEqual({
      error: 'HOST_EXCEPTION',
      message: "no tool 'echo' is callable from here",
    })
  })
})

describe('engines', () => {
  it('loads WebAssembly only when the first script runs', async () => {
    const lazy = new QuickJsSandbox()
    expect((await lazy.stats()).engines).toEqual([])
    await lazy.run({ source: '1' })
    expect((await lazy.stats()).engines.map((e) => e.kind)).toEqual(['sync'])
  })

  it('runs a script that never mentions vance on the sync build and one that does on an async engine', async () => {
    const own = new QuickJsSandbox()
    await own.run({ source: 'a + b', inputs: { a: 1, b: 2 } })
    await own.run({ source: 'vance.context.tenant', host: siblings().host() })
    const runs = Object.fromEntries((await own.stats()).engines.map((e) => [e.kind, e.runs]))
    expect(runs).toEqual({ sync: 1, async: 1 })
  })

  it('redoes a run on an async engine when a script reaches vance without naming it', async () => {
    const own = new QuickJsSandbox()
    const fake = siblings()
    const r = await own.run({ source: 'const v = globalThis["va" + "nce"]; v.tools.call("echo", { x: 1 }).x', host: fake.host() })
    expect(ok(r)).toBe(1)
    expect(fake.calls).toHaveLength(1)
    const runs = Object.fromEntries((await own.stats()).engines.map((e) => [e.kind, e.runs]))
    expect(runs).toEqual({ sync: 1, async: 1 })
  })

  it('queues runs beyond its async engines and runs them all', async () => {
    const own = new QuickJsSandbox({ asyncEngines: 2 })
    const fake = new FakeSiblings({
      slow: async (p) => {
        await new Promise((r) => setTimeout(r, 5))
        return success(p)
      },
    })
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => own.run({ source: `vance.tools.call("slow", { i: ${i} }).i`, host: fake.host() })),
    )
    expect(results.map((r) => ok(r))).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    expect((await own.stats()).engines.filter((e) => e.kind === 'async')).toHaveLength(2)
  })
})
