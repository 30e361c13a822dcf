/**
 * The fair-share gate (lib/runtime/fair-gate.ts) on a manual clock and a manual busy meter: every
 * figure is a count of requests or of simulated milliseconds, never a timing of this machine.
 */
import { describe, expect, it } from 'vitest'
import { ServerToolsError } from '../../lib/errors'
import { FAIR_GATE_DEFAULTS, FairGate, type FairGateLimits, type GateClock, type Release, type Waiting } from '../../lib/runtime/fair-gate'

/** Simulated time: `run(ms)` is the main thread busy for `ms`; `idle(ms)` is time passing with the thread free. */
class Sim implements GateClock {
  t = 0
  busy = 0
  private timers: { at: number; fn: () => void }[] = []
  now = () => this.t
  after(ms: number, fn: () => void) {
    const timer = { at: this.t + ms, fn }
    this.timers.push(timer)
    return () => {
      this.timers = this.timers.filter((x) => x !== timer)
    }
  }
  run(ms: number) {
    this.busy += ms
    this.idle(ms)
  }
  idle(ms: number) {
    const end = this.t + ms
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0]
      if (!due) break
      this.timers = this.timers.filter((x) => x !== due)
      this.t = Math.max(this.t, due.at)
      due.fn()
    }
    this.t = end
  }
}

function gateOn(sim: Sim, limits: Partial<FairGateLimits> = {}) {
  return new FairGate(sim, { busyMs: () => sim.busy }, { ...FAIR_GATE_DEFAULTS, ...limits })
}

const admitted = (e: Release | Waiting): e is Release => typeof e === 'function'

/** Lets the promise callbacks of granted waits run. */
const settle = () => new Promise((r) => setTimeout(r, 0))

/** `tenant` runs `count` requests of `ms` busy each, one after the other, alone on the thread. */
function runAlone(gate: FairGate, sim: Sim, tenant: string, count: number, ms: number) {
  for (let i = 0; i < count; i++) {
    const release = gate.enter(tenant)
    if (!admitted(release)) throw new Error('held while alone')
    sim.run(ms)
    release()
  }
}

