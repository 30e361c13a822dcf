/**
 * The fair-share gate on the HTTP path (functions/http/fair-share.ts over lib/runtime/fair-gate.ts):
 * a real node server on 127.0.0.1, real sockets, the app as `npm start` composes it. Counted,
 * not timed: how many calls of a tenant a tool saw running at once, how many requests waited or
 * were refused, what each answered.
 */
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { success } from '../../lib/calls/outcome'
import type { FairGateLimits } from '../../lib/runtime/fair-gate'
import { nextTurn } from '../../lib/runtime/turns'
import { bareBuiltin } from '../support/cancellable-tool'
import { tokenFor } from '../support/http'

const servers: ReturnType<typeof serve>[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    ;(s as unknown as { closeAllConnections(): void }).closeAllConnections()
    await new Promise<void>((r) => s.close(() => r()))
  }
})

/** A built-in that runs until the test lets it go, counting its calls running at once per tenant. */
function heldTool() {
  const running = new Map<string, number>()
  const most = new Map<string, number>()
  let started = 0
  let open!: () => void
  let gate = new Promise<void>((r) => (open = r))
  const tool = bareBuiltin('hold', 'Runs until released.', async (_params, ctx) => {
    const tenant = ctx.tenant
    started++
    running.set(tenant, (running.get(tenant) ?? 0) + 1)
    most.set(tenant, Math.max(most.get(tenant) ?? 0, running.get(tenant)!))
    await gate
    running.set(tenant, running.get(tenant)! - 1)
    return success({ ok: true })
  })
  return {
    tool,
    most: (tenant: string) => most.get(tenant) ?? 0,
    started: () => started,
    /** Lets every running and later call finish. */
    releaseAll: () => open(),
    /** Lets the running calls finish and holds the later ones again. */
    releaseRunning: () => {
      const was = open
      gate = new Promise<void>((r) => (open = r))
      was()
    },
  }
}

/**
 * A built-in whose work is `SLICES` slices with a yield of lib's (nextTurn) between each, as a
 * sliced parse or expansion does; it starts slicing when the test lets it (`go`).
 */
function slicedTool() {
  let slices = 0
  let go!: () => void
  const started = new Promise<void>((r) => (go = r))
  const tool = bareBuiltin('sliced', 'Works in slices.', async () => {
    await started
    for (let i = 0; i < SLICES; i++) {
      slices++
      await nextTurn()
    }
    return success({ slices })
  })
  return { tool, slices: () => slices, go: () => go() }
}
const SLICES = 5

/** A built-in whose answer is larger than one slice of a rendered answer (so it leaves in pieces); it answers when the test lets it (`go`). */
function bigTool() {
  let go!: () => void
  const started = new Promise<void>((r) => (go = r))
  const tool = bareBuiltin('big', 'Answers at length.', async () => {
    await started
    return success({ text: 'x'.repeat(BIG) })
  })
  return { tool, go: () => go() }
}
const BIG = 300_000

