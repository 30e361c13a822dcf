import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import { isServerToolsError, type ServerToolsError } from '../../../lib/errors'
import { SpawnRate } from '../../../lib/recipes/spawn-rate'

const clockAt = (start: number) => {
  const c = { t: start, now: () => c.t }
  return c
}

const refused = (f: () => void): ServerToolsError | undefined => {
  try {
    f()
    return undefined
  } catch (e) {
    if (isServerToolsError(e, 'RATE_LIMITED')) return e
    throw e
  }
}

describe('spawns per tenant', () => {
  it('admits the burst at once, then one spawn per refill interval, and says when the next one is free', () => {
    const clock = clockAt(0)
    const rate = new SpawnRate({ burst: 5, perMinute: 60 }, clock)
    for (let i = 0; i < 5; i++) rate.take('acme')
    const e = refused(() => rate.take('acme'))
    expect(e?.details).toMatchObject({ retryAfterSeconds: 1, limit: 60 })
    expect(e?.message).toBe('this tenant may spawn at most 60 processes a minute (5 at once); retry in 1 s')
    clock.t += 1_000
    rate.take('acme')
    expect(refused(() => rate.take('acme'))).toBeDefined()
    clock.t += 60_000 // a quiet minute refills the burst, never more
    let admitted = 0
    while (!refused(() => rate.take('acme'))) admitted++
    expect(admitted).toBe(5)
  })

  it('keeps tenants apart: one tenant at its limit leaves another its whole burst', () => {
    const rate = new SpawnRate({ burst: 3, perMinute: 1 }, clockAt(0))
    for (let i = 0; i < 3; i++) rate.take('mallory')
    expect(refused(() => rate.take('mallory'))).toBeDefined()
    for (let i = 0; i < 3; i++) rate.take('acme')
  })

  it('refuses every spawn past the burst as RATE_LIMITED through the process service', async () => {
    const clock = clockAt(Date.UTC(2026, 0, 1))
    const deps = createMemoryDeps({ clock, surface: { spawnRate: { burst: 4, perMinute: 6 } } })
    const statuses: string[] = []
    for (let i = 0; i < 10; i++) {
      try {
        await deps.processes.spawn('acme', 'p1', 'alice', {})
        statuses.push('spawned')
      } catch (e) {
        statuses.push((e as ServerToolsError).code)
      }
    }
    expect(statuses).toEqual([...Array(4).fill('spawned'), ...Array(6).fill('RATE_LIMITED')])
  })

  it('reads the body of a spawn only once it is admitted: past the rate, the body is never read', async () => {
    const clock = clockAt(Date.UTC(2026, 0, 1))
    const deps = createMemoryDeps({ clock, surface: { spawnRate: { burst: 2, perMinute: 1 } } })
    let reads = 0
    const body = async () => {
      reads++
      return {}
    }
    const codes: string[] = []
    for (let i = 0; i < 5; i++)
      await deps.processes.spawn('acme', 'p1', 'alice', body).then(
        () => codes.push('spawned'),
        (e: ServerToolsError) => codes.push(e.code),
      )
    expect(codes).toEqual(['spawned', 'spawned', 'RATE_LIMITED', 'RATE_LIMITED', 'RATE_LIMITED'])
    expect(reads).toBe(2)
  })
})
