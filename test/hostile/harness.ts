/**
 * The hostile harness (issue 10): runs attacks ("rows") against the real app while another
 * tenant keeps calling `whoami`, and measures what the attack did to everyone else.
 *
 * How to use it (test/hostile/*.test.ts and `npm run bench -- hostile` share it):
 *
 *   // test/hostile/rows/<class>.ts — plain data, no vitest, so the bench can import it too;
 *   // export exactly one `HostileRowSet` named `rowSet` (the bench finds it there)
 *   export const rowSet: HostileRowSet = {
 *     name: 'hostile request bodies',           // also the report's file name
 *     env: { SANDBOX_ISOLATION: 'worker' },      // optional: extra environment for the app
 *     warmUp: async (app) => { … },              // optional: before the RSS baseline (e.g. load WASM)
 *     rows: [{
 *       name: 'a 520 KB unbalanced JSON body is a 400 at once',
 *       async run(app) {                         // assert with node:assert/strict (works in both)
 *         const res = await app.call('mallory', 'POST', '/projects/p1/tools/whoami/invoke', '[a'.repeat(1000))
 *         assert.equal(res.status, 400)
 *       },
 *     }],
 *   }
 *   // test/hostile/<class>.test.ts
 *   import { rowSet } from './rows/<class>'
 *   import { hostileSuite } from './suite'
 *   hostileSuite(rowSet)
 *
 * `hostileSuite` (suite.ts) starts ONE app per file: `functions/local.ts` — what `npm start` runs:
 * worker isolation, embedded dynalite + s3rver on a fresh DATA_DIR, 127.0.0.1, a free port — as a
 * child process, so a stall or a crash in the app never takes the measuring side with it. For each
 * row a bystander tenant ('bystander', project p1) calls `whoami` back to back while the row runs,
 * from a worker thread of the harness (bystander.mjs): the row's own requests are sent and read on
 * the harness's event loop, and a bystander beside them would time that client work as the app's.
 *
 * What a test ASSERTS (never a timing — machines are noisy): every bystander call answered 200,
 * the app process is still alive and answers afterwards, and the app's RSS after the whole suite
 * (after a GC) is within 100 MB of its RSS before. What it only REPORTS: bystander p50/p99/max
 * latency, the app's own event-loop delay max (perf_hooks.monitorEventLoopDelay, read through the
 * preloaded probe.mjs), RSS per row. Every figure is written to test-results/hostile/<suite>.json
 * (git-ignored). `npm run bench -- hostile` runs the same rows and checks the goals there: p99
 * under 200 ms, RSS delta under 100 MB, loop delay against the ~50 ms budget.
 *
 * Tokens: the app runs with a fixed AUTH_JWT_SECRET; `app.token(tenant, scope?)` mints any tenant's
 * token (all scopes by default), `app.call(tenant, method, path, body?, headers?)` sends a request
 * under /brain/<tenant> with it (a string body is sent as is, anything else as JSON).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { issueToken, ALL_SCOPES as SCOPES } from '../../functions/http/auth'
import { type Client, fetchClient, type Look, nodeHttpClient, rawScanClient, type Scan, scanOver } from './http-client'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SECRET = 'hostile-harness-secret'
const ALL_SCOPES = SCOPES.join(' ')
export const BYSTANDER = 'bystander'
/** Goals of issue 10, checked by the bench and printed by the tests. */
export const GOALS = { bystanderP99Ms: 200, rssDeltaMb: 100, loopBlockMs: 50 }

export interface HostileRow {
  name: string
  /** The attack and its own non-timing assertions (node:assert). */
  run(app: HostileApp): Promise<void>
}

/** One class of attacks, run against one app (one per test file, one per bench section). */
export interface HostileRowSet {
  name: string
  rows: HostileRow[]
  /** Extra environment for the app. */
  env?: Record<string, string>
  /** Runs after the bystander warm-up and before the RSS baseline. */
  warmUp?: (app: HostileApp) => Promise<void>
  /** Per-row test timeout (default 120 s); rows that hold finish in seconds. */
  timeoutMs?: number
}

/**
 * One attack class of `npm run bench -- hostile` (bench/hostile.ts): a request a tenant sends
 * again and again, on a few connections at once, while a victim tenant's calls are timed. List a
 * new class in test/hostile/attacks.ts (one entry each).
 */
export interface AttackClass {
  /** Finding and shape, e.g. 'N8 recursive anyOf × 60-deep value'. */
  name: string
  /** Once per bench run, before the flood (e.g. create the process the flood calls); its result is handed to `once`. */
  prepare?(app: HostileApp, tenant: string): Promise<unknown>
  /** One attack request; throws when the app did not answer it as it should (refused, or an ordinary answer). */
  once(app: HostileApp, tenant: string, prepared: unknown): Promise<void>
  /** Connections flooding at once (default 2). */
  connections?: number
}