async function start(limits: Partial<FairGateLimits>) {
  const hold = heldTool()
  const sliced = slicedTool()
  const big = bigTool()
  const deps = createMemoryDeps({ extraBuiltins: [hold.tool, sliced.tool, big.tool], fairShare: { busyFloor: 1e-9, ...limits } })
  const app = createApp(deps)
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
  servers.push(server)
  await new Promise<void>((r) => server.once('listening', () => r()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const call = async (tenant: string, tool: string, signal?: AbortSignal) =>
    fetch(`${base}/brain/${tenant}/projects/p1/tools/${tool}/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await tokenFor(tenant)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ params: {} }),
      signal,
    })
  const view = (tenant: string) => deps.fairShare?.view().find((v) => v.tenant === tenant)
  return { hold, sliced, big, call, view }
}

/**
 * Heavy's call of `tool` running, its second call in (its demand 2 now), then a light tenant's
 * call running: a flood beside a tenant calling one at a time.
 */
async function floodBesideLight({ call, view, hold }: Awaited<ReturnType<typeof start>>, tool: string) {
  const flood = call('heavy', tool)
  await until(() => view('heavy')?.inFlight === 1, `heavy's ${tool} call running`)
  const second = call('heavy', 'hold')
  await until(() => view('heavy')?.waiting === 1 || hold.started() === 1, "heavy's second call in")
  const light = call('light', 'hold')
  await until(() => view('light')?.inFlight === 1, 'the light call running')
  return { flood, second, light }
}

/** Waits (polling, bounded) until `cond` holds: a count the server reached, never a duration asserted. */
async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!cond()) throw new Error(`never: ${what}`)
}

describe('the fair-share gate over HTTP', () => {
  it('never holds a tenant alone: 12 calls at once all run at once and all answer', async () => {
    const { hold, call, view } = await start({ sharedInFlight: 2 })
    const answers = Array.from({ length: 12 }, () => call('solo', 'hold'))
    await until(() => hold.started() === 12, '12 calls running')
    hold.releaseAll()
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual(Array(12).fill(200))
    expect(hold.most('solo')).toBe(12)
    expect(view('solo')?.counts).toEqual({ atOnce: 12, waited: 0, refused: 0, paused: 0 })
  })

  it('keeps a tenant sending many calls at once to one in flight while a tenant calling one at a time has its call running, and answers every request', async () => {
    // maxHoldMs well past the time ten calls take to arrive on a loaded machine: none is paced in meanwhile
    const { hold, call, view } = await start({ sharedInFlight: 2, maxHoldMs: 2_000 })
    const light = call('light', 'hold')
    await until(() => hold.started() === 1, 'the light call running')
    const heavy = Array.from({ length: 10 }, () => call('heavy', 'hold'))
    await until(() => view('heavy')?.waiting === 9, "9 of heavy's calls waiting")
    expect(hold.most('heavy')).toBe(1)
    expect(view('heavy')?.mode).toBe('held')
    hold.releaseAll()
    expect((await Promise.all([light, ...heavy])).map((r) => r.status)).toEqual(Array(11).fill(200))
    expect(view('heavy')?.counts).toMatchObject({ atOnce: 1, waited: 9, refused: 0, paused: 0 })
    expect(view('light')?.counts).toEqual({ atOnce: 1, waited: 0, refused: 0, paused: 0 })
  })

  it("pauses a flood's running call at each yield of its work while a tenant calling one at a time has its call running, and finishes it when that call ends", async () => {
    // a pause as long as the test may take: only the light call's end resumes it
    const t = await start({ maxHoldMs: 9_000 })
    const { hold, sliced, view } = t
    const { flood, second, light } = await floodBesideLight(t, 'sliced')
    sliced.go()
    await until(() => (view('heavy')?.counts.paused ?? 0) >= 1, 'a slice paused')
    const slicesWhilePaused = sliced.slices()
    // the light call still runs: more turns of the loop pass, the sliced call goes no further
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    expect(sliced.slices()).toBe(slicesWhilePaused)
    expect(slicesWhilePaused).toBeLessThan(SLICES)
    hold.releaseAll()
    expect((await light).status).toBe(200)
    expect(await (await flood).json()).toMatchObject({ isError: false, content: { slices: SLICES } })
    expect((await second).status).toBe(200)
    expect(view('light')?.counts).toMatchObject({ waited: 0, paused: 0 })
  })

  it("pauses a flood's large answer between its pieces while a tenant calling one at a time has its call running, and sends the rest when that call ends", async () => {
    const t = await start({ maxHoldMs: 9_000 })
    const { hold, big, view } = t
    const { flood, second, light } = await floodBesideLight(t, 'big')
    big.go()
    const res = await flood
    expect(res.status).toBe(200)
    // the server writes the answer's pieces after its handler returned: the pause between them is still the request's
    await until(() => (view('heavy')?.counts.paused ?? 0) >= 1, 'a piece of the answer paused')
    const reader = res.body!.getReader()
    const chunks: Uint8Array[] = []
    let received = 0
    const reading = (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        chunks.push(r.value)
        received += r.value.byteLength
      }
    })()
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    const whilePaused = received
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    expect(received).toBe(whilePaused)
    expect(whilePaused).toBeLessThan(BIG)
    hold.releaseAll()
    await reading
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toMatchObject({ isError: false, content: { text: 'x'.repeat(BIG) } })
    expect((await light).status).toBe(200)
    expect((await second).status).toBe(200)
    expect(view('light')?.counts).toMatchObject({ waited: 0, paused: 0 })
  })

  it("stops pausing a flood's call once one pause waited all of maxHoldMs (the light call waits on something slow): one pause, then every slice", async () => {
    const t = await start({ maxHoldMs: 50 })
    const { hold, sliced, view } = t
    const { flood, second, light } = await floodBesideLight(t, 'sliced')
    sliced.go()
    // the light call is still running when the sliced call ends
    expect(await (await flood).json()).toMatchObject({ isError: false, content: { slices: SLICES } })
    expect(view('light')?.inFlight).toBe(1)
    expect(view('heavy')?.counts.paused).toBe(1)
    hold.releaseAll()
    expect((await light).status).toBe(200)
    expect((await second).status).toBe(200)
  })

  it('refuses calls past the tenant queue with a 429 problem naming the limit and a Retry-After, and still answers the ones it held', async () => {
    const { hold, call, view } = await start({ sharedInFlight: 1, tenantQueue: 3 })
    const light = call('light', 'hold')
    await until(() => hold.started() === 1, 'the light call running')
    const heavy = Array.from({ length: 10 }, () => call('heavy', 'hold'))
    await until(() => (view('heavy')?.counts.refused ?? 0) === 6, '6 refusals')
    hold.releaseAll()
    const answers = await Promise.all(heavy)
    const refused = answers.filter((r) => r.status === 429)
    expect(refused).toHaveLength(6)
    expect(answers.filter((r) => r.status === 200)).toHaveLength(4)
    const problem = (await refused[0].json()) as { detail: string }
    expect(refused[0].headers.get('content-type')).toMatch(/problem\+json/)
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(problem).toMatchObject({ status: 429, code: 'RATE_LIMITED', limit: 'tenantQueue' })
    expect(problem.detail).toMatch(/3 requests waiting \(at most 3\)/)
    expect((await light).status).toBe(200)
  })

  it('gives a waiting request its place back when its client goes away, and starts the next one in its place', async () => {
    const { hold, call, view } = await start({ sharedInFlight: 1 })
    const light = call('light', 'hold')
    await until(() => hold.started() === 1, 'the light call running')
    const first = call('heavy', 'hold')
    await until(() => hold.started() === 2, "heavy's first call running")
    const leaving = new AbortController()
    const gone = call('heavy', 'hold', leaving.signal).catch((e: Error) => e.name)
    await until(() => view('heavy')?.waiting === 1, 'one waiting')
    const next = call('heavy', 'hold')
    await until(() => view('heavy')?.waiting === 2, 'two waiting')
    leaving.abort()
    expect(await gone).toBe('AbortError')
    await until(() => view('heavy')?.waiting === 1, 'the one that left is gone from the queue')
    hold.releaseRunning() // light's and heavy's first call end; the one behind the leaver starts
    await until(() => hold.started() === 3, 'the next call running')
    hold.releaseAll()
    expect((await Promise.all([light, first, next])).map((r) => r.status)).toEqual([200, 200, 200])
    expect(hold.started()).toBe(3) // the call whose client left never ran
  })
})