describe('the fair-share gate', () => {
  it('never holds a tenant alone, however much of the thread it uses and however many requests it has in flight', () => {
    const sim = new Sim()
    const gate = gateOn(sim)
    runAlone(gate, sim, 'solo', 200, 20)
    const open = Array.from({ length: 300 }, () => gate.enter('solo'))
    sim.run(500)
    expect(open.filter(admitted)).toHaveLength(300)
    for (const release of open as Release[]) release()
    expect(gate.view()[0].counts).toEqual({ atOnce: 500, waited: 0, refused: 0, paused: 0 })
  })

  it("holds a tenant far over its share while a lighter tenant's request is in flight, and starts it when that request ends", async () => {
    const sim = new Sim()
    const gate = gateOn(sim)
    runAlone(gate, sim, 'heavy', 100, 10) // 1 s of the thread
    const light = gate.enter('light')
    expect(admitted(light)).toBe(true)
    sim.idle(1) // the light request waits on a store: in flight, not running

    const first = gate.enter('heavy') // nothing of its own in flight: it starts
    expect(admitted(first)).toBe(true)
    const second = gate.enter('heavy')
    expect(admitted(second)).toBe(false)
    sim.run(10)
    ;(first as Release)()
    expect(gate.view().find((v) => v.tenant === 'heavy')).toMatchObject({ mode: 'held', inFlight: 0, waiting: 1 })
    let started: Release | undefined
    void (second as Waiting).admitted.then((r) => (started = r))
    sim.idle(50)
    await settle()
    expect(started).toBeUndefined()

    ;(light as Release)()
    await settle()
    expect(started).toBeTypeOf('function')
    expect(gate.view().find((v) => v.tenant === 'heavy')?.counts).toMatchObject({ atOnce: 101, waited: 1 })
  })

  it('never holds a request that comes while its tenant has nothing in flight or waiting, however far over its share', () => {
    const sim = new Sim()
    const gate = gateOn(sim)
    runAlone(gate, sim, 'heavy', 100, 10)
    const light = gate.enter('light')
    expect(admitted(light)).toBe(true)
    for (let i = 0; i < 20; i++) {
      const one = gate.enter('heavy')
      expect(admitted(one)).toBe(true)
      sim.run(10)
      ;(one as Release)()
    }
    expect(gate.view().find((v) => v.tenant === 'heavy')).toMatchObject({ mode: 'held', counts: { waited: 0 } })
  })

  it('starts a held request after maxHoldMs when the lighter tenant keeps a request in flight (a slow upstream call)', async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { maxHoldMs: 200 })
    runAlone(gate, sim, 'heavy', 100, 10)
    const light = gate.enter('light')
    expect(admitted(light)).toBe(true)
    const first = gate.enter('heavy') as Release
    const next = gate.enter('heavy') as Waiting
    sim.run(10)
    first()
    let started: Release | undefined
    void next.admitted.then((r) => (started = r))
    sim.idle(189)
    await settle()
    expect(started).toBeUndefined()
    sim.idle(1)
    await settle()
    expect(started).toBeTypeOf('function')
  })

  it('keeps a tenant over its share to one request in flight and starts its waiting requests in the order they came', async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { maxHoldMs: 50 })
    runAlone(gate, sim, 'heavy', 100, 10)
    const light = gate.enter('light') as Release
    sim.idle(5)
    const order: number[] = []
    const entries = Array.from({ length: 5 }, (_, i) => {
      const e = gate.enter('heavy')
      if (admitted(e)) order.push(i)
      else void e.admitted.then((r) => order.push(i) && r)
      return e
    })
    light()
    await settle()
    // one at a time: each starts when the one before it ends
    for (let i = 0; i < 5; i++) {
      await settle()
      expect(gate.view().find((v) => v.tenant === 'heavy')?.inFlight).toBe(1)
      const entry = entries[i]
      const release = admitted(entry) ? entry : await entry.admitted
      sim.run(10)
      release?.()
    }
    await settle()
    expect(order).toEqual([0, 1, 2, 3, 4])
  })

  it('paces a tenant over its share whose requests wait rather than run: one more in flight each maxHoldMs, never stopped', async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { maxHoldMs: 200 })
    runAlone(gate, sim, 'waits', 100, 10)
    runAlone(gate, sim, 'other', 1, 1)
    const other = gate.enter('other') as Release
    // four requests that wait on a worker or an upstream, charged the loop's other work meanwhile
    const first = gate.enter('waits')
    expect(admitted(first)).toBe(true)
    sim.run(20)
    const later = Array.from({ length: 3 }, () => gate.enter('waits'))
    expect(later.filter(admitted)).toHaveLength(0)
    const inFlight = () => gate.view().find((v) => v.tenant === 'waits')?.inFlight
    sim.idle(150)
    await settle()
    expect(inFlight()).toBe(1)
    sim.idle(60) // 200 ms after the first started
    await settle()
    expect(inFlight()).toBe(2)
    sim.idle(200)
    await settle()
    expect(inFlight()).toBe(3)
    sim.idle(200)
    await settle()
    expect(inFlight()).toBe(4)
    other()
  })

  it('refuses past the tenant queue with RATE_LIMITED and past the whole queue with OVERLOADED, each with a Retry-After', () => {
    const sim = new Sim()
    const gate = gateOn(sim, { tenantQueue: 3, queue: 4 })
    for (let i = 0; i < 50; i++) {
      runAlone(gate, sim, 'heavy', 1, 10)
      runAlone(gate, sim, 'other', 1, 10)
    }
    const light = gate.enter('light')
    expect(admitted(light)).toBe(true)
    expect(admitted(gate.enter('heavy'))).toBe(true) // its one request in flight
    const waits = Array.from({ length: 3 }, () => gate.enter('heavy'))
    expect(waits.filter(admitted)).toHaveLength(0)
    const refusal = (() => {
      try {
        gate.enter('heavy')
      } catch (e) {
        return e as ServerToolsError
      }
    })()
    expect(refusal).toBeInstanceOf(ServerToolsError)
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 'tenantQueue', retryAfterSeconds: expect.any(Number) } })
    expect(refusal?.message).toMatch(/3 requests waiting \(at most 3\)/)

    expect(admitted(gate.enter('other'))).toBe(true)
    expect(admitted(gate.enter('other'))).toBe(false) // the fourth place of the whole queue
    expect(() => gate.enter('other')).toThrow(
      expect.objectContaining({ code: 'OVERLOADED', details: expect.objectContaining({ limit: 'queue' }) }),
    )
  })

  it('gives a cancelled wait its place back at once: the queue shrinks and the next request still starts in order', async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { tenantQueue: 2, maxHoldMs: 10_000 })
    runAlone(gate, sim, 'heavy', 100, 10)
    const light = gate.enter('light') as Release
    const running = gate.enter('heavy') as Release
    const first = gate.enter('heavy') as Waiting
    const second = gate.enter('heavy') as Waiting
    expect(() => gate.enter('heavy')).toThrow(expect.objectContaining({ code: 'RATE_LIMITED' }))
    first.cancel()
    expect(await first.admitted).toBeUndefined()
    expect(gate.view().find((v) => v.tenant === 'heavy')?.waiting).toBe(1)
    const third = gate.enter('heavy') // the cancelled one's place
    expect(admitted(third)).toBe(false)
    running()
    light()
    const started = await second.admitted
    expect(started).toBeTypeOf('function')
    expect(gate.view().find((v) => v.tenant === 'heavy')).toMatchObject({ inFlight: 1, waiting: 1 })
  })

  it('refuses a request that waited maxWaitMs with OVERLOADED naming the limit', async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { maxWaitMs: 1_000, maxHoldMs: 5_000 })
    runAlone(gate, sim, 'heavy', 100, 10)
    gate.enter('light')
    gate.enter('heavy')
    const waiting = gate.enter('heavy') as Waiting
    const outcome = waiting.admitted.then(
      () => 'started',
      (e: ServerToolsError) => e,
    )
    sim.idle(1_000)
    expect(await outcome).toMatchObject({ code: 'OVERLOADED', details: { limit: 'maxWaitMs' } })
    expect(gate.view().find((v) => v.tenant === 'heavy')).toMatchObject({ waiting: 0, counts: { refused: 1 } })
  })
})