export interface ProbeSample {
  rssMb: number
  heapUsedMb: number
  loopMaxMs: number
  loopP99Ms: number
  /** CPU time the app process has used since it started (user + system), in ms. */
  cpuMs: number
  /** Time the app's event loop has been busy since it started, in ms. */
  loopBusyMs: number
  /** CPU time of the app's main thread — the one serving requests — since it started, in ms (10 ms ticks; NaN without /proc). */
  mainCpuMs: number
  /** Garbage collections of the main thread since it started (minor: scavenges; major: mark-compacts) and their pauses; `maxPauseMs` since the last reset. */
  gc: { minor: number; major: number; pauseMs: number; maxPauseMs: number }
  /** The main thread's schedstat since it started, in ms: on a CPU, and runnable but waiting for one. */
  main: ThreadSched
  /** The same summed over the app's other threads. */
  others: ThreadSched
  /** With `trace` at start: the traced requests answered and the main thread's GC pauses since the last reset (see probe.mjs). */
  requests?: TracedRequest[]
  pauses?: { startMs: number; ms: number }[]
}

export interface ThreadSched {
  runMs: number
  waitMs: number
}

/**
 * One request traced in the app, on the machine's monotonic clock in ms (`process.hrtime`): from its
 * arrival (headers parsed) to its last byte handed to the socket, and the main thread's time on a
 * CPU and waiting on a run queue between the two.
 */
export interface TracedRequest {
  startMs: number
  endMs: number
  runMs: number
  waitMs: number
}

