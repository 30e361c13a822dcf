/**
 * Removes secret values from what a call returns (results, error messages, logged errors).
 *
 * What it catches: the forms a server, a proxy or a library is likely to ECHO by accident — the
 * raw value in any ASCII case, JSON-escaped (also `\uXXXX` and `\/` styles), HTML-escaped,
 * percent-encoded (encodeURIComponent, encodeURI, RFC 3986 strict, form encoding with `+`, with
 * either hex case), hex of its bytes, and base64/base64url — also inside a longer base64 text
 * (`user:secret` in a Basic credential): the three alignments a value can have after a prefix
 * are searched by their middle characters, which do not depend on the bytes around them.
 * What it cannot catch: a deliberate transformation (a tool author who sends a secret to their
 * own server, hashes it, reverses it, splits it). Scrubbing protects callers from accidental
 * echoes; it is not a confidentiality boundary against the tool's author.
 *
 * Layers: a value escaped twice (JSON inside JSON, percent-encoding of percent-encoding) or one
 * character at a time (`\u0073`, `\x73`, `&#115;`, `%73`) is found by searching the text a client
 * would get after unwrapping it (./decode-layers.ts): up to MAX_LAYERS layers, each decoded in one
 * pass, searched for every form again, a hit redacted where it was in the original text. Case is
 * folded for non-ASCII letters too (LiteralSearch).
 *
 * Every form of every secret is searched in one pass per string and layer (LiteralSearch), so the
 * cost is linear in the size of the result — at most (MAX_LAYERS + 1) × its length characters
 * searched, counted in `charactersSearched` — not in (size × number of forms).
 */
import {
  decodeBelow,
  decodedOnce,
  endOf,
  lookahead,
  MAX_LAYERS,
  mayHoldEscapes,
  originalPiece,
  type Piece,
  startOf,
  windowMargin,
} from './decode-layers'
import { LiteralSearch, type Span } from './literal-search'
import type { SecretValues } from './references'

/** Base64 characters shorter than this found inside a longer text are not treated as a secret. */
const MIN_EMBEDDED_BASE64 = 6

export class SecretScrubber {
  private readonly forms = new Map<string, string>()
  /**
   * Values added but not yet spelled out in every form: the forms are computed by the first
   * scrub. The service's logger holds the deployment's secret from import on, and a cold start
   * whose request logs nothing never needs them (docs/operations/cold-start-and-latency.md).
   */
  private readonly unspelled: { name: string; value: string }[] = []
  private search?: LiteralSearch<string>
  private readonly states: Int32Array[] = []
  /** Characters searched so far, over every layer of every text (the work scrubbing did). */
  charactersSearched = 0
  /** Characters scanned for escapes so far, look-ahead past each escape's first character included (text holding no '%', '\\' or '&' is not scanned). */
  charactersScanned = 0

  constructor(values: SecretValues = new Map()) {
    for (const [name, value] of values) this.add(name, value)
  }

  get isEmpty() {
    // a value that is not empty has at least one form: itself
    return this.forms.size === 0 && this.unspelled.length === 0
  }

  add(name: string, value: string) {
    if (value) this.unspelled.push({ name, value })
  }

  /** A value computed from a secret (a Basic credential, a signature) that must not leak either. */
  addDerived(name: string, derived: string) {
    // after what was added before it: a form found under two names keeps the first
    this.spell()
    this.remember(derived, name)
  }

  private spell() {
    for (const { name, value } of this.unspelled.splice(0)) for (const form of reflectedForms(value)) this.remember(form, name)
  }

  private remember(form: string, name: string) {
    if (!form) return
    if (!this.forms.has(form)) this.forms.set(form, name)
    this.search = undefined
  }

  scrubText(text: string): string {
    const spans = this.regions(text)
    if (!spans.length) return text
    let out = ''
    let last = 0
    for (const s of spans) {
      out += `${text.slice(last, s.start)}[redacted secret:${s.value}]`
      last = s.end
    }
    return out + text.slice(last)
  }

  /** What `scrubText` redacts: the regions of `text` holding a secret in any layer, merged, in order. */
  regions(text: string): Span<string>[] {
    this.spell()
    if (!this.forms.size || !text) return []
    this.search ??= new LiteralSearch(this.forms)
    return this.spansInLayers(text, this.search)
  }

  /**
   * Hits in the text and in each decoded layer below it, as merged regions of the original text.
   * A piece below is searched only where it differs from the text it was decoded from
   * (LiteralSearch.spansBelow), so only what decoding changed adds to `charactersSearched`.
   */
  private spansInLayers(text: string, search: LiteralSearch<string>): Span<string>[] {
    const stepsBefore = search.steps
    if (!mayHoldEscapes(text)) {
      const found = search.spans(text)
      this.charactersSearched += search.steps - stepsBefore
      return found
    }
    let states = this.statesAt(0, text.length).subarray(0, text.length)
    const found = search.spans(text, states)
    const margin = windowMargin(search.longest)
    let layer: { piece: Piece; states: Int32Array }[] = [{ piece: originalPiece(text), states }]
    for (let depth = 0; depth < MAX_LAYERS && layer.length; depth++) {
      const below: typeof layer = []
      // the pieces of a layer are never longer together than the layer above
      const pool = this.statesAt(
        depth + 1,
        layer.reduce((sum, { piece }) => sum + piece.length, 0),
      )
      let used = 0
      for (const { piece, states: above } of layer) {
        const looked = lookahead.characters
        const children = decodeBelow(piece, margin)
        this.charactersScanned += piece.length + lookahead.characters - looked
        for (const child of children) {
          states = pool.subarray(used, used + child.length)
          used += child.length
          for (const s of search.spansBelow(child, above, states))
            found.push({ start: startOf(child, s.start), end: endOf(child, s.end - 1), value: s.value })
          // the next layer's escapes sit next to this one's replacements: look there before building the piece's text
          if (depth + 1 < MAX_LAYERS && child.mayHoldEscapes()) below.push({ piece: child, states })
        }
      }
      layer = below
    }
    this.charactersSearched += search.steps - stepsBefore
    return mergeSpans(found)
  }

