/**
 * The text a client would see after unwrapping it: one layer of the escapes results commonly carry
 * (percent-encoding, JSON/JS string escapes, HTML character references) decoded per call, with
 * where each decoded character came from in the original text, so a secret found in a decoded
 * layer is redacted in the original. The scrubber (./scrubber.ts) searches the original and each
 * decoded layer; a secret escaped twice (JSON inside JSON, `%2541`), or character by character
 * (`\u0073\u0065…`, `\x73`, `&#x73;`), is plain text one or two layers down.
 *
 * Cost: one pass per layer, linear in the layer's length (a layer is never longer than the one it
 * was decoded from); the scrubber stops at the first layer that decodes nothing and after
 * MAX_LAYERS, and counts every character it decoded.
 */

/** Layers decoded below the original text. */
export const MAX_LAYERS = 4

export interface Layer {
  text: string
  /** Original-text start of each character of `text`; absent: the original text itself (character i is at i). */
  from?: Int32Array
  /** Original-text end (exclusive) of each character of `text`; absent with `from`. */
  to?: Int32Array
}

/** The original text as layer 0 (no position tables: a character is where it is). */
export const originalLayer = (text: string): Layer => ({ text })

/** Where character `i` of a layer came from in the original text: [start, end). */
export const startOf = (layer: Layer, i: number) => (layer.from ? layer.from[i] : i)
export const endOf = (layer: Layer, i: number) => (layer.to ? layer.to[i] : i + 1)

/** Could any escape start here? (No '%', '\\' or '&': nothing to decode.) */
export const mayHoldEscapes = (text: string) => /[%\\&]/.test(text)

/** Value of a hex digit's char code, or -1. */
const HEX_VALUE = new Int8Array(128).fill(-1)
for (let c = 0; c < 10; c++) HEX_VALUE[48 + c] = c
for (let c = 0; c < 6; c++) HEX_VALUE[65 + c] = HEX_VALUE[97 + c] = 10 + c
const hexAt = (text: string, i: number) => {
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
const UTF16 = new TextDecoder('utf-16le')
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** One layer down, or undefined when nothing in `layer` decodes. One pass; the output is never longer than the input. */
export function decodeLayer(layer: Layer): Layer | undefined {
  const { text } = layer
  const lf = layer.from
  const lt = layer.to
  const n = text.length
  const out = new Uint16Array(n)
  const from = new Int32Array(n)
  const to = new Int32Array(n)
  let len = 0
  let changed = false
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    // an escape decodes to one code point `cp` from text[i, end); -1: none starts here
    let cp = -1
    let end = i
    if (c === 37 /* % */) {
      const runEnd = percentRun(text, i)
      if (runEnd > i) {
        // the run's characters, each with the escapes it came from
        for (let k = 0; k < RUN.count; k++) {
          const s0 = RUN.start[k]
          const e0 = RUN.end[k]
          len = put(out, from, to, len, RUN.cp[k], lf ? lf[s0] : s0, lt ? lt[e0 - 1] : e0)
        }
        i = runEnd
        changed = true
        continue
      }
    } else if (c === 92 /* \ */ && i + 1 < n) {
      const d = text.charCodeAt(i + 1)
      if (d === 117 /* u */ && text.charCodeAt(i + 2) === 123 /* { */) {
        let v = 0
        let k = i + 3
        while (k < n && k < i + 10 && hexAt(text, k) >= 0) v = v * 16 + hexAt(text, k++)
        if (k > i + 3 && text.charCodeAt(k) === 125 /* } */ && v <= 0x10ffff) {
          cp = v
          end = k + 1
        }
      } else if (d === 117 /* u */ || d === 120 /* x */) {
        const width = d === 117 ? 4 : 2
        const v = hexRun(text, i + 2, width)
        if (v >= 0) {
          cp = v
          end = i + 2 + width
        }
      } else if (d < 128 && SIMPLE[d] >= 0) {
        cp = SIMPLE[d]
        end = i + 2
      }
    } else if (c === 38 /* & */) {
      const semi = text.indexOf(';', i + 1)
      if (semi > i + 1 && semi - i <= 10) {
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
        if (v >= 0 && v <= 0x10ffff) {
          cp = v
          end = semi + 1
        }
      }
    }
    if (cp >= 0) {
      len = put(out, from, to, len, cp, lf ? lf[i] : i, lt ? lt[end - 1] : end)
      i = end
      changed = true
      continue
    }
    out[len] = c
    from[len] = lf ? lf[i] : i
    to[len++] = lt ? lt[i] : i + 1
    i++
  }
  if (!changed) return undefined
  return { text: UTF16.decode(out.subarray(0, len)), from: from.subarray(0, len), to: to.subarray(0, len) }
}

/** Writes one code point (two units past the BMP) at `len`; answers the new length. */
function put(out: Uint16Array, from: Int32Array, to: Int32Array, len: number, cp: number, f: number, t: number): number {
  if (cp > 0xffff) {
    cp -= 0x10000
    out[len] = 0xd800 + (cp >> 10)
    from[len] = f
    to[len++] = t
    cp = 0xdc00 + (cp & 0x3ff)
  }
  out[len] = cp
  from[len] = f
  to[len] = t
  return len + 1
}

/** The characters of the last percent run: code point and the escapes [start, end) it came from. */
const RUN = { count: 0, cp: new Int32Array(64), start: new Int32Array(64), end: new Int32Array(64) }
const runPush = (cp: number, start: number, end: number) => {
  if (RUN.count === RUN.cp.length) {
    const grow = (a: Int32Array) => {
      const b = new Int32Array(a.length * 2)
      b.set(a)
      return b
    }
    RUN.cp = grow(RUN.cp)
    RUN.start = grow(RUN.start)
    RUN.end = grow(RUN.end)
  }
  RUN.cp[RUN.count] = cp
  RUN.start[RUN.count] = start
  RUN.end[RUN.count++] = end
}
const BYTES = new Uint8Array(4)

/**
 * The run of `%HH` escapes from `start`, decoded as UTF-8 into RUN; bytes that are not valid
 * UTF-8 stay as they were written. Answers where the run ends (`start`: no escape starts there).
 */
function percentRun(text: string, start: number): number {
  RUN.count = 0
  let i = start
  while (text.charCodeAt(i) === 37 && hexRun(text, i + 1, 2) >= 0) i += 3
  if (i === start) return start
  const byteAt = (k: number) => hexRun(text, start + 3 * k + 1, 2)
  const total = (i - start) / 3
  let b = 0
  while (b < total) {
    const lead = byteAt(b)
    const size = lead < 0x80 ? 1 : lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0
    const at = start + 3 * b
    let cp = -1
    if (size === 1) cp = lead
    else if (size && b + size <= total) {
      for (let k = 0; k < size; k++) BYTES[k] = byteAt(b + k)
      try {
        cp = UTF8.decode(BYTES.subarray(0, size)).codePointAt(0) ?? -1
      } catch {
        cp = -1
      }
    }
    if (cp < 0) {
      // not UTF-8: the three characters as written
      for (let k = 0; k < 3; k++) runPush(text.charCodeAt(at + k), at + k, at + k + 1)
      b++
    } else {
      runPush(cp, at, at + 3 * size)
      b += size
    }
  }
  return i
}