export interface HostileApp {
  readonly base: string
  readonly pid: number
  /** A token for `tenant` (all scopes by default), for subject `<tenant>@hostile.test` unless `sub` names another. */
  token(tenant: string, scope?: string, sub?: string): Promise<string>
  call(tenant: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>
  /** A request to any URL through the app's client (`startApp`'s `client`): `call` without the token and path. */
  fetch: Client
  /** `call`, its answer's body handed to `look` piece by piece and kept by nobody; resolves to the status (see `Scan`). */
  stream(tenant: string, method: string, path: string, look: Look, body?: unknown, headers?: Record<string, string>): Promise<number>
  /** `fetch` in the same way: with the bench's client, an answer of any size allocates nothing as it arrives. */
  scan: Scan
  /** Memory and event-loop delay as the app sees them; `reset` starts a new delay window. */
  sample(opts?: { gc?: boolean; reset?: boolean }): Promise<ProbeSample>
  alive(): boolean
  /** What the app printed (stdout + stderr), for failure messages. */
  output(): string
  stop(): Promise<void>
}

export interface BystanderFigures {
  calls: number
  failures: string[]
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export interface RowReport {
  name: string
  durationMs: number
  bystander: BystanderFigures
  loopMaxMs: number
  rssBeforeMb: number
  rssAfterMb: number
  alive: boolean
  error?: string
}

export interface SuiteReport {
  suite: string
  rssBaselineMb: number
  rssAfterMb: number
  rows: RowReport[]
}

const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10

/** Starts `functions/local.ts` (what `npm start` runs) as a child with the probe preloaded. */
export async function startApp(
  opts: {
    env?: Record<string, string>
    label?: string
    /** Extra node flags for the app, e.g. `--cpu-prof` (which NODE_OPTIONS does not take). */
    nodeArgs?: string[]
    /** Traces the requests whose URL contains this (probe.mjs): `sample()` then returns them. */
    trace?: string
    /** What `call` and `fetch` send with: the global `fetch` (default), or kept-alive `node:http` (./http-client.ts, the bench's attack client). */
    client?: 'fetch' | 'node-http'
  } = {},
): Promise<HostileApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-hostile-'))
  const child: ChildProcess = spawn(
    process.execPath,
    ['--expose-gc', ...(opts.nodeArgs ?? []), '--import', 'tsx', '--import', './test/hostile/probe.mjs', 'functions/local.ts'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        AUTH_JWT_SECRET: SECRET,
        LOG_LEVEL: 'error',
        HOSTILE_TRACE: opts.trace ?? '',
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  )
  let out = ''
  const keep = (d: Buffer) => {
    out += d
    if (out.length > 200_000) out = out.slice(-100_000)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  const exited = new Promise<void>((r) => child.once('exit', () => r()))

  const deadline = Date.now() + 30_000
  while (!/export ST_URL=(\S+)/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error(`the app did not come up:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  const base = /export ST_URL=(http:\/\/[^/\s]+)/.exec(out)![1]

  const pending = new Map<number, (s: ProbeSample) => void>()
  let nextProbe = 1
  child.on(
    'message',
    (m: {
      probe?: number
      rss: number
      heapUsed: number
      loopMaxMs: number
      loopP99Ms: number
      cpuUs: number
      mainCpuMs: number
      loopBusyMs: number
      gc: ProbeSample['gc']
      main: ThreadSched
      others: ThreadSched
      requests?: TracedRequest[]
      pauses?: ProbeSample['pauses']
    }) => {
      const done = m?.probe !== undefined ? pending.get(m.probe) : undefined
      if (!done) return
      pending.delete(m.probe!)
      done({
        rssMb: mb(m.rss),
        heapUsedMb: mb(m.heapUsed),
        loopMaxMs: Math.round(m.loopMaxMs * 10) / 10,
        loopP99Ms: Math.round(m.loopP99Ms * 10) / 10,
        cpuMs: m.cpuUs / 1000,
        loopBusyMs: m.loopBusyMs,
        mainCpuMs: m.mainCpuMs,
        gc: m.gc,
        main: m.main,
        others: m.others,
        requests: m.requests,
        pauses: m.pauses,
      })
    },
  )

  const tokens = new Map<string, Promise<string>>()
  const token = (tenant: string, scope = ALL_SCOPES, sub = `${tenant}@hostile.test`) => {
    const key = `${tenant} ${scope} ${sub}`
    if (!tokens.has(key))
      tokens.set(key, issueToken(SECRET, { tenant, sub, scope, expiresInSeconds: 6 * 3600 }, Math.floor(Date.now() / 1000)))
    return tokens.get(key)!
  }

  // A flood sends one body thousands of times: encoding it at each send made ~35–350 MB a second
  // of buffers in the bench (N4's 64 KiB, N1's 200 KB, N8's 530 KB bodies), and the bench's
  // collector then took the shared cores (its helper threads as much CPU an attack as its main
  // thread). A long body is encoded once; the same string object finds its bytes at once.
  const encoded = new Map<string, Buffer>()
  const encodedOnce = (text: string): string | Buffer => {
    if (text.length < 4096) return text
    let bytes = encoded.get(text)
    if (!bytes) {
      if (encoded.size >= 16) encoded.delete(encoded.keys().next().value as string)
      bytes = Buffer.from(text)
      encoded.set(text, bytes)
    }
    return bytes
  }
  const client = opts.client === 'node-http' ? nodeHttpClient() : undefined
  const send: Client = client ?? fetchClient
  const raw = opts.client === 'node-http' ? rawScanClient() : undefined
  const scan: Scan = raw ?? scanOver(send)
  const request = async (tenant: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { authorization: `Bearer ${await token(tenant)}`, ...headers }
    const payload =
      typeof body === 'string' ? encodedOnce(body) : body instanceof Uint8Array || body === undefined ? body : JSON.stringify(body)
    if (payload !== undefined) h['content-type'] ??= 'application/json'
    return { url: `${base}/brain/${tenant}${path}`, init: { method, headers: h, body: payload } }
  }
  const app: HostileApp = {
    base,
    pid: child.pid!,
    token,
    fetch: send,
    scan,
    async call(tenant, method, path, body, headers) {
      const { url, init } = await request(tenant, method, path, body, headers)
      return send(url, init)
    },
    async stream(tenant, method, path, look, body, headers) {
      const { url, init } = await request(tenant, method, path, body, headers)
      return scan(url, init, look)
    },
    sample(o = {}) {
      if (child.exitCode !== null || child.signalCode !== null)
        return Promise.reject(new Error(`the app is dead (${child.exitCode ?? child.signalCode}):\n${out.slice(-4000)}`))
      const id = nextProbe++
      return new Promise<ProbeSample>((res, rej) => {
        const timer = setTimeout(() => {
          pending.delete(id)
          rej(new Error('the app did not answer the probe within 180 s'))
        }, 180_000)
        pending.set(id, (s) => {
          clearTimeout(timer)
          res(s)
        })
        child.send({ probe: id, gc: !!o.gc, reset: !!o.reset })
      })
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    output: () => out,
    async stop() {
      if (app.alive()) {
        child.kill('SIGINT')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }
      client?.close()
      raw?.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
  return app
}

/** A settled RSS: after a GC and a moment for freed pages to go back. */
export async function settledRss(app: HostileApp): Promise<number> {
  await app.sample({ gc: true })
  await new Promise((r) => setTimeout(r, 300))
  return (await app.sample({ gc: true })).rssMb
}

/**
 * Calls whoami as the bystander until `stop` resolves; one call in flight, 5 ms apart — from a
 * worker thread (bystander.mjs), so that what the row's own requests cost this process (800
 * fetches at once, in one row) is not timed as the app's.
 */
async function bystander(app: HostileApp, stop: Promise<void>): Promise<BystanderFigures> {
  const worker = new Worker(new URL('./bystander.mjs', import.meta.url), {
    workerData: { url: `${app.base}/brain/${BYSTANDER}/projects/p1/tools/whoami/invoke`, token: await app.token(BYSTANDER), gapMs: 5 },
  })
  const done = new Promise<{ latencies: number[]; failures: string[] }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  void done.catch(() => {}) // a thread that fails is reported below, once the row is over
  await stop
  worker.postMessage('stop')
  const { latencies, failures } = await done
  await worker.terminate()
  return { calls: latencies.length, failures, ...percentiles(latencies) }
}

export function percentiles(xs: number[]): { p50Ms: number; p99Ms: number; maxMs: number } {
  const s = [...xs].sort((a, b) => a - b)
  const at = (q: number) => (s.length ? Math.round(s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] * 10) / 10 : 0)
  return { p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) }
}

/** Brings the bystander's path up (auth, cascade, built-ins) so the first row is not charged for it. */
export async function warmUp(app: HostileApp): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const res = await app.call(BYSTANDER, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })
    if (res.status !== 200) throw new Error(`warm-up whoami answered ${res.status}: ${await res.text()}`)
  }
  // The YAML parse pool's workers are a fixed cost the app pays once, on the first long body, not
  // growth an attack leaves behind: start every one of them (one parse per tenant at a time, so one
  // tenant per worker) before the baseline is taken, so the RSS goal measures what rows leave.
  const text = `${Array.from({ length: 200 }, (_, i) => `key${i}: a value long enough to pass the inline limit`).join('\n')}\n`
  const writes = ['warm-a', 'warm-b', 'warm-c'].map(async (tenant) => {
    const res = await app.call(tenant, 'PUT', '/projects/p1/documents/notes/warm.yaml', text, { 'content-type': 'application/yaml' })
    if (res.status >= 300) throw new Error(`warm-up YAML write answered ${res.status}: ${await res.text()}`)
  })
  await Promise.all(writes)
  // The MCP SDK is loaded with the first MCP request (never at cold start): 50-100 ms of module
  // evaluation on the main thread, once per process. Loaded here, so the first MCP class's column
  // does not show it as its own stretch (it was the D2-through-MCP column's loop max, ~98 ms).
  const mcp = await fetch(`${app.base}/brain/${BYSTANDER}/projects/p1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await app.token(BYSTANDER)}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  // no session: a 400 from the route once the protocol module is loaded
  if (mcp.status !== 400) throw new Error(`warm-up MCP request answered ${mcp.status}: ${await mcp.text()}`)
  await mcp.text()
}

/** Runs one row with the bystander calling alongside; never throws — the report says what happened. */
export async function runRow(app: HostileApp, row: HostileRow): Promise<RowReport> {
  const before = await app.sample({ reset: true })
  let finish!: () => void
  const stop = new Promise<void>((r) => (finish = r))
  const figures = bystander(app, stop)
  // let the bystander establish a quiet rhythm first, so a stall shows up against it
  await new Promise((r) => setTimeout(r, 100))
  const t0 = performance.now()
  let error: string | undefined
  try {
    await row.run(app)
  } catch (e) {
    error = (e as Error).stack ?? String(e)
  }
  const durationMs = Math.round(performance.now() - t0)
  await new Promise((r) => setTimeout(r, 100))
  finish()
  const bystanderFigures = await figures
  const alive = app.alive()
  const after = alive ? await app.sample({ reset: true }).catch(() => undefined) : undefined
  return {
    name: row.name,
    durationMs,
    bystander: bystanderFigures,
    loopMaxMs: after?.loopMaxMs ?? NaN,
    rssBeforeMb: before.rssMb,
    rssAfterMb: after?.rssMb ?? NaN,
    alive,
    ...(error ? { error } : {}),
  }
}

export function describeRow(r: RowReport): string {
  const goal = (ok: boolean) => (ok ? '' : ' (over goal)')
  return (
    `${r.name}: ${r.durationMs} ms; bystander ${r.bystander.calls} calls, p50 ${r.bystander.p50Ms} ms, ` +
    `p99 ${r.bystander.p99Ms} ms${goal(r.bystander.p99Ms <= GOALS.bystanderP99Ms)}, max ${r.bystander.maxMs} ms; ` +
    `event loop max ${r.loopMaxMs} ms${goal(r.loopMaxMs <= GOALS.loopBlockMs)}; RSS ${r.rssBeforeMb} → ${r.rssAfterMb} MB`
  )
}

/** Writes a suite's figures to test-results/hostile/<suite>.json (git-ignored). */
export function writeReport(report: SuiteReport): string {
  const dir = join(ROOT, 'test-results', 'hostile')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${report.suite.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-|-$/g, '')}.json`)
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  return file
}