  /** Room for the automaton's states of one layer, kept for the next string this scrubber scrubs (one result's strings). */
  private statesAt(depth: number, length: number): Int32Array {
    if ((this.states[depth]?.length ?? -1) < length) this.states[depth] = new Int32Array(length)
    return this.states[depth]
  }

  /** Deep copy with every string (and object key) scrubbed. */
  scrub<T>(value: T): T {
    this.spell()
    if (!this.forms.size) return value
    return this.walk(value, 0) as T
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.scrubText(value)
    if (depth > 200 || value === null || typeof value !== 'object') return value
    if (Buffer.isBuffer(value)) return Buffer.from(this.scrubText(value.toString('utf8')), 'utf8')
    if (Array.isArray(value)) return value.map((v) => this.walk(v, depth + 1))
    if (value instanceof Error) {
      const copy = new Error(this.scrubText(value.message))
      copy.name = value.name
      return copy
    }
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[this.scrubText(k)] = this.walk(v, depth + 1)
    return out
  }
}

/** Every spelling of a value the scrubber looks for (case is ignored, and `+` is a space, when searching). */
export function reflectedForms(value: string): Set<string> {
  const bytes = Buffer.from(value, 'utf8')
  const json = JSON.stringify(value).slice(1, -1)
  const jsonAscii = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  const forms = new Set<string>([
    value,
    json,
    jsonAscii,
    json.replace(/\//g, '\\/'),
    jsonAscii.replace(/\//g, '\\/'),
    value.replace(/[&<>"']/g, (c) => HTML[c]),
    value.replace(/[&<>"']/g, (c) => HTML_HEX[c]),
    encodeURIComponent(value),
    encodeURI(value),
    percentEncode(bytes, RFC3986_UNRESERVED, '%20'),
    percentEncode(bytes, RFC3986_UNRESERVED, '+'),
    percentEncode(bytes, FORM_UNRESERVED, '+'),
    percentEncode(bytes, PATH_UNRESERVED, '%20'),
    bytes.toString('hex'),
    ...base64Forms(bytes),
  ])
  // a secret that itself holds an escape (`\\f`, `%41`, `&amp;`) loses it in the layer that decodes the escapes around it;
  // so does one that holds an escape only once a server changed its case (`\\N` lower-cased is `\\n`)
  for (const start of new Set([value, value.toLowerCase()]))
    for (let v = start, depth = 0; depth < MAX_LAYERS; depth++) {
      const below = decodedOnce(v)
      if (below === v) break
      forms.add(below)
      v = below
    }
  forms.delete('')
  return forms
}

const HTML: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const HTML_HEX: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' }

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
/** RFC 3986 unreserved (Python's quote_plus, Go's QueryEscape, Java's strict encoders). */
const RFC3986_UNRESERVED = new Set(`${ALNUM}-._~`)
/** application/x-www-form-urlencoded (WHATWG URLSearchParams). */
const FORM_UNRESERVED = new Set(`${ALNUM}*-._`)
/** Python's quote(): unreserved plus '/'. */
const PATH_UNRESERVED = new Set(`${ALNUM}-._~/`)

function percentEncode(bytes: Buffer, keep: Set<string>, space: string): string {
  let out = ''
  for (const b of bytes) {
    const c = String.fromCharCode(b)
    if (b < 0x80 && keep.has(c)) out += c
    else if (b === 0x20) out += space
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * The whole value in base64 (padded and not) and base64url, and the middle characters of its
 * encoding at each of the three byte alignments it can have inside a longer encoded text:
 * character j of base64(prefix + value) carries bits [6j, 6j + 6) of the stream, and only the
 * characters whose bits all come from the value are the same whatever surrounds it.
 */
function base64Forms(bytes: Buffer): string[] {
  const whole = bytes.toString('base64')
  const out = [whole, whole.replace(/=+$/, ''), bytes.toString('base64url')]
  for (let shift = 0; shift < 3; shift++) {
    const stream = Buffer.concat([Buffer.alloc(shift), bytes])
    const encoded = stream.toString('base64')
    const first = Math.ceil((8 * shift) / 6)
    const end = Math.floor((8 * (shift + bytes.length)) / 6)
    if (end - first < MIN_EMBEDDED_BASE64) continue
    const core = encoded.slice(first, end)
    out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'))
  }
  return out
}

/** Spans sorted and merged where they overlap; the longer span of two names the merged one. */
function mergeSpans(spans: Span<string>[]): Span<string>[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end)
  const out: Span<string>[] = []
  for (const s of spans) {
    const top = out[out.length - 1]
    if (top && s.start < top.end) {
      if (s.end > top.end)
        out[out.length - 1] = { start: top.start, end: s.end, value: s.end - s.start > top.end - top.start ? s.value : top.value }
    } else out.push(s)
  }
  return out
}
