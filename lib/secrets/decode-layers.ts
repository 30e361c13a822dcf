/**
 * The text a client would see after unwrapping it: one layer of the escapes results commonly carry
 * (percent-encoding, JSON/JS string escapes, HTML character references) decoded per call, with
 * where each decoded character came from in the original text, so a secret found in a decoded
 * layer is redacted in the original. The scrubber (./scrubber.ts) searches the original and the
 * layers below it; a secret escaped twice (JSON inside JSON, `%2541`), or character by character
 * (`\u0073\u0065…`, `\x73`, `&#x73;`), is plain text one or two layers down.
 *
 * Only the windows around escapes are decoded. A secret that shows in layer k + 1 but not in layer
 * k spans at least one character an escape produced, so it lies within the longest spelling's
 * length of that escape; and an escape in layer k + 1 holds a character layer k's decoding
 * produced (the same characters, unchanged, would have been decoded in layer k already). So each
 * layer below the original is a set of pieces: windows of `windowMargin` characters either side of
 * the escapes of the layer above, merged where they overlap. Text with sparse escapes (JSON with a
 * few `\n`, a URL among prose) costs a scan for escape characters plus the windows, not another
 * full copy and search per layer; dense escapes merge into one piece, never more text than the layer.
 *
 * Cost: one scan per piece, linear in its length; the pieces of a layer never hold more characters
 * than the pieces above them; the scrubber stops at the first layer with no escape and after
 * MAX_LAYERS, and counts what it scanned and searched.
 */

/** Layers decoded below the original text. */
export const MAX_LAYERS = 4

/** The most characters one escape spans: a 4-byte UTF-8 sequence percent-encoded (`&#x10FFFF;` and `\u{10FFFF}` take 10). */
export const ESCAPE_REACH = 12

/**
 * How far a window reaches either side of an escape for spellings up to `longest` characters: the
 * spelling's length, plus an escape's reach for each layer below, since the next layer's escapes
 * sit within one escape's reach of this layer's and their windows must still fit in this piece.
 */
export const windowMargin = (longest: number) => Math.max(0, longest - 1) + ESCAPE_REACH * (MAX_LAYERS - 1)

/**
 * A contiguous region of one layer: the original text (no parent), or a window [base, …) of a
 * parent piece with its escapes decoded. A window's text is built only when it is scanned for the
 * next layer's escapes; searching it needs only the replacements (LiteralSearch.spansBelow).
 */
export class Piece {
  private built?: string

  constructor(
    readonly parent: Piece | undefined,
    /** Parent index of this piece's first character. */
    readonly base: number,
    /** Length of the piece in UTF-16 units. */
    readonly length: number,
    /** Per decoded escape, in order: index of its first unit here, its units (2 past the BMP), its code point, its source [start, end) in the parent. */
    readonly at: Int32Array,
    readonly units: Uint8Array,
    readonly codePoint: Int32Array,
    readonly sourceStart: Int32Array,
    readonly sourceEnd: Int32Array,
    text?: string,
  ) {
    this.built = text
  }

  get text(): string {
    this.built ??= this.build()
    return this.built
  }

  get parentText(): string {
    return this.parent?.text ?? ''
  }

  /** The parent's text of the window with each escape replaced by its code point. */
  private build(): string {
    const parentText = this.parent!.text
    if (SCRATCH.length < this.length) SCRATCH = new Uint16Array(Math.max(this.length, SCRATCH.length * 2))
    const out = SCRATCH
    let len = 0
    let pos = this.base
    for (let m = 0; m < this.at.length; m++) {
      for (const start = this.sourceStart[m]; pos < start; pos++) out[len++] = parentText.charCodeAt(pos)
      let cp = this.codePoint[m]
      if (cp > 0xffff) {
        cp -= 0x10000
        out[len++] = 0xd800 + (cp >> 10)
        cp = 0xdc00 + (cp & 0x3ff)
      }
      out[len++] = cp
      pos = this.sourceEnd[m]
    }
    while (len < this.length) out[len++] = parentText.charCodeAt(pos++)
    // utf16le keeps lone surrogates as they are (TextDecoder would turn them into U+FFFD)
    return Buffer.from(out.buffer, out.byteOffset, 2 * len).toString('utf16le')
  }

