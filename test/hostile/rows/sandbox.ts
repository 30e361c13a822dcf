/**
 * Issue 10 F2, F5, F6, F10 on `npm start` (worker isolation), measured by the hostile harness: a
 * bystander tenant's `whoami` latency and the app's RSS while the rows run. The sandbox's own
 * counts (idle pool, retired engines) are asserted in test/hostile/sandbox-*.test.ts, in process;
 * here every assertion is an outcome seen over HTTP.
 */
import assert from 'node:assert/strict'
import type { HostileApp, HostileRowSet } from '../harness'

const YAML = { 'content-type': 'application/yaml' }

async function js(app: HostileApp, tenant: string, code: string, timeoutMs?: number, signal?: AbortSignal) {
  const res = await fetch(`${app.base}/brain/${tenant}/projects/p1/tools/execute_javascript/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await app.token(tenant)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ params: { code, ...(timeoutMs ? { timeoutMs } : {}) } }),
    signal: signal ?? AbortSignal.timeout(120_000),
  })
  return { status: res.status, body: (await res.json()) as { isError: boolean; content: Record<string, unknown> } }
}

/** Stalls its worker past every interrupt poll (a backtrace per caught stack overflow) until the watchdog or a cancel. */
const STALL = 'function f() { try { f() } catch (e) { f() } } f()'
const ISSUE_REPRO = 'var a=[]; for(var i=0;i<400;i++) a.push(new Array(1e5).fill(i)); a.length'

export const rowSet: HostileRowSet = {
  name: 'hostile scripts',
  env: { SANDBOX_ISOLATION: 'worker' },
  async warmUp(app) {
    // The base workers and both builds loaded, as on a server that has served scripts.
    await Promise.all(['w1', 'w2', 'w3', 'w4'].map((t) => js(app, t, 'typeof vance; 1 + 1')))
  },
  rows: [
    {
      name: "F2: the issue's 400 arrays of 100,000 numbers end in RESOURCE_EXHAUSTED, four tenants at once",
      async run(app) {
        const results = await Promise.all(['m1', 'm2', 'm3', 'm4'].map((t) => js(app, t, ISSUE_REPRO, 30_000)))
        for (const r of results)
          assert.deepEqual(r, {
            status: 200,
            body: { isError: true, content: { error: 'RESOURCE_EXHAUSTED', message: 'the script ran out of memory (limit 32 MiB)' } },
          })
      },
    },
    {
      name: 'F2 variant: strings and ArrayBuffers held on the asyncify build end at the ceiling',
      async run(app) {
        for (const code of [
          'typeof vance; var a=[]; for(var i=0;;i++) a.push("x".repeat(1e6) + i)',
          'typeof vance; var a=[]; for(;;) a.push(new ArrayBuffer(1 << 20))',
        ]) {
          const r = await js(app, 'm1', code, 30_000)
          assert.equal(r.body.content.error, 'RESOURCE_EXHAUSTED', JSON.stringify(r.body))
        }
      },
    },
    {
      name: "F6: t1's endless promise chain ends in t1's own run; t2's next runs on every worker are unaffected",
      async run(app) {
        const t1 = await js(app, 't1', 'function f() { return Promise.resolve().then(f) } f(); 1', 1000)
        assert.match(String(t1.body.content.error), /^(TIMEOUT|RESOURCE_EXHAUSTED)$/)
        const t2 = await Promise.all([0, 1, 2, 3].map(() => js(app, 't2', 'var n = 0; for (var i = 0; i < 100000; i++) n += 1; n')))
        for (const r of t2) assert.deepEqual(r.body, { isError: false, content: { value: 100000, durationMs: r.body.content.durationMs } })
      },
    },
    {
      name: "F5: t2's 1 + 1 answers while t1's four scripts stall for their 30 s timeout (two running, two waiting)",
      async run(app) {
        const caller = new AbortController()
        const stalled = [0, 1, 2, 3].map(() => js(app, 't1', STALL, 30_000, caller.signal).catch((e: Error) => e))
        try {
          await new Promise((r) => setTimeout(r, 1000))
          const started = performance.now()
          const t2 = await js(app, 't2', '1 + 1')
          console.log(
            `[hostile scripts] F5: t2's 1 + 1 answered in ${Math.round(performance.now() - started)} ms beside t1's stalled scripts`,
          )
          assert.deepEqual(t2.body, { isError: false, content: { value: 2, durationMs: t2.body.content.durationMs } })
        } finally {
          caller.abort() // t1 goes away: its runs are cancelled, the stalled workers terminated after 150 ms
          await Promise.all(stalled)
        }
        const after = await js(app, 't3', '2 + 2')
        assert.equal(after.body.content.value, 4)
      },
    },
    {
      name: 'F10: a tool calling itself 32 times per level to depth 4 times out, and the pool serves others at once',
      async run(app) {
        const tool = `type: scripted\ndescription: Fan out.\nparameters:\n  timeoutMs: 2000\n  inputs: []\n  source: ${JSON.stringify('var n = 0; for (var i = 0; i < 32; i++) { try { vance.tools.call("fan", {}); n++ } catch (e) {} } n')}\n`
        const put = await app.call('f1', 'PUT', '/projects/p1/server-tools/fan', tool, YAML)
        assert.ok(put.status === 201 || put.status === 200, `PUT fan: ${put.status}`)
        const res = await app.call('f1', 'POST', '/projects/p1/tools/fan/invoke', { params: {} })
        const body = (await res.json()) as { isError: boolean; content: { error?: string } }
        assert.equal(body.content.error, 'TIMEOUT', JSON.stringify(body))
        const others = await Promise.all(['o1', 'o2', 'o3', 'o4'].map((t) => js(app, t, '1 + 1')))
        for (const r of others) assert.equal(r.body.content.value, 2)
      },
    },
  ],
}
