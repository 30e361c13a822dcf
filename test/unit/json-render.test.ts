import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonPieces } from '../../lib/config/json-render'

const SLICE = 256

describe('JSON rendered in pieces (issue 21 D2, D3)', () => {
  it('joins to exactly the text of JSON.stringify, for any JSON value and slice', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.integer({ min: 1, max: 300 }), (value, slice) => {
        expect([...jsonPieces(value, slice)].join('')).toBe(JSON.stringify(value))
      }),
      { numRuns: 500 },
    )
  })

  it('renders members JSON.stringify leaves out (undefined, functions) as it does, and a Date by its toJSON', () => {
    const value = {
      a: undefined,
      b: () => 1,
      c: [undefined, () => 1, Symbol('s'), 'x'.repeat(600)],
      d: new Date(0),
      e: { f: 'y'.repeat(600), g: undefined },
    }
    expect([...jsonPieces(value, SLICE)].join('')).toBe(JSON.stringify(value))
  })

  it('never cuts a surrogate pair or an escape: long strings of emoji, quotes and control characters come out as one string', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('😀', '"', '\\', '\n', '\u0001', 'a', '€', '\ud800'), { minLength: 200, maxLength: 2_000 }),
        fc.integer({ min: 1, max: 64 }),
        (parts, slice) => {
          const value = { text: parts.join('') }
          expect([...jsonPieces(value, slice)].join('')).toBe(JSON.stringify(value))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('cuts a 1 MB answer of ten long descriptions into pieces of at most two slices', () => {
    const value = {
      isError: false,
      content: { tools: Array.from({ length: 10 }, (_, i) => ({ name: `t${i}`, description: `${i} `.padEnd(100_000, 'x') })) },
    }
    const pieces = [...jsonPieces(value, 64 * 1024)]
    expect(pieces.join('')).toBe(JSON.stringify(value))
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(2 * 64 * 1024)
    expect(pieces.length).toBeGreaterThanOrEqual(Math.floor(JSON.stringify(value).length / (2 * 64 * 1024)))
  })

  it('renders a value within one slice as one piece', () => {
    expect([...jsonPieces({ isError: false, content: { ok: true } }, SLICE)]).toEqual(['{"isError":false,"content":{"ok":true}}'])
  })
})
