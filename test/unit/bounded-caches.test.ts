/** lib/runtime/bounded-cache.ts: caches bounded by count and by bytes, and one byte bound over many maps. */
import { describe, expect, it } from 'vitest'
import { BoundedCache, ByteBudget } from '../../lib/runtime/bounded-cache'

describe('a bounded cache', () => {
  it('forgets its oldest entry past its size', () => {
    const c = new BoundedCache<string, number>(2)
    c.set('a', 1)
    c.set('b', 2)
    c.set('c', 3)
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([undefined, 2, 3])
  })

  it('with maxBytes, forgets its oldest entries once their weights would pass it, and counts a replaced entry once', () => {
    const c = new BoundedCache<string, string>(100, { maxBytes: 100 })
    c.set('a', 'A', 40)
    c.set('b', 'B', 40)
    c.set('b', 'B2', 50)
    expect(c.bytes).toBe(90)
    c.set('c', 'C', 30)
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([undefined, 'B2', 'C'])
    expect(c.bytes).toBe(80)
  })

  it('keeps an entry heavier than maxBytes on its own (the newest is always kept)', () => {
    const c = new BoundedCache<string, string>(10, { maxBytes: 10 })
    c.set('a', 'A', 5)
    c.set('big', 'BIG', 50)
    expect([c.get('a'), c.get('big'), c.size]).toEqual([undefined, 'BIG', 1])
  })
})

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
