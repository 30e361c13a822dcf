import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { escapeCounts, JsonAsText, jsonPieces, renderedValue, renderedValueInSlices, withRendered } from '../../lib/config/json-render'

const joined = (pieces: Iterable<Uint8Array>) => Buffer.concat([...pieces]).toString('utf8')

const SLICE = 256

describe('JSON rendered in pieces (issue 21 D2, D3)', () => {
  it('joins to exactly the text of JSON.stringify, for any JSON value and slice', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.integer({ min: 1, max: 300 }), (value, slice) => {
        expect(joined(jsonPieces(value, slice))).toBe(JSON.stringify(value))
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
    expect(joined(jsonPieces(value, SLICE))).toBe(JSON.stringify(value))
  })

  it('never cuts a surrogate pair or an escape: long strings of emoji, quotes and control characters come out as one string', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('😀', '"', '\\', '\n', '\u0001', 'a', '€', '\ud800'), { minLength: 200, maxLength: 2_000 }),
        fc.integer({ min: 1, max: 64 }),
        (parts, slice) => {
          const value = { text: parts.join('') }
          expect(joined(jsonPieces(value, slice))).toBe(JSON.stringify(value))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('cuts a 1 MB answer of ten long descriptions into pieces of one slice of bytes', () => {
    const value = {
      isError: false,
      content: { tools: Array.from({ length: 10 }, (_, i) => ({ name: `t${i}`, description: `${i} `.padEnd(100_000, 'x') })) },
    }
    const pieces = [...jsonPieces(value, 64 * 1024)]
    expect(joined(pieces)).toBe(JSON.stringify(value))
    expect(Math.max(...pieces.map((p) => p.byteLength))).toBeLessThanOrEqual(64 * 1024)
    expect(pieces.length).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(value)) / (64 * 1024)))
  })

  it('renders a value within one slice as one piece', () => {
    const pieces = [...jsonPieces({ isError: false, content: { ok: true } }, SLICE)]
    expect(pieces.map((p) => Buffer.from(p).toString('utf8'))).toEqual(['{"isError":false,"content":{"ok":true}}'])
  })

  it('copies kept renderings of members still holding the value they were rendered from, and renders the others', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 6 }),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.integer({ min: 1, max: 300 }),
        (members, stale, slice) => {
          // each member kept rendered; a stale one was rendered from another value (a member changed since)
          const kept = Object.fromEntries(
            Object.entries(members).map(([k, v], i) => [k, stale[i] ? renderedValue({ other: k }) : renderedValue(v)]),
          )
          const value = { outer: [withRendered({ ...members }, kept), 'tail'] }
          expect(joined(jsonPieces(value, slice))).toBe(JSON.stringify(value))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('renders a value as the JSON string of its JSON text (JsonAsText), kept renderings escaped, nested too, as JSON.stringify does', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 6 }),
        fc.constantFrom('"q"\\\n€😀', 'plain'),
        fc.integer({ min: 1, max: 300 }),
        (members, extra, slice) => {
          const inner = withRendered({ ...members, extra }, { extra: renderedValue(extra) })
          const value = { content: [{ text: new JsonAsText(inner) }], nested: new JsonAsText({ again: new JsonAsText(inner) }), inner }
          expect(joined(jsonPieces(value, slice))).toBe(JSON.stringify(value))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('escapes a kept rendering inside JsonAsText a slice at a time as the answer reaches it, and once per rendering', () => {
    const description = '"quoted" \\ '.padEnd(1024 * 1024, 'x')
    const kept = renderedValue(description)
    const value = () => ({ text: new JsonAsText(withRendered({ description }, { description: kept })) })
    const before = { ...escapeCounts }
    escapeCounts.largestStep = 0
    const pieces = jsonPieces(value(), SLICE)
    pieces.next()
    // the first piece needed one slice of the 1 MiB escaped, not all of it
    expect(escapeCounts.bytes - before.bytes).toBeLessThanOrEqual(SLICE)
    const first = joined([...jsonPieces(value(), SLICE)])
    expect(first).toBe(JSON.stringify(value()))
    expect(escapeCounts.largestStep).toBe(SLICE)
    // the answer given up half way kept nothing; the whole one kept its parts: the next answer escapes nothing
    const whole = escapeCounts.bytes
    expect(whole - before.bytes).toBe(SLICE + kept.json.byteLength)
    expect(joined([...jsonPieces(value(), SLICE)])).toBe(first)
    expect(escapeCounts.bytes).toBe(whole)
  })

  it('sends a long kept rendering as views of its own bytes and copies only the text around it and short kept ones', () => {
    const slice = 64 * 1024
    // ten 100 KB descriptions kept (as tool_description keeps them) and a short one, copied with the text
    const renderings = Array.from({ length: 10 }, (_, i) => renderedValue(`${i} `.padEnd(100_000, 'x')))
    const tools = renderings.map((r, i) => withRendered({ name: `t${i}`, description: r.value }, { description: r }))
    const short = renderedValue('y'.repeat(2_000))
    tools.push(withRendered({ name: 'short', description: short.value }, { description: short }))
    const value = { isError: false, content: { tools } }
    const pieces = [...jsonPieces(value, slice)]
    expect(joined(pieces)).toBe(JSON.stringify(value))
    expect(Math.max(...pieces.map((p) => p.byteLength))).toBeLessThanOrEqual(slice)
    const keptBuffers = new Set<ArrayBufferLike>(renderings.map((r) => r.json.buffer))
    const sent = (inKept: boolean) => pieces.filter((p) => keptBuffers.has(p.buffer) === inKept).reduce((sum, p) => sum + p.byteLength, 0)
    // every byte of the long ones left in their own buffers; copied: names, punctuation and the short one
    expect(sent(true)).toBe(renderings.reduce((sum, r) => sum + r.json.byteLength, 0))
    expect(sent(false)).toBe(Buffer.byteLength(JSON.stringify(value)) - sent(true))
    expect(sent(false)).toBeLessThan(2_000 + 600)
  })

  it('keeps a rendering made a slice at a time byte for byte as the one made at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 1, max: 300 }), async (value, slice) => {
        expect(Buffer.from((await renderedValueInSlices(value, slice)).json)).toEqual(Buffer.from(renderedValue(value).json))
      }),
      { numRuns: 200 },
    )
  })
})
