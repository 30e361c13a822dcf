/**
 * The streaming budget scan of a JSON body (lib/config/json-byte-scan.ts): fed a body's bytes in
 * any chunking, it refuses exactly what the sliced parse refuses for its budgets (an over-long
 * limited root member, nesting past the limit), at the byte where the refusal becomes certain —
 * asserted on the bytes it had read, never on a timing.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type ByteScanRefusal, JsonByteScan } from '../../../lib/config/json-byte-scan'
import { parseJsonInSlices } from '../../../lib/config/json-slices'
import { jsonDeeperThan } from '../../../lib/config/nesting'

const utf8 = (text: string) => new TextEncoder().encode(text)

/** Feeds `bytes` cut at `cuts`; the refusal and how many bytes had been fed when it came. */
function scan(bytes: Uint8Array, cuts: number[], maxDepth: number, limits: Record<string, number>) {
  const s = new JsonByteScan(maxDepth, limits)
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  let from = 0
  for (const to of [...at, bytes.length]) {
    if (to <= from) continue
    const refusal = s.feed(bytes.subarray(from, to))
    if (refusal) return { refusal, fed: to }
    from = to
  }
  return { refusal: undefined as ByteScanRefusal | undefined, fed: bytes.length }
}

/** JSON values whose root members may be the limited names, with strings full of quotes and backslashes. */
const member = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)),
    fc.string({ maxLength: 8, unit: fc.constantFrom('a', '"', '\\', 'é', '😀', '[', ',', '{', 'u') }),
    fc.array(tie('v'), { maxLength: 8 }),
    fc.dictionary(fc.constantFrom('models', 'x', 'allowedTools', 'a"b'), tie('v'), { maxKeys: 4 }),
  ),
})).v
const body = fc.dictionary(fc.constantFrom('models', 'allowedTools', 'recipe', 'mo\\dels', 'x'), member, { maxKeys: 5 })

describe('JsonByteScan', () => {
  it('refuses what the sliced parse refuses, and only that, however the bytes are cut (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 2, max: 6 }),
        fc.boolean(),
        fc.boolean(),
        async (value, cuts, maxDepth, spaced, escapeKey) => {
          let text = JSON.stringify(value, null, spaced ? 1 : undefined)
          // a key spelled with an escape is the same key to JSON.parse
          if (escapeKey) text = text.replace('"models"', '"mod\\u0065ls"')
          const limits = { models: 3, allowedTools: 2 }
          const { refusal, fed } = scan(utf8(text), cuts, maxDepth, limits)
          const parsed = await parseJsonInSlices(text, { maxDepth, itemLimits: limits, pause: async () => {} })
          const deep = jsonDeeperThan(text, maxDepth)
          if (refusal?.kind === 'tooDeep') {
            expect(deep).toBeGreaterThanOrEqual(0)
            expect(utf8(text.slice(0, deep)).length).toBe(refusal.offset)
          } else if (refusal?.kind === 'overLimit') {
            expect(refusal.atLeast).toBe(refusal.limit + 1)
            expect(fed).toBeGreaterThan(refusal.offset)
            // the sliced parse counts the array to its end: nesting too deep inside it, past the refusal point, is what it may find first
            if ('tooDeep' in parsed) expect(utf8(text.slice(0, deep)).length).toBeGreaterThan(refusal.offset)
            else expect(parsed).toMatchObject({ ok: false, overLimit: { member: refusal.member, limit: refusal.limit } })
          } else {
            expect(deep).toBe(-1)
            expect(parsed.ok).toBe(true)
          }
        },
      ),
      { numRuns: 400 },
    )
  })

  it('refuses 20,000 models at the 17th, having read the first 4 KiB chunk of a 340 KB body and nothing more', () => {
    const bytes = utf8(JSON.stringify({ models: Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`) }))
    const cuts = Array.from({ length: Math.floor(bytes.length / 4096) }, (_, i) => (i + 1) * 4096)
    const { refusal, fed } = scan(bytes, cuts, 100, { models: 16 })
    expect(refusal).toMatchObject({ kind: 'overLimit', member: 'models', atLeast: 17, limit: 16 })
    expect(fed).toBe(4096)
  })

  it('reads a string that goes on across chunks, its escaped quotes and a backslash run cut in two, as one string', () => {
    const text = `{"recipe": "a\\\\\\"[[[,,,${'\\\\'.repeat(3)}", "models": ["a", "b", "c"]}`
    const bytes = utf8(text)
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(scan(bytes, [cut], 3, { models: 2 }).refusal, `cut at ${cut}`).toMatchObject({ kind: 'overLimit', atLeast: 3 })
      expect(scan(bytes, [cut], 3, { models: 3 }).refusal, `cut at ${cut}`).toBeUndefined()
    }
  })
})
