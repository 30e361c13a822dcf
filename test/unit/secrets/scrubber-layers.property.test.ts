/**
 * Properties of scrubbing under layers (issue 21 N11, and the speed-up that decodes only windows
 * around escapes):
 * - a secret embedded in random text under a random stack of up to four layers a client would
 *   unwrap (JSON, percent, HTML, one escape per character, in any order, any case) is redacted:
 *   no layer of the scrubbed output, unwrapped by an independent decoder written here with regular
 *   expressions, holds the secret. The secret stands apart from the text around it by a space:
 *   found by this property, an escape the surrounding text begins and the secret's first or last
 *   characters finish (`\u00a` + `A…`, `…%7` + `a`) is decoded with them in the one-pass
 *   decoder's layer, and a client that unwraps only the other kind still sees the secret;
 * - the windowed layers redact exactly what decoding every layer in full would (the reference
 *   below decodes each piece as one window and searches all of it);
 * - the work stays inside the documented bound: at most 5 × the text's length searched, and the
 *   scan for escapes at most 12 characters looked at per character of each layer's pieces.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeBelow, endOf, MAX_LAYERS, originalPiece, type Piece, startOf } from '../../../lib/secrets/decode-layers'
import { LiteralSearch } from '../../../lib/secrets/literal-search'
import { reflectedForms, SecretScrubber } from '../../../lib/secrets/scrubber'

const hex = (n: number, width = 2) => n.toString(16).padStart(width, '0')
const utf8 = (c: string) => [...Buffer.from(c, 'utf8')]
const each = (f: (c: string) => string) => (t: string) => [...t].map(f).join('')

/** Layers a server, proxy or library puts around a whole text. */
const LAYERS: Record<string, (t: string) => string> = {
  jsonString: (t) => JSON.stringify(t).slice(1, -1),
  jsonQuoted: (t) => JSON.stringify({ v: t }),
  jsonAscii: (t) => JSON.stringify(t).replace(/[^\x00-\x7f]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`),
  jsonSlashes: (t) => JSON.stringify(t).replace(/\//g, '\\/'),
  uriComponent: encodeURIComponent,
  uriComponentLower: (t) => encodeURIComponent(t).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  uri: encodeURI,
  form: (t) => new URLSearchParams({ v: t }).toString().slice(2),
  html: (t) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`).replace(/&#38;/g, '&amp;'),
  // per UTF-16 unit, as JSON spells a character past the BMP
  perCharU: (t) => t.replace(/[\s\S]/g, (c) => `\\u${hex(c.charCodeAt(0), 4)}`),
  perCharBraces: each((c) => `\\u{${hex(c.codePointAt(0)!, 1)}}`),
  perCharX: (t) => t.replace(/[\s\S]/g, (c) => (c.charCodeAt(0) < 256 ? `\\x${hex(c.charCodeAt(0))}` : `\\u${hex(c.charCodeAt(0), 4)}`)),
  perCharDecimal: each((c) => `&#${c.codePointAt(0)};`),
  perCharHex: each((c) => `&#x${hex(c.codePointAt(0)!, 1).toUpperCase()};`),
  perCharPercent: each((c) =>
    utf8(c)
      .map((b) => `%${hex(b)}`)
      .join(''),
  ),
  // a backslash is always escaped, or the layer would not unwrap back to the text
  everyOtherU: (t) => [...t].map((c, i) => ((i % 2 || c === '\\') && c.length === 1 ? `\\u${hex(c.charCodeAt(0), 4)}` : c)).join(''),
}

/** Characters whose case maps one to one (no `ß`, no final sigma), with escape characters among them. */
const SECRET_CHARS = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!*()/+=:@ ',
  ...'"\'&%\\;#{}<>',
  ...'éÉжЖüÜñ',
  '😀',
]
const TEXT_CHARS = [...SECRET_CHARS, '%', '%4', '%25', '%C3', '\\', '\\u', '\\u00', '&', '&#', '&amp', ';', 'x', 'u{', '\n']

const secret = fc.array(fc.constantFrom(...SECRET_CHARS), { minLength: 6, maxLength: 14 }).map((cs) => cs.join(''))
const filler = fc.array(fc.constantFrom(...TEXT_CHARS), { maxLength: 24 }).map((cs) => cs.join(''))
const layerStack = fc.array(fc.constantFrom(...Object.keys(LAYERS)), { minLength: 1, maxLength: MAX_LAYERS })

/** Each character upper- or lower-cased at random (a server that changes case). */
const recase = (value: string, mask: number[]) =>
  [...value]
    .map((c, i) => (mask[i % mask.length] % 3 === 0 ? c.toUpperCase() : mask[i % mask.length] % 3 === 1 ? c.toLowerCase() : c))
    .join('')

/**
 * One layer down, written independently of lib/secrets/decode-layers.ts: every escape kind
 * decoded left to right in one pass, `%XX` runs as UTF-8.
 */
