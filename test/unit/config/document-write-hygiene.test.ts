/**
 * The write path's text check (checkDocumentWrite): it skips the walk over the parsed data when
 * the text itself shows no way to an unsafe character, and walks in turns of the event loop when
 * it must. Neither may change what is refused: its issues are checkDocumentText's, for any text.
 */
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { checkDocumentText, checkDocumentWrite } from '../../../lib/config/text-hygiene'
import { INLINE_YAML } from '../../../lib/config/yaml'
import { useTurnWait } from '../../../lib/runtime/turns'

/** Counts the turns taken through lib/runtime/turns.ts while `run` runs. */
async function turnsTaken(run: () => Promise<unknown>): Promise<number> {
  let turns = 0
  useTurnWait(() => {
    turns++
    return undefined
  })
  try {
    await run()
  } finally {
    useTurnWait(undefined)
  }
  return turns
}

afterEach(() => useTurnWait(undefined))

/** bigDocument(60_000) holds 60,003 values (the root, `openapi`, `paths`, and 4 a path): a walk of 4,096 a turn takes 14 turns. */
const VALUES_TURNS = Math.floor(60_003 / 4_096)

/** A spec-like document of about `values` strings and keys, clean but for `extra`, put into one string's JSON text as it is (an escape stays an escape). */
const bigDocument = (values: number, extra = '') =>
  JSON.stringify({
    openapi: '3.0.0',
    paths: Object.fromEntries(
      Array.from({ length: values / 4 }, (_, i) => [
        `/p${i}`,
        { get: { summary: `op ${i}${i === 7 ? '@EXTRA@' : ''}`, operationId: `o${i}` } },
      ]),
    ),
  }).replace('@EXTRA@', extra)

// characters that are safe, unsafe, or start escapes, and escapes of each kind, in JSON and in YAML's double quotes
const PIECES = ['a', ' ', 'é', '\\', '"', '/', '\n', '\t', '\r', '\u0007', '\u0085', '\u202e', '\u2028', '\u{e0041}', 'u', 'x', 'N', '0']
const ESCAPES = [
  '\\n',
  '\\t',
  '\\r',
  '\\"',
  '\\\\',
  '\\/',
  '\\u0041',
  '\\u202e',
  '\\u0007',
  '\\b',
  '\\f',
  '\\x07',
  '\\N',
  '\\e',
  '\\ ',
  '\\_',
  '\\L',
  '\\P',
  '\\0',
]

describe('the write-time text check', () => {
  it('refuses what checkDocumentText refuses, for any mix of characters and escapes, in JSON and in YAML', async () => {
    const piece = fc.oneof(fc.constantFrom(...PIECES), fc.constantFrom(...ESCAPES))
    const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''))
    // texts that parse and are refused, and texts that parse and pass: neither side of the check is vacuous
    let refused = 0
    let passed = 0
    await fc.assert(
      fc.asyncProperty(text, text, fc.constantFrom('json', 'yaml-double', 'yaml-plain', 'yaml-block'), async (key, value, form) => {
        const [path, body] =
          form === 'json'
            ? ['specs/a.json', `{"k": "${value}", "${key}": 1}`]
            : form === 'yaml-double'
              ? ['tools/a.yaml', `k: "${value}"\n"${key}": 1\n`]
              : form === 'yaml-plain'
                ? ['tools/a.yaml', `k: x${value}\n`]
                : ['tools/a.yaml', `k: |\n  ${value}\n`]
        const written = await checkDocumentWrite(INLINE_YAML, 't', path, body)
        expect(written.issues).toEqual(checkDocumentText(path, body).issues)
        if (written.issues.length) refused++
        else if (written.json !== undefined) passed++
      }),
      { numRuns: 2_000 },
    )
    expect(refused).toBeGreaterThan(200)
    expect(passed).toBeGreaterThan(200)
  })

  it('takes no turn walking a long document whose text has no unsafe character and no escape', async () => {
    const body = bigDocument(60_000)
    expect(await turnsTaken(() => checkDocumentWrite(INLINE_YAML, 't', 'specs/a.json', body))).toBe(0)
  })

  it('walks a long document with one escape in turns of at most 4,096 values, and finds what it holds', async () => {
    const clean = bigDocument(60_000, '\\u00e9')
    expect(
      await turnsTaken(async () => expect((await checkDocumentWrite(INLINE_YAML, 't', 'specs/a.json', clean)).issues).toEqual([])),
    ).toBeGreaterThanOrEqual(VALUES_TURNS)
    const unsafe = bigDocument(60_000, '\\u202e')
    let issues: unknown[] = []
    const turns = await turnsTaken(async () => {
      issues = (await checkDocumentWrite(INLINE_YAML, 't', 'specs/a.json', unsafe)).issues
    })
    expect(issues).toEqual(checkDocumentText('specs/a.json', unsafe).issues)
    expect(issues).toHaveLength(1)
    expect(turns).toBeGreaterThanOrEqual(VALUES_TURNS)
  })
})