  /**
   * Could an escape of the next layer lie in this piece? Such an escape holds a character this
   * layer's decoding produced (the same characters unchanged would have been decoded here), so it
   * starts with '%', '\\' or '&' at most ESCAPE_REACH − 1 characters before a replacement.
   */
  mayHoldEscapes(): boolean {
    const parentText = this.parent!.text
    let from = this.base
    for (let m = 0; m < this.at.length; m++) {
      const cp = this.codePoint[m]
      if (cp === 37 || cp === 92 || cp === 38) return true
      for (let i = Math.max(from, this.sourceStart[m] - (ESCAPE_REACH - 1)); i < this.sourceStart[m]; i++) {
        const c = parentText.charCodeAt(i)
        if (c === 37 || c === 92 || c === 38) return true
      }
      from = this.sourceEnd[m]
    }
    return false
  }
}

const NONE = new Int32Array(0)
let SCRATCH = new Uint16Array(1024)

export const originalPiece = (text: string): Piece => new Piece(undefined, 0, text.length, NONE, new Uint8Array(0), NONE, NONE, NONE, text)

/** Could any escape start here? (No '%', '\\' or '&': nothing to decode.) */
export const mayHoldEscapes = (text: string) => /[%\\&]/.test(text)

/** Where character `j` of `piece` came from in its parent: the start of it, or (`end`) the exclusive end. */
function sourceOf(piece: Piece, j: number, end: boolean): number {
  const { at } = piece
  let lo = 0
  let hi = at.length - 1
  let m = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (at[mid] <= j) {
      m = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  const step = end ? 1 : 0
  if (m < 0) return piece.base + j + step
  const after = at[m] + piece.units[m]
  if (j < after) return end ? piece.sourceEnd[m] : piece.sourceStart[m]
  return piece.sourceEnd[m] + (j - after) + step
}

/** Original-text start of character `j` of a piece. */
export function startOf(piece: Piece, j: number): number {
  for (let p: Piece | undefined = piece; p.parent; p = p.parent) j = sourceOf(p, j, false)
  return j
}

/** Original-text end (exclusive) of character `j` of a piece. */
export function endOf(piece: Piece, j: number): number {
  let end = j + 1
  for (let p: Piece | undefined = piece; p.parent; p = p.parent) end = sourceOf(p, end - 1, true)
  return end
}

/** Value of a hex digit's char code, or -1. */
const HEX_VALUE = new Int8Array(128).fill(-1)
for (let c = 0; c < 10; c++) HEX_VALUE[48 + c] = c
for (let c = 0; c < 6; c++) HEX_VALUE[65 + c] = HEX_VALUE[97 + c] = 10 + c
function hexAt(text: string, i: number): number {
  const c = text.charCodeAt(i)
  return c < 128 ? HEX_VALUE[c] : -1
}
/** Value of `width` hex digits at `i`, or -1. */
function hexRun(text: string, i: number, width: number): number {
  if (i + width > text.length) return -1
  let v = 0
  for (let k = 0; k < width; k++) {
    const d = hexAt(text, i + k)
    if (d < 0) return -1
    v = v * 16 + d
  }
  return v
}

/** `\x` escapes with one character: the JSON and JS ones. */
const SIMPLE = new Int32Array(128).fill(-1)
for (const [c, v] of [
  ['"', 34],
  ["'", 39],
  ['\\', 92],
  ['/', 47],
  ['n', 10],
  ['r', 13],
  ['t', 9],
  ['b', 8],
  ['f', 12],
] as const)
  SIMPLE[c.charCodeAt(0)] = v
const ENTITIES: Record<string, number> = { amp: 38, lt: 60, gt: 62, quot: 34, apos: 39, nbsp: 0xa0 }
/** An HTML reference is `&` + at most 8 characters + `;`. */
const ENTITY_REACH = 10

/**
 * Escapes the last scan found, in order: source [start, end) and code point. Module scratch,
 * grown on demand, so a scan allocates nothing per escape.
 */
const FOUND = { count: 0, start: new Int32Array(256), end: new Int32Array(256), cp: new Int32Array(256) }
function found(start: number, end: number, cp: number) {
  if (FOUND.count === FOUND.start.length) {
    const size = FOUND.count * 2
    const start2 = new Int32Array(size)
    const end2 = new Int32Array(size)
    const cp2 = new Int32Array(size)
    start2.set(FOUND.start)
    end2.set(FOUND.end)
    cp2.set(FOUND.cp)
    FOUND.start = start2
    FOUND.end = end2
    FOUND.cp = cp2
  }
  FOUND.start[FOUND.count] = start
  FOUND.end[FOUND.count] = end
  FOUND.cp[FOUND.count++] = cp
}

/** Characters the scans have looked at past an escape's first character (the look-ahead work), in all. */
export const lookahead = { characters: 0 }

/** Escape at `i` (text[i] is '\\'): records it and answers its end, or `i` when none starts there. */
function backslashAt(text: string, i: number): number {
  lookahead.characters += 10
  const d = text.charCodeAt(i + 1)
  if (d === 117 /* u */ && text.charCodeAt(i + 2) === 123 /* { */) {
    let v = 0
    let k = i + 3
    for (let digit = hexAt(text, k); digit >= 0 && k < i + 10; digit = hexAt(text, ++k)) v = v * 16 + digit
    if (k > i + 3 && text.charCodeAt(k) === 125 /* } */ && v <= 0x10ffff) {
      found(i, k + 1, v)
      return k + 1
    }
  } else if (d === 117 /* u */ || d === 120 /* x */) {
    const width = d === 117 ? 4 : 2
    const v = hexRun(text, i + 2, width)
    if (v >= 0) {
      found(i, i + 2 + width, v)
      return i + 2 + width
    }
  } else if (d < 128 && SIMPLE[d] >= 0) {
    found(i, i + 2, SIMPLE[d])
    return i + 2
  }
  return i
}

/** HTML character reference at `i` (text[i] is '&'): records it and answers its end, or `i`. Looks at most ENTITY_REACH characters ahead. */
function referenceAt(text: string, i: number): number {
  const limit = Math.min(text.length, i + ENTITY_REACH + 1)
  let semi = i + 1
  while (semi < limit && text.charCodeAt(semi) !== 59 /* ; */) semi++
  lookahead.characters += semi - i
  if (semi >= limit || semi === i + 1) return i
  let v = -1
  if (text.charCodeAt(i + 1) === 35 /* # */) {
    const hex = text.charCodeAt(i + 2) === 120 || text.charCodeAt(i + 2) === 88
    const first = i + (hex ? 3 : 2)
    if (first < semi) {
      v = 0
      for (let k = first; k < semi && v >= 0; k++) {
        const digit = hex ? hexAt(text, k) : text.charCodeAt(k) - 48
        v = digit >= 0 && digit < (hex ? 16 : 10) ? v * (hex ? 16 : 10) + digit : -1
      }
    }
  } else v = ENTITIES[text.slice(i + 1, semi).toLowerCase()] ?? -1
  if (v < 0 || v > 0x10ffff) return i
  found(i, semi + 1, v)
  return semi + 1
}

/** Byte of the k-th `%HH` of a run from `start`. */
const byteAt = (text: string, start: number, k: number) => hexRun(text, start + 3 * k + 1, 2)

/**
 * The run of `%HH` escapes from `start`, decoded as UTF-8: records every character that decodes;
 * bytes that are not valid UTF-8 stay as they were written. Answers where the run ends (`start`:
 * no escape starts there).
 */
function percentRunAt(text: string, start: number): number {
  let i = start
  while (text.charCodeAt(i) === 37 && hexRun(text, i + 1, 2) >= 0) i += 3
  lookahead.characters += i - start + 3
  const total = (i - start) / 3
  let b = 0
  while (b < total) {
    const size = utf8At(text, start, b, total)
    if (size > 0) {
      found(start + 3 * b, start + 3 * (b + size), UTF8_CP)
      b += size
    } else b++
  }
  return i
}

let UTF8_CP = 0
/** Length of the well-formed UTF-8 sequence at byte `b` of a percent run (its code point in UTF8_CP), or 0. */
function utf8At(text: string, start: number, b: number, total: number): number {
  const lead = byteAt(text, start, b)
  if (lead < 0x80) {
    UTF8_CP = lead
    return 1
  }
  const size = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0
  if (!size || b + size > total) return 0
  const second = byteAt(text, start, b + 1)
  // the second byte's range excludes overlong forms, surrogates and code points past U+10FFFF
  const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80
  const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf
  if (second < low || second > high) return 0
  let cp = (lead & (0xff >> (size + 1))) * 64 + (second & 0x3f)
  for (let k = 2; k < size; k++) {
    const next = byteAt(text, start, b + k)
    if (next < 0x80 || next > 0xbf) return 0
    cp = cp * 64 + (next & 0x3f)
  }
  UTF8_CP = cp
  return size
}

/**
 * Finds every escape in `text` into FOUND, left to right; answers how many. Jumps between the
 * characters an escape can start with (native `indexOf`), so prose between escapes costs no JS step.
 */
function scan(text: string): number {
  FOUND.count = 0
  const n = text.length
  let percent = text.indexOf('%')
  let backslash = text.indexOf('\\')
  let amp = text.indexOf('&')
  let i = 0
  for (;;) {
    if (percent >= 0 && percent < i) percent = text.indexOf('%', i)
    if (backslash >= 0 && backslash < i) backslash = text.indexOf('\\', i)
    if (amp >= 0 && amp < i) amp = text.indexOf('&', i)
    let at = n
    if (percent >= 0) at = percent
    if (backslash >= 0 && backslash < at) at = backslash
    if (amp >= 0 && amp < at) at = amp
    if (at === n) return FOUND.count
    const c = text.charCodeAt(at)
    const end = c === 37 ? percentRunAt(text, at) : c === 92 ? backslashAt(text, at) : referenceAt(text, at)
    i = end > at ? end : at + 1
  }
}

/** `text` one layer down, decoded in full (the text itself when nothing in it decodes). */
export function decodedOnce(text: string): string {
  return decodeBelow(originalPiece(text), text.length)[0]?.text ?? text
}

/**
 * The pieces one layer below `piece`: each window of `margin` characters around its escapes
 * (merged where they overlap) with the escapes decoded. None when nothing in `piece` decodes.
 */
export function decodeBelow(piece: Piece, margin: number): Piece[] {
  const { text } = piece
  if (!mayHoldEscapes(text) || scan(text) === 0) return []
  const n = text.length
  const count = FOUND.count
  const pieces: Piece[] = []
  let first = 0
  while (first < count) {
    const windowStart = Math.max(0, FOUND.start[first] - margin)
    let last = first
    while (last + 1 < count && FOUND.start[last + 1] - margin <= FOUND.end[last] + margin) last++
    const windowEnd = Math.min(n, FOUND.end[last] + margin)
    pieces.push(decodeWindow(piece, windowStart, windowEnd, first, last + 1))
    first = last + 1
  }
  return pieces
}

/** The window [from, to) of `parent` with FOUND's escapes [first, end) decoded (its text is built on demand). */
function decodeWindow(parent: Piece, from: number, to: number, first: number, end: number): Piece {
  const escapes = end - first
  const at = new Int32Array(escapes)
  const units = new Uint8Array(escapes)
  let length = to - from
  let pos = from
  let len = 0
  for (let e = first; e < end; e++) {
    len += FOUND.start[e] - pos
    at[e - first] = len
    const u = FOUND.cp[e] > 0xffff ? 2 : 1
    units[e - first] = u
    len += u
    length -= FOUND.end[e] - FOUND.start[e] - u
    pos = FOUND.end[e]
  }
  return new Piece(parent, from, length, at, units, FOUND.cp.slice(first, end), FOUND.start.slice(first, end), FOUND.end.slice(first, end))
}