/**
 * One tick of the simulated thread, shared by processor sharing: every request still working runs
 * an equal slice of it (`onSlice` hears each), one that has worked waits out its I/O, and those
 * done leave `running` with their places released; answers them.
 */
function tick<R extends { left: number; io: number; release?: Release }>(
  sim: Sim,
  running: R[],
  ms: number,
  onSlice?: (r: R, slice: number) => void,
): R[] {
  const cpu = running.filter((r) => r.left > 0)
  for (const r of cpu) {
    r.left -= ms / cpu.length
    onSlice?.(r, ms / cpu.length)
  }
  if (cpu.length) sim.run(ms)
  else sim.idle(ms)
  for (const r of running) if (r.left <= 0 && !cpu.includes(r)) r.io -= ms
  const done = running.filter((r) => r.left <= 0 && r.io <= 0)
  for (const r of done) {
    running.splice(running.indexOf(r), 1)
    r.release?.()
  }
  return done
}

/**
 * Three tenants on one simulated thread, shared by processor sharing (every request in flight
 * runs an equal slice of each 0.1 ms): two floods of 10 ms requests with 4 in flight each, and a
 * light tenant with one 1 ms request in flight at a time, 3 ms of waiting on a store after it.
 * The light tenant's latencies count from 1 s on: the gate needs its half-life to know the
 * tenants' shares, and what it admitted before that runs to its end, as on the real thread.
 */
async function threeTenants(withGate: boolean, ms: number) {
  const sim = new Sim()
  const gate = gateOn(sim, { maxHoldMs: 50 })
  const TICK = 0.1
  const kinds = { a: { work: 10, io: 0, clients: 4 }, b: { work: 10, io: 0, clients: 4 }, light: { work: 1, io: 3, clients: 1 } }
  type Tenant = keyof typeof kinds
  type Req = { tenant: Tenant; left: number; io: number; release?: Release; startedAt: number }
  const running: Req[] = []
  const waiting = new Set<Req>()
  const busy = { a: 0, b: 0, light: 0 }
  const lightLatency: number[] = []
  const submit = (tenant: Tenant) => {
    const req: Req = { tenant, left: kinds[tenant].work, io: kinds[tenant].io, startedAt: sim.t }
    if (!withGate) return void running.push(req)
    const e = gate.enter(tenant)
    if (admitted(e)) {
      req.release = e
      running.push(req)
      return
    }
    waiting.add(req)
    void e.admitted.then((release) => {
      waiting.delete(req)
      req.release = release
      running.push(req)
    })
  }
  for (const t of Object.keys(kinds) as Tenant[]) for (let i = 0; i < kinds[t].clients; i++) submit(t)
  for (let step = 0; step < ms / TICK; step++) {
    for (const r of tick(sim, running, TICK, (r, slice) => (busy[r.tenant] += slice))) {
      if (r.tenant === 'light' && r.startedAt >= 1_000) lightLatency.push(sim.t - r.startedAt)
      submit(r.tenant)
    }
    // the granted waits' callbacks
    for (let i = 0; i < 3; i++) await null
  }
  const sorted = lightLatency.sort((x, y) => x - y)
  return { gate, busy, lightP99: sorted[Math.floor(sorted.length * 0.99)] }
}