const ESCAPE =
  /((?:%[0-9a-f]{2})+)|\\u\{([0-9a-f]{1,7})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})|\\(["'\\/nrtbf])|&#x([0-9a-f]{1,7});|&#([0-9]{1,8});|&(amp|lt|gt|quot|apos|nbsp);/gi
const SIMPLE: Record<string, string> = { '"': '"', "'": "'", '\\': '\\', '/': '/', n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }
const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }
function unwrap(text: string): string {
  return text.replace(ESCAPE, (all, run, braces, u4, x2, simple, refHex, refDec, named) => {
    if (run)
      return Buffer.from(
        run
          .slice(1)
          .split('%')
          .map((h: string) => Number.parseInt(h, 16)),
      ).toString('utf8')
    const cp = Number.parseInt(braces ?? u4 ?? x2 ?? refHex ?? '', 16)
    if (braces ?? u4 ?? x2 ?? refHex) return cp <= 0x10ffff ? String.fromCodePoint(cp) : all
    if (refDec) return Number(refDec) <= 0x10ffff ? String.fromCodePoint(Number(refDec)) : all
    if (simple) return SIMPLE[simple]
    return NAMED[named.toLowerCase()]
  })
}
const folded = (t: string) => [...t].map((c) => c.toLowerCase()).join('')

describe('scrubbing under layers (property)', () => {
  it('a secret under any stack of up to four layers, in any case, is redacted in every layer of the output', () => {
    fc.assert(
      fc.property(
        secret,
        filler,
        filler,
        layerStack,
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        (value, before, after, stack, mask) => {
          const scrubber = new SecretScrubber(new Map([['K', value]]))
          // a space on each side: the one-pass decoder does not decode an escape begun in the text
          // around the secret and finished by its first characters (a known limit, docs/operations/security.md)
          let text = `${before} ${recase(value, mask)} ${after}`
          for (const layer of stack) text = LAYERS[layer](text)
          const out = scrubber.scrubText(text)
          expect(out).toContain('[redacted secret:K]')
          let layer = out
          for (let depth = 0; depth <= MAX_LAYERS; depth++) {
            expect(folded(layer).includes(folded(value)), `layer ${depth} of ${stack.join(' ∘ ')}: ${layer}`).toBe(false)
            layer = unwrap(layer)
          }
        },
      ),
      { numRuns: 400 },
    )
  })

  it('redacts a secret holding a backslash and a letter that a lower-casing server turned into an escape, under HTML entities', () => {
    // found by the property above (seed -785535876): `\\N` lower-cased is `\\n`, which the layer that decodes `&#34;` decodes too
    const scrubber = new SecretScrubber(new Map([['K', 'a\\Na"a']]))
    const text = LAYERS.perCharBraces(LAYERS.html(' a\\na"a '))
    expect(scrubber.scrubText(text)).toContain('[redacted secret:K]')
  })
  it('redacts exactly what decoding every layer in full and searching all of it redacts', () => {
    const fragment = fc.oneof(
      fc.constantFrom(
        '%41',
        '%C3%A9',
        '%25',
        '%2541',
        '%E2%82',
        '\\u0041',
        '\\\\',
        '\\u{1F600}',
        '&amp;',
        '&amp;#65;',
        '&#65;',
        '&#x41;',
        '\\"',
        '\\x41',
        '%F0%9F%98%80',
      ),
      filler,
      fc.nat(300).map((n) => 'z'.repeat(n)),
      fc
        .tuple(fc.constantFrom(...Object.keys(LAYERS)), fc.constantFrom(...Object.keys(LAYERS)))
        .map(([a, b]) => LAYERS[b](LAYERS[a]('Tok"en/ä%x'))),
    )
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 30 }), (fragments) => {
        const text = fragments.join('')
        const scrubber = new SecretScrubber(new Map([['K', 'Tok"en/ä%x']]))
        expect(covered(scrubber.regions(text), text.length)).toEqual(covered(fullLayerRegions(text, 'Tok"en/ä%x'), text.length))
      }),
      { numRuns: 300 },
    )
  })

  it('searches at most the text and four layers of it, however the escapes are laid out', () => {
    const piece = fc.oneof(
      filler,
      fc.constantFrom(...Object.keys(LAYERS)).map((l) => LAYERS[l]('a%b&c\\d')),
    )
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 40 }), layerStack, (pieces, stack) => {
        let text = pieces.join('')
        for (const layer of stack) text = LAYERS[layer](text)
        const scrubber = new SecretScrubber(new Map([['K', 'never-in-the-text']]))
        scrubber.scrubText(text)
        expect(scrubber.charactersSearched).toBeLessThanOrEqual((MAX_LAYERS + 1) * text.length)
        // a piece is scanned once, and past each escape character at most an escape's length is looked at
        expect(scrubber.charactersScanned).toBeLessThanOrEqual(12 * MAX_LAYERS * text.length)
      }),
      { numRuns: 200 },
    )
  })
})

/** Every layer decoded in full (one window per piece) and searched from end to end. */
function fullLayerRegions(text: string, value: string) {
  const search = new LiteralSearch([...reflectedForms(value)].map((f) => [f, 'K'] as const))
  const regions = search.spans(text)
  let layer: Piece[] = [originalPiece(text)]
  for (let depth = 0; depth < MAX_LAYERS; depth++) {
    layer = layer.flatMap((piece) => decodeBelow(piece, Number.MAX_SAFE_INTEGER))
    for (const piece of layer)
      for (const s of search.spans(piece.text))
        regions.push({ start: startOf(piece, s.start), end: endOf(piece, s.end - 1), value: s.value })
  }
  return regions
}

const covered = (regions: { start: number; end: number }[], length: number) => {
  const marks = new Uint8Array(length)
  for (const r of regions) marks.fill(1, r.start, r.end)
  return Array.from(marks).join('')
}
