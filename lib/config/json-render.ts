/**
 * JSON text rendered in pieces of UTF-8: the pieces, joined, are exactly the UTF-8 of
 * `JSON.stringify(value)`, and none is longer than `slice` bytes. An answer of megabytes (a
 * tool_description of long descriptions, a layer export with bodies) was one JSON.stringify and
 * one socket write, each holding the shared thread for milliseconds while every other tenant
 * waited (issue 21 D2, D3); rendered piece by piece, with a turn of the event loop between pieces
 * (functions/http `jsonAnswer`), each stretch costs what one slice costs, whatever the answer's size.
 *
 * A subtree that measures within `slice` (lib/config/expansion-budget.ts `jsonBytes`, which
 * stops at its limit, so measuring costs at most a slice) is one JSON.stringify; a larger one is
 * walked member by member, and a longer string is cut into runs of code units (never between
 * the two halves of a surrogate pair, so every run is escaped as the whole string would be).
 *
 * A member whose rendering was kept (`withRendered`: a tool's description, rendered once per tool
 * version) is copied as bytes: escaping and encoding it again on every answer cost more than
 * writing it (issue 21 D2: 25 descriptions of 100,000 characters, 7.5 ms of the shared thread
 * per answer).
 */
import { BoundedCache } from '../runtime/bounded-cache'
import { jsonBytes, yieldToEventLoop } from './expansion-budget'

/** The rendering of a string, with the string. */
export interface RenderedString extends RenderedValue {
  readonly value: string
}

/**
 * Renderings of long strings kept under a key naming their content version (a document's scope,
 * path and version), in a cache bounded by bytes. `of` checks a kept rendering against the string
 * it is asked for (`===`: equal text, whichever copy); `held` trusts the key alone, for a caller
 * whose key names one string forever (a document version) and that has not read the string.
 */
export class KeptRenderings {
  private readonly cache: BoundedCache<string, RenderedString>
  /** Strings rendered since start (each a miss): tests count these, never time them. */
  renders = 0
  constructor(maxBytes: number) {
    this.cache = new BoundedCache(100_000, { maxBytes })
  }
  async of(key: string, value: string, slice: number): Promise<RenderedString> {
    const kept = this.cache.get(key)
    if (kept && kept.value === value) return kept
    this.renders++
    const rendered = (await renderedValueInSlices(value, slice)) as RenderedString
    this.cache.set(key, rendered, rendered.json.byteLength + 2 * value.length)
    return rendered
  }
  held(key: string): RenderedString | undefined {
    return this.cache.get(key)
  }
}

/** Where an object keeps the renderings of some of its members (not enumerable: JSON.stringify, spreads and Object.keys never see it). */
const RENDERED = Symbol('rendered members')

/** Members shorter than this (as JSON) are rendered with the answer: keeping and copying them saves nothing. */
export const RENDERED_MEMBER_MIN = 1024

/** The UTF-8 of `JSON.stringify(value)`, kept beside the value it was rendered from. */
export interface RenderedValue {
  readonly value: unknown
  readonly json: Uint8Array
}

const UTF8 = new TextEncoder()

/** `value` rendered: what `withRendered` takes for one member. */
export function renderedValue(value: unknown): RenderedValue {
  return { value, json: UTF8.encode(JSON.stringify(value)) }
}

/**
 * renderedValue for a value that may be long (a 1 MiB description): rendered a slice at a time
 * with a turn of the event loop between slices, as an answer is (`jsonRenderSlice`), so keeping
 * a rendering costs no longer stretch than streaming it would have.
 */
export async function renderedValueInSlices(value: unknown, slice: number): Promise<RenderedValue> {
  if (jsonBytes(value, slice) <= slice) return renderedValue(value)
  const pieces: Uint8Array[] = []
  let length = 0
  for (const piece of jsonPieces(value, slice)) {
    // a piece is never written again once handed on (each slice gets a fresh buffer): kept as it is
    pieces.push(piece)
    length += piece.byteLength
    await yieldToEventLoop()
  }
  const json = new Uint8Array(length)
  let at = 0
  for (const p of pieces) {
    json.set(p, at)
    at += p.byteLength
  }
  return { value, json }
}