describe('fairness between three tenants (simulated thread)', () => {
  it('keeps the light tenant within 2x of its alone latency (3x without the gate) and gives the two floods equal parts of the thread', async () => {
    const alone = 4 // 1 ms of work and 3 ms on a store, nobody else
    const open = await threeTenants(false, 3_000)
    expect(open.lightP99).toBeGreaterThan(2.5 * alone)

    const gated = await threeTenants(true, 3_000)
    expect(gated.lightP99).toBeLessThanOrEqual(2 * alone)
    expect(Math.max(gated.busy.a, gated.busy.b) / Math.min(gated.busy.a, gated.busy.b)).toBeLessThan(1.2)
    // the thread is not left idle for fairness' sake: the floods still use most of it
    expect(gated.busy.a + gated.busy.b).toBeGreaterThan(0.6 * 3_000)
    expect(gated.gate.view().find((v) => v.tenant === 'light')?.counts.waited).toBe(0)
  })
})

/**
 * A tenant calling one at a time (1 ms of work, then 1 ms on a store) beside a flood of cheap
 * requests on two connections (`floodWork` ms each), on the processor-sharing thread of
 * `threeTenants`: per light request, how many flood requests were in flight at its start and how
 * many started while it was in flight — what the light request waits behind.
 */
async function lightBesideFlood(withGate: boolean, floodWork: number, ms: number) {
  const sim = new Sim()
  const gate = gateOn(sim)
  const TICK = 0.1
  type Req = { tenant: 'light' | 'flood'; left: number; io: number; release?: Release; startedFloods: number; floodsAtStart: number }
  const running: Req[] = []
  const done = { light: 0, flood: 0 }
  const perLight: { atStart: number; startedDuring: number }[] = []
  const begin = (req: Req) => {
    if (req.tenant === 'light') req.floodsAtStart = running.filter((r) => r.tenant === 'flood').length
    else for (const r of running) if (r.tenant === 'light') r.startedFloods++
    running.push(req)
  }
  const submit = (tenant: Req['tenant']) => {
    const req: Req = {
      tenant,
      left: tenant === 'light' ? 1 : floodWork,
      io: tenant === 'light' ? 1 : 0,
      startedFloods: 0,
      floodsAtStart: 0,
    }
    if (!withGate) return begin(req)
    const e = gate.enter(tenant)
    if (admitted(e)) {
      req.release = e
      return begin(req)
    }
    void e.admitted.then((release) => {
      req.release = release
      begin(req)
    })
  }
  submit('flood')
  submit('flood')
  submit('light')
  // a client's next request comes one tick after its answer (the round trip), as over a socket
  const next: Req['tenant'][] = []
  for (let step = 0; step < ms / TICK; step++) {
    for (const t of next.splice(0)) submit(t)
    for (const r of tick(sim, running, TICK)) {
      done[r.tenant]++
      if (r.tenant === 'light') perLight.push({ atStart: r.floodsAtStart, startedDuring: r.startedFloods })
      next.push(r.tenant)
    }
    for (let i = 0; i < 3; i++) await null
  }
  return { gate, done, perLight: perLight.slice(perLight.length >> 2) }
}

