/**
 * The sliced JSON parse (lib/config/json-slices.ts): the value JSON.parse gives, in pieces no
 * larger than a chunk, with pauses between slices — asserted on the counts the parse keeps
 * (pieces parsed, their largest size, pauses taken), never on a timing.
 */
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { newJsonSliceWork, parseJsonInSlices, type SlicedParseOptions } from '../../../lib/config/json-slices'
import { jsonTooDeep } from '../../../lib/config/nesting'

const noPause = async () => {}
const sliced = (text: string, opts: SlicedParseOptions = {}) => parseJsonInSlices(text, { pause: noPause, ...opts })

/** Strict equality of two parsed values, key order and prototypes included (node's, which reads no own `constructor`). */
function same(value: unknown, expected: unknown) {
  expect(isDeepStrictEqual(value, expected)).toBe(true)
  expect(JSON.stringify(value)).toBe(JSON.stringify(expected))
}
const sameAsJsonParse = (value: unknown, text: string) => same(value, JSON.parse(text))

/** JSON values with short strings, so no single scalar is longer than a piece may be. */
const jsonValue = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.string({ maxLength: 12, unit: 'binary' }),
    fc.array(tie('v'), { maxLength: 12 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'a', 'constructor', '1', '-0')), tie('v'), {
      maxKeys: 10,
    }),
  ),
})).v

