/**
 * The fair queue's `hasRoom`: whether `enter` would give a place or one to wait in, rather than
 * refuse at once — what a caller with another way to do the work asks first.
 */
import { describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../lib/errors'
import { FairQueue } from '../../lib/runtime/fair-queue'

const words = { busy: 'Busy', things: 'jobs', late: (ms: number) => `not within ${ms} ms` }

describe('a fair queue asked whether it has room', () => {
  it("answers true exactly while enter would not refuse: a place, then the tenant's queue, then the queue across tenants", async () => {
    const q = new FairQueue({ slots: 2, tenantSlots: 1, tenantQueue: 2, queue: 3 }, words)
    const entered: Promise<unknown>[] = []
    const tryEnter = (tenant: string) => {
      const room = q.hasRoom(tenant)
      const p = q.enter(tenant, 60_000)
      entered.push(p.catch(() => undefined))
      return p.then(
        () => ({ room, refused: false }),
        (e) => ({ room, refused: isServerToolsError(e, 'OVERLOADED') }),
      )
    }
    // a: one running, two waiting, then refused; b: one running, one waiting (the queue across tenants then full)
    const outcomes = [tryEnter('a'), tryEnter('a'), tryEnter('a'), tryEnter('a'), tryEnter('b'), tryEnter('b'), tryEnter('c')]
    const settled = await Promise.all(outcomes.map((o) => Promise.race([o, new Promise((r) => setTimeout(() => r('waiting'), 20))])))
    expect(settled).toEqual([
      { room: true, refused: false },
      'waiting',
      'waiting',
      { room: false, refused: true },
      { room: true, refused: false },
      'waiting',
      { room: false, refused: true },
    ])
    expect(q.hasRoom('a')).toBe(false)
    expect(q.hasRoom('d')).toBe(false)
  })
})
