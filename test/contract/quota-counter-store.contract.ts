/** The QuotaCounterStore contract: memory (test/unit) and DynamoDB on dynalite (test/integration). */
import { beforeEach, describe, expect, it } from 'vitest'
import type { QuotaCounterStore } from '../../lib/quotas/ports'

const EXP = 1_767_229_200
const key = (counter = 'tenant|r1|rate|0', tenant = 'acme') => ({ tenant, counter })

export function quotaCounterStoreContract(name: string, make: () => Promise<QuotaCounterStore>) {
  describe(`QuotaCounterStore contract (${name})`, () => {
    let store: QuotaCounterStore
    beforeEach(async () => {
      store = await make()
    })

    it('grants a whole slice while it fits and reports the total reserved', async () => {
      expect(await store.reserve(key(), 4, 10, EXP)).toEqual({ granted: 4, used: 4 })
      expect(await store.reserve(key(), 4, 10, EXP)).toEqual({ granted: 4, used: 8 })
    })

    it('grants what is left when a slice does not fit, then nothing', async () => {
      await store.reserve(key(), 8, 10, EXP)
      expect(await store.reserve(key(), 5, 10, EXP)).toEqual({ granted: 2, used: 10 })
      expect((await store.reserve(key(), 5, 10, EXP)).granted).toBe(0)
    })

    it('never grants past the limit, however many reserve at once', async () => {
      const grants = await Promise.all(Array.from({ length: 20 }, () => store.reserve(key(), 3, 25, EXP)))
      expect(grants.reduce((n, g) => n + g.granted, 0)).toBe(25)
    })

    it('keeps counters apart per tenant and per counter, and reads them back (absent = not listed)', async () => {
      await store.reserve(key('a'), 2, 10, EXP)
      await store.reserve(key('b'), 3, 10, EXP)
      await store.reserve(key('a', 'other'), 7, 10, EXP)
      expect(await store.read('acme', ['a', 'b', 'c'])).toEqual(
        new Map([
          ['a', 2],
          ['b', 3],
        ]),
      )
      expect(await store.read('other', ['a'])).toEqual(new Map([['a', 7]]))
    })
  })
}
