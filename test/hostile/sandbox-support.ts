/**
 * Shared by the sandbox hostile tests (issue 10 F2, F5, F6, F10): the app in memory
 * (createApp(createMemoryDeps)) with a real sandbox in either isolation, tenants with tokens, and
 * a wait for the sandbox to fall idle that polls its stats — bounded, never a timing assertion.
 */
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { toolError } from '../../lib/calls/outcome'
import type { SandboxIsolation, SandboxSettings } from '../../lib/sandbox'
import type { Tool } from '../../lib/tools/contracts'
import { fullGc as gc } from '../support/gc' // sets --expose-gc at load, before any sandbox worker starts
import { client, tokenFor } from '../support/http'

export const ISOLATIONS: SandboxIsolation[] = ['worker', 'inline']

export interface SandboxApp {
  deps: ReturnType<typeof createMemoryDeps>
  app: ReturnType<typeof createApp>
  /** A client per tenant, all on project p1. */
  as(tenant: string): Promise<ReturnType<typeof client>>
}

/**
 * A built-in that answers only when its call is cancelled (or after a minute): a script stalled on
 * a host call, which — unlike a busy loop — holds no thread, so it stalls inline isolation too.
 */
export const hangTool: Tool = {
  name: 'hang',
  description: 'Never answers until its call is cancelled.',
  inputSchema: { type: 'object', additionalProperties: false, properties: {} },
  labels: [],
  primary: false,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  invoke: (_params, ctx) =>
    new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        resolve(toolError('hang was cancelled'))
      }
      const timer = setTimeout(done, 60_000)
      if (ctx.signal?.aborted) return done()
      ctx.signal?.addEventListener('abort', done, { once: true })
    }),
}

export function sandboxApp(sandbox: SandboxSettings): SandboxApp {
  const deps = createMemoryDeps({ sandbox, extraBuiltins: [hangTool] })
  const app = createApp(deps)
  const clients = new Map<string, ReturnType<typeof client>>()
  return {
    deps,
    app,
    async as(tenant) {
      let c = clients.get(tenant)
      if (!c) {
        c = client(app, await tokenFor(tenant))
        clients.set(tenant, c)
      }
      return c
    },
  }
}

/** Writes a scripted tool with the given source (one line of YAML flow: JSON-quoted). */
export async function putScript(app: SandboxApp, tenant: string, name: string, source: string, timeoutMs = 5000) {
  const api = await app.as(tenant)
  const res = await api.put(
    `/brain/${tenant}/projects/p1/server-tools/${name}`,
    `type: scripted\ndescription: A hostile script.\nparameters:\n  timeoutMs: ${timeoutMs}\n  inputs: []\n  source: ${JSON.stringify(source)}\n`,
  )
  if (res.status !== 201 && res.status !== 200) throw new Error(`writing ${name}: ${res.status} ${await res.text()}`)
}

/** Invokes a tool outside any process; `signal` is the request's own (aborting it is the client going away). */
export async function invoke(app: SandboxApp, tenant: string, name: string, params: Record<string, unknown> = {}, signal?: AbortSignal) {
  const res = await app.app.request(`/brain/${tenant}/projects/p1/tools/${name}/invoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await tokenFor(tenant)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ params }),
    signal,
  })
  return res as Omit<Response, 'json'> & { json(): Promise<any> }
}

export const js = (app: SandboxApp, tenant: string, code: string, timeoutMs?: number, signal?: AbortSignal) =>
  invoke(app, tenant, 'execute_javascript', { code, ...(timeoutMs ? { timeoutMs } : {}) }, signal)

/** Fuel high enough that a busy loop runs into its wall-clock timeout: these tests are about time, not statements. */
export const UNMETERED = 2_000_000_000

/**
 * Polls until no script runs or waits and no worker beyond the base pool is alive; returns the
 * last stats. Gives up after `patienceMs` (the caller's assertions then fail and show the stats).
 */
export async function settled(app: SandboxApp, baseWorkers: number, patienceMs = 10_000) {
  const until = performance.now() + patienceMs
  for (;;) {
    const stats = await app.deps.sandbox.stats()
    const { running, nested, queued } = stats.scheduler
    const idle = running === 0 && nested === 0 && queued === 0 && (stats.workers ?? 0) <= baseWorkers && stats.engines.every((e) => !e.busy)
    if (idle || performance.now() > until) return stats
    await new Promise((r) => setTimeout(r, 50))
  }
}

export const rssMb = () => Math.round(process.memoryUsage().rss / (1024 * 1024))

/**
 * A full GC, here and — through stats(), for workers started after this — in the sandbox's worker
 * threads, so that RSS shows memory given back rather than garbage not yet collected. V8 exposes
 * `gc` to contexts created after the flag is set.
 */
export async function collectedRssMb(app: SandboxApp): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc()
    await app.deps.sandbox.stats()
    await new Promise((r) => setTimeout(r, 50))
  }
  return rssMb()
}