/**
 * Marks members of `target` as rendered: jsonPieces copies `json` for a member whose value is
 * still the very value it was rendered from (`===`; strings are immutable, and the objects given
 * here are never changed once built), and renders it as any other member otherwise.
 */
export function withRendered<T extends object>(target: T, members: Readonly<Record<string, RenderedValue>>): T {
  Object.defineProperty(target, RENDERED, { value: members, enumerable: false })
  return target
}

function renderedOf(v: object): Readonly<Record<string, RenderedValue>> | undefined {
  return (v as { [RENDERED]?: Readonly<Record<string, RenderedValue>> })[RENDERED]
}

/**
 * A string holding another value's JSON text — an MCP text block carrying a tool's result as
 * JSON: `JSON.stringify(new JsonAsText(v))` is `JSON.stringify(JSON.stringify(v))`, and jsonPieces
 * renders it from `v`'s own pieces (kept renderings included), escaped as they go, instead of
 * building the inner text and escaping it again whole (issue 21 D2 through MCP).
 */
export class JsonAsText {
  constructor(readonly value: object) {}
  toJSON(): string {
    return JSON.stringify(this.value)
  }
}

/** A kept rendering of at least this share of a slice goes out as views of itself; a shorter one is copied with the text around it. */
const LONG_KEPT = 1 / 4