describe('a tenant calling one at a time beside a flood', () => {
  it("starts none of the flood's requests while the light tenant's request is in flight, and at most one in each of its gaps", async () => {
    for (const floodWork of [0.5, 1.5, 4]) {
      const open = await lightBesideFlood(false, floodWork, 2_000)
      expect(Math.max(...open.perLight.map((l) => l.atStart + l.startedDuring))).toBeGreaterThanOrEqual(2)

      const gated = await lightBesideFlood(true, floodWork, 2_000)
      expect(Math.max(...gated.perLight.map((l) => l.startedDuring))).toBe(0)
      expect(Math.max(...gated.perLight.map((l) => l.atStart))).toBe(1)
      // held, not starved: the flood's requests still get at least half as much of the thread as the light tenant's
      expect(gated.done.flood * floodWork).toBeGreaterThanOrEqual(0.5 * gated.done.light)
      expect(gated.gate.view().find((v) => v.tenant === 'light')?.counts.waited).toBe(0)
    }
  })

  it('holds a flood whose two connections leave nothing of it in flight for a moment: its next request still waits for the light tenant', async () => {
    const sim = new Sim()
    const gate = gateOn(sim)
    runAlone(gate, sim, 'flood', 100, 2)
    let light = gate.enter('light') as Release
    const first = gate.enter('flood') as Release
    const second = gate.enter('flood') as Waiting
    sim.run(2)
    first()
    light()
    ;(await second.admitted)?.()
    sim.idle(1)
    // nothing of the flood in flight or waiting now; the light tenant's next call runs
    light = gate.enter('light') as Release
    const third = gate.enter('flood')
    expect(admitted(third)).toBe(false)
    let started: Release | undefined
    void (third as Waiting).admitted.then((r) => (started = r))
    sim.run(2)
    await settle()
    expect(started).toBeUndefined()
    light()
    await settle()
    expect(started).toBeTypeOf('function')
    // a tenant that only ever called one at a time is not held for it
    expect(gate.view().find((v) => v.tenant === 'light')?.counts).toEqual({ atOnce: 2, waited: 0, refused: 0, paused: 0 })
  })

  it("pauses a flood's running request between slices while the light tenant's request is in flight: resumed when it ends, or after maxHoldMs", async () => {
    const sim = new Sim()
    const gate = gateOn(sim, { maxHoldMs: 200 })
    runAlone(gate, sim, 'flood', 100, 2)
    const flood = gate.enter('flood') as Release
    gate.enter('flood') // its second connection: demand 2
    let light = gate.enter('light') as Release
    sim.run(5)
    let resumed = 0
    let fullPauses = 0
    const slice = () => {
      const wait = gate.pause('flood')
      expect(wait).toBeInstanceOf(Promise)
      void wait?.then((full) => {
        resumed++
        fullPauses += full ? 1 : 0
      })
    }
    slice()
    sim.run(5)
    await settle()
    expect(resumed).toBe(0)
    light()
    await settle()
    expect(resumed).toBe(1)
    // the light tenant's next call: the flood's next slice waits for it, at most maxHoldMs
    light = gate.enter('light') as Release
    slice()
    sim.idle(199)
    await settle()
    expect(resumed).toBe(1)
    sim.idle(1)
    await settle()
    expect(resumed).toBe(2)
    light()
    flood()
    expect(gate.view().find((v) => v.tenant === 'flood')?.counts.paused).toBe(2)
    // the second waited all of maxHoldMs: the caller is told, to stop pausing that request
    expect(fullPauses).toBe(1)
  })

  it('never pauses a tenant calling one at a time, a tenant alone, or a flood while no lighter request is in flight', () => {
    const sim = new Sim()
    const gate = gateOn(sim)
    runAlone(gate, sim, 'flood', 100, 2)
    const a = gate.enter('flood') as Release
    gate.enter('flood')
    expect(gate.pause('flood')).toBeUndefined() // alone
    const light = gate.enter('light') as Release
    sim.run(5)
    expect(gate.pause('light')).toBeUndefined()
    light()
    expect(gate.pause('flood')).toBeUndefined()
    a()
  })

  it('holds nobody behind a tenant whose last request ended more than maxHoldMs ago', () => {
    const flood = (idle: number) => {
      const sim = new Sim()
      const gate = gateOn(sim, { maxHoldMs: 200 })
      runAlone(gate, sim, 'a', 50, 5)
      // one long request: the busier tenant by load, so 'a' is under its share (free) either way
      runAlone(gate, sim, 'one-at-a-time', 1, 500)
      sim.idle(idle)
      gate.enter('a')
      return { second: admitted(gate.enter('a')), mode: gate.view().find((v) => v.tenant === 'a')?.mode }
    }
    expect(flood(150)).toEqual({ second: false, mode: 'held' })
    expect(flood(201)).toEqual({ second: true, mode: 'free' })
  })
})
