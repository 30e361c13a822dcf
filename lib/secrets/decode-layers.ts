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
  /** Original-text start of each character of `text`. */
  from: Int32Array
  /** Original-text end (exclusive) of each character of `text`. */
  to: Int32Array
}

/** The original text as layer 0. */
export function originalLayer(text: string): Layer {
  const from = new Int32Array(text.length)
  const to = new Int32Array(text.length)
  for (let i = 0; i < text.length; i++) {
    from[i] = i
    to[i] = i + 1
  }
  return { text, from, to }
}

/** Could any escape start here? (No '%', '\\' or '&': nothing to decode.) */
export const mayHoldEscapes = (text: string) => /[%\\&]/.test(text)

const HEX = /^[0-9a-fA-F]+$/
const UTF8 = new TextDecoder('utf-8', { fatal: true })
const SIMPLE: Record<string, string> = { '"': '"', "'": "'", '\\': '\\', '/': '/', n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' }
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' }

/** One layer down, or undefined when nothing in `layer` decodes. */
export function decodeLayer(layer: Layer): Layer | undefined {
  const { text } = layer
  const n = text.length
  let out = ''
  const from = new Int32Array(n)
  const to = new Int32Array(n)
  let len = 0
  let changed = false
  const emit = (chars: string, start: number, end: number) => {
    for (let k = 0; k < chars.length; k++) {
      from[len] = layer.from[start]
      to[len] = layer.to[end - 1]
      len++
    }
    out += chars
  }
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 37 /* % */) {
      const run = percentRun(text, i)
      if (run) {
        for (const [chars, s, e] of run.chars) emit(chars, s, e)
        i = run.end
        changed = true
        continue
      }
    } else if (c === 92 /* \ */ && i + 1 < n) {
      const d = text[i + 1]
      if (d === 'u' && text[i + 2] === '{') {
        const close = text.indexOf('}', i + 3)
        const hex = close > 0 && close - i - 3 <= 6 ? text.slice(i + 3, close) : ''
        const cp = hex && HEX.test(hex) ? Number.parseInt(hex, 16) : -1
        if (cp >= 0 && cp <= 0x10ffff) {
          emit(String.fromCodePoint(cp), i, close + 1)
          i = close + 1
          changed = true
          continue
        }
      } else if (d === 'u' || d === 'x') {
        const width = d === 'u' ? 4 : 2
        const hex = text.slice(i + 2, i + 2 + width)
        if (hex.length === width && HEX.test(hex)) {
          emit(String.fromCharCode(Number.parseInt(hex, 16)), i, i + 2 + width)
          i += 2 + width
          changed = true
          continue
        }
      } else if (SIMPLE[d] !== undefined) {
        emit(SIMPLE[d], i, i + 2)
        i += 2
        changed = true
        continue
      }
    } else if (c === 38 /* & */) {
      const semi = text.indexOf(';', i + 1)
      if (semi > i + 1 && semi - i <= 10) {
        const ref = text.slice(i + 1, semi)
        let chars: string | undefined
        if (ref[0] === '#') {
          const hex = ref[1] === 'x' || ref[1] === 'X'
          const digits = ref.slice(hex ? 2 : 1)
          const cp = digits && (hex ? HEX.test(digits) : /^\d+$/.test(digits)) ? Number.parseInt(digits, hex ? 16 : 10) : -1
          if (cp >= 0 && cp <= 0x10ffff) chars = String.fromCodePoint(cp)
        } else chars = ENTITIES[ref.toLowerCase()]
        if (chars !== undefined) {
          emit(chars, i, semi + 1)
          i = semi + 1
          changed = true
          continue
        }
      }
    }
    emit(text[i], i, i + 1)
    i++
  }
  return changed ? { text: out, from: from.subarray(0, len), to: to.subarray(0, len) } : undefined
}

/**
 * A run of `%HH` escapes from `start` decoded as UTF-8, each character with the escapes it came
 * from; bytes that are not valid UTF-8 stay as they were written. Undefined when no escape starts here.
 */
function percentRun(text: string, start: number): { chars: [string, number, number][]; end: number } | undefined {
  const bytes: number[] = []
  let i = start
  while (i + 3 <= text.length && text.charCodeAt(i) === 37 && HEX.test(text.slice(i + 1, i + 3))) {
    bytes.push(Number.parseInt(text.slice(i + 1, i + 3), 16))
    i += 3
  }
  if (!bytes.length) return undefined
  const chars: [string, number, number][] = []
  let b = 0
  while (b < bytes.length) {
    const lead = bytes[b]
    const size = lead < 0x80 ? 1 : lead >= 0xf0 && lead < 0xf8 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0
    const at = start + 3 * b
    let decoded: string | undefined
    if (size && b + size <= bytes.length) {
      try {
        decoded = UTF8.decode(Uint8Array.from(bytes.slice(b, b + size)))
      } catch {
        decoded = undefined
      }
    }
    if (decoded === undefined) {
      chars.push(...[...text.slice(at, at + 3)].map((ch, k): [string, number, number] => [ch, at + k, at + k + 1]))
      b++
    } else {
      chars.push([decoded, at, at + 3 * size])
      b += size
    }
  }
  return { chars, end: i }
}