const QUOTE = 0x22
const BACKSLASH = 0x5c
/** JSON text as the inside of a JSON string: it holds no control character or lone surrogate (JSON.stringify escaped them), so only `"` and `\\` change. */
const inString = (t: string) => t.replace(/["\\]/g, '\\$&')
/**
 * Kept renderings escaped as the inside of a string (`inString` on their bytes: `"` and `\\` are
 * ASCII, never inside a multi-byte sequence, so any cut escapes alike), kept as the parts they
 * were escaped in. Escaped a slice at a time, each part as the answer reaches it: escaping a
 * 1 MiB description whole held the shared thread in one stretch that grew with its length.
 */
const escapedKept = new WeakMap<RenderedValue, readonly Uint8Array[]>()

/** What escaping kept renderings has cost since start (tests count these, never time them). */
export const escapeCounts = { bytes: 0, largestStep: 0 }

/** `b[from, to)` escaped: a new array, never changed once made. */
function escapedRange(b: Uint8Array, from: number, to: number): Uint8Array {
  escapeCounts.bytes += to - from
  escapeCounts.largestStep = Math.max(escapeCounts.largestStep, to - from)
  let extra = 0
  for (let i = from; i < to; i++) if (b[i] === QUOTE || b[i] === BACKSLASH) extra++
  if (!extra) return b.subarray(from, to)
  const out = new Uint8Array(to - from + extra)
  for (let i = from, o = 0; i < to; i++) {
    if (b[i] === QUOTE || b[i] === BACKSLASH) out[o++] = BACKSLASH
    out[o++] = b[i]
  }
  return out
}

/** Whether JSON.stringify leaves a member out of an object (and writes `null` for it in an array). */
const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol'

export function* jsonPieces(value: unknown, slice: number): Generator<Uint8Array> {
  // Text and short kept renderings are copied into pieces filled to `slice` bytes: the consumer's
  // turns are per slice, not per member. A long kept rendering goes out as views of itself, never
  // copied: a piece is a fresh buffer only for what is rendered here (issue 21 D2: each of ten
  // 100 KB descriptions had cost a fresh 64 KiB buffer for its head and its tail).
  // not zeroed: every byte handed on was written first
  const fresh = () => Buffer.allocUnsafeSlow(slice)
  let out: Uint8Array = fresh()
  // out[start, used) is written and not yet handed on; what was handed on is never written again
  let start = 0
  let used = 0
  // how many JsonAsText strings the text under way is inside: each escapes it once more
  let depth = 0
  /** The piece under way is full (or takes no more): what of it is not handed on yet goes, and a fresh one starts. */
  function* next(): Generator<Uint8Array> {
    if (used > start) yield out.subarray(start, used)
    out = fresh()
    start = used = 0
  }
  function* text(t: string): Generator<Uint8Array> {
    let rest = t
    for (let d = 0; d < depth; d++) rest = inString(rest)
    for (;;) {
      const { read, written } = UTF8.encodeInto(rest, out.subarray(used))
      used += written
      if (read === rest.length) return
      rest = rest.slice(read)
      if (used === 0) {
        // one character longer than a whole slice (a slice under 4 bytes): a piece of its own
        const one = rest.codePointAt(0)! > 0xffff ? 2 : 1
        yield UTF8.encode(rest.slice(0, one))
        rest = rest.slice(one)
        if (!rest) return
        continue
      }
      yield* next()
    }
  }
  function* bytes(b: Uint8Array): Generator<Uint8Array> {
    if (b.length < LONG_KEPT * slice) {
      // short: copied into the piece under way, as text is
      for (let at = 0; ; ) {
        const n = Math.min(b.length - at, slice - used)
        out.set(b.subarray(at, at + n), used)
        used += n
        at += n
        if (at === b.length) return
        yield* next()
      }
    }
    // long: the piece under way goes out as far as it is written (the rest of its buffer is
    // filled later), then `b` a slice at a time as it is (kept renderings are never changed)
    if (used > start) {
      yield out.subarray(start, used)
      start = used
    }
    for (let at = 0; at < b.length; at += slice) yield b.subarray(at, Math.min(b.length, at + slice))
  }
  function* escaped(r: RenderedValue): Generator<Uint8Array> {
    const kept = escapedKept.get(r)
    if (kept) {
      for (const part of kept) yield* bytes(part)
      return
    }
    // each part escaped as the answer reaches it, so a piece costs a slice of escaping at most;
    // kept only once whole (an answer given up half way keeps nothing)
    const parts: Uint8Array[] = []
    for (let from = 0; from < r.json.length; from += slice) {
      const part = escapedRange(r.json, from, Math.min(r.json.length, from + slice))
      parts.push(part)
      yield* bytes(part)
    }
    escapedKept.set(r, parts)
  }
  function* render(v: unknown): Generator<Uint8Array> {
    if (v instanceof JsonAsText) {
      yield* text('"')
      depth++
      yield* render(v.value)
      depth--
      yield* text('"')
      return
    }
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      // a value of its own rendering (a Date): rendered whole, as JSON.stringify renders it
      yield* text(JSON.stringify(v))
      return
    }
    if (typeof v !== 'object' && typeof v !== 'string') {
      yield* text(skipped(v) ? 'null' : JSON.stringify(v))
      return
    }
    const rendered = v !== null && typeof v === 'object' ? renderedOf(v) : undefined
    if (v === null || (!rendered && jsonBytes(v, slice) <= slice)) {
      yield* text(JSON.stringify(v))
      return
    }
    if (typeof v === 'string') {
      yield* text('"')
      for (let at = 0; at < v.length; ) {
        let end = Math.min(v.length, at + slice)
        const last = v.charCodeAt(end - 1)
        const next = v.charCodeAt(end) // NaN at the end of the string
        if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end++
        yield* text(JSON.stringify(v.slice(at, end)).slice(1, -1))
        at = end
      }
      yield* text('"')
      return
    }
    if (Array.isArray(v)) {
      yield* text('[')
      for (let i = 0; i < v.length; i++) {
        if (i > 0) yield* text(',')
        yield* render(v[i])
      }
      yield* text(']')
      return
    }
    yield* text('{')
    let first = true
    for (const key of Object.keys(v)) {
      const member = (v as Record<string, unknown>)[key]
      if (skipped(member)) continue
      yield* text(`${first ? '' : ','}${JSON.stringify(key)}:`)
      first = false
      const kept = rendered?.[key]
      if (kept && kept.value === member && depth <= 1) yield* depth ? escaped(kept) : bytes(kept.json)
      else yield* render(member)
    }
    yield* text('}')
  }
  yield* render(value)
  if (used > start) yield out.subarray(start, used)
}