describe('parseJsonInSlices', () => {
  it('parses a 530 KB tool call as JSON.parse does, no piece over 16 KiB, pausing between 64 KiB slices', async () => {
    const value = Array.from({ length: 1_500 }, (_, i) => ({
      ...Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`k${k}`, k])),
      last: i,
    }))
    const text = JSON.stringify({ name: 't', params: { v: value } })
    const work = newJsonSliceWork()
    const parsed = await sliced(text, { work })
    expect(parsed.ok).toBe(true)
    sameAsJsonParse((parsed as { value: unknown }).value, text)
    expect(work.largestParse).toBeLessThanOrEqual(16 * 1024 + 2)
    expect(work.scanned).toBe(text.length)
    // a pause once 64 KiB of budget is spent: a character scanned counts 1, one parsed 4 (every character
    // is scanned once and parsed once; a piece's overshoot is not carried over), so at least twice the
    // pauses a scan alone takes (with parsed characters counting 1, this text took 14), at most one
    // more per piece
    expect(work.pauses).toBeGreaterThanOrEqual(Math.floor((2 * text.length) / (64 * 1024)))
    expect(work.pauses).toBeLessThanOrEqual(Math.ceil((5 * text.length) / (64 * 1024)) + work.parses)
  })

  it('refuses an array over its item limit from the scan, counting its items and parsing nothing', async () => {
    const text = JSON.stringify({ recipe: 'default', models: Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`), more: [1, 2] })
    const work = newJsonSliceWork()
    const parsed = await sliced(text, { itemLimits: { models: 16 }, work })
    expect(parsed).toEqual({ ok: false, overLimit: { member: 'models', items: 20_000, limit: 16 } })
    expect(work.parses).toBe(0)
    expect(work.scanned).toBeLessThan(text.length) // stopped where the list closed
  })

  it('parses a tool call of one 200,000-character argument in one JSON.parse: a container is split for its structure, never its strings', async () => {
    const text = JSON.stringify({ name: 't', params: { s: 'a'.repeat(200_000), t: 'b\\"'.repeat(30_000) } })
    const work = newJsonSliceWork()
    const parsed = await sliced(text, { work })
    sameAsJsonParse((parsed as { value: unknown }).value, text)
    expect(work.parses).toBe(1)
    // with 20 KB of structure beside the long strings, the structure is cut, each long string parsed whole in a piece
    const wide = JSON.stringify({ name: 't', params: { s: 'a'.repeat(200_000), n: Array.from({ length: 4_000 }, (_, i) => i) } })
    const cut = newJsonSliceWork()
    sameAsJsonParse(((await sliced(wide, { work: cut })) as { value: unknown }).value, wide)
    expect(cut.parses).toBeGreaterThan(1)
    expect(cut.largestParse).toBeLessThan(200_000 + 16 * 1024)
  })

  it('takes an array within its item limit, and the same name deeper in the body is not limited', async () => {
    const text = JSON.stringify({ models: ['a/b', 'c/d'], nested: { models: Array.from({ length: 5_000 }, (_, i) => i) } })
    const parsed = await sliced(text, { itemLimits: { models: 2 }, chunkChars: 256 })
    expect(parsed.ok).toBe(true)
    sameAsJsonParse((parsed as { value: unknown }).value, text)
  })

  it('keeps a __proto__ key an own property and duplicate keys where JSON.parse keeps them, across pieces', async () => {
    const big = `[${'1,'.repeat(5_000)}1]`
    const text = `{"__proto__": {"polluted": ${big}}, "a": 1, "b": ${big}, "a": 2, "__proto__": 3}`
    const parsed = await sliced(text, { chunkChars: 64 })
    expect(parsed.ok).toBe(true)
    const value = (parsed as { value: Record<string, unknown> }).value
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    sameAsJsonParse(value, text)
  })

  it('refuses nesting past the limit at the position jsonTooDeep names', async () => {
    const text = `{"pad": "${'x'.repeat(40_000)}",\n "deep": ${'['.repeat(150)}${']'.repeat(150)}}`
    const parsed = await sliced(text)
    expect(parsed.ok).toBe(false)
    expect(parsed).toMatchObject({ tooDeep: true, issue: jsonTooDeep(text) })
  })

  it.each([
    ['a trailing comma after a split member', `[${'{"a":1},'.repeat(3_000)}]`],
    ['a value before a split member', `{"x": 1 [${'1,'.repeat(3_000)}1]}`],
    ['a value after a split member', `[[${'1,'.repeat(3_000)}1] 2]`],
    ['two values in one member', `[${'1,'.repeat(3_000)}1 2]`],
    ['a key without a colon before a split value', `{"k" [${'1,'.repeat(3_000)}1]}`],
    ['a mismatched bracket', `[${'1,'.repeat(3_000)}1}`],
    ['an unclosed container', `[${'1,'.repeat(3_000)}1`],
    ['text after the value', `[${'1,'.repeat(3_000)}1] x`],
    ['an unterminated string', `["${'a'.repeat(40_000)}`],
  ])('refuses %s as JSON.parse does, with a position', async (_, text) => {
    expect(() => JSON.parse(text)).toThrow()
    const parsed = await sliced(text, { chunkChars: 512 })
    expect(parsed.ok).toBe(false)
    expect((parsed as { issue: { message: string } }).issue.message).toMatch(/at line \d+, column \d+|not valid JSON/)
  })

  it('gives what JSON.parse gives for random values, each piece within a chunk (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, fc.integer({ min: 8, max: 256 }), fc.boolean(), async (value, chunkChars, spaced) => {
        const text = JSON.stringify(value, null, spaced ? 1 : undefined) ?? 'null'
        const work = newJsonSliceWork()
        const parsed = await sliced(text, { chunkChars, sliceChars: 97, work })
        expect(parsed.ok).toBe(true)
        sameAsJsonParse((parsed as { value: unknown }).value, text)
        // a piece is a run of members within a chunk, or one member: a container within a chunk, or a
        // scalar, with its key and indent — counted outside its strings
        expect(work.largestStructure).toBeLessThanOrEqual(Math.max(chunkChars + 64, 200) + 2)
      }),
      { numRuns: 300 },
    )
  })

  it('refuses every text JSON.parse refuses, for random damage to valid texts (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, fc.nat(), fc.constantFrom(',', ']', '}', '[', '{', ':', '"', ' ', '1', ''), async (value, at, insert) => {
        const valid = JSON.stringify(value) ?? 'null'
        const i = at % (valid.length + 1)
        const text = valid.slice(0, i) + insert + valid.slice(i + (insert === '' ? 1 : 0))
        let expected: unknown
        let refused = false
        try {
          expected = JSON.parse(text)
        } catch {
          refused = true
        }
        const parsed = await sliced(text, { chunkChars: 16 })
        expect(parsed.ok).toBe(!refused)
        if (parsed.ok) same(parsed.value, expected)
      }),
      { numRuns: 500 },
    )
  })
})
