/** ByteBudget (lib/runtime/bounded-cache.ts): one byte bound over entries held in many maps. */
import { describe, expect, it } from 'vitest'
import { ByteBudget } from '../../lib/runtime/bounded-cache'

describe('a byte budget over many maps', () => {
  it('removes the oldest entries, from whichever map holds them, once the total passes the budget', () => {
    const budget = new ByteBudget(100)
    const a = new Map<string, string>()
    const b = new Map<string, string>()
    budget.set(a, 'x', 'a-x', 40)
    budget.set(b, 'y', 'b-y', 40)
    expect([a.size, b.size, budget.bytes]).toEqual([1, 1, 80])
    budget.set(b, 'z', 'b-z', 40)
    expect([...a.keys(), ...b.keys()]).toEqual(['y', 'z'])
    expect(budget.bytes).toBe(80)
  })

  it('never removes a newer value set under the same key as an evicted one', () => {
    const budget = new ByteBudget(100)
    const m = new Map<string, string>()
    budget.set(m, 'k', 'old', 60)
    m.set('k', 'newer, set directly')
    budget.set(m, 'other', 'v', 60)
    expect(m.get('k')).toBe('newer, set directly')
  })

  it('keeps the newest entry even when it alone is over the budget', () => {
    const budget = new ByteBudget(10)
    const m = new Map<string, string>()
    budget.set(m, 'big', 'v', 50)
    expect(m.get('big')).toBe('v')
  })
})
