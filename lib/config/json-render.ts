/**
 * JSON text rendered in pieces: the pieces, joined, are exactly `JSON.stringify(value)`, and none
 * is much longer than `slice` characters. An answer of megabytes (a tool_description of long
 * descriptions, a layer export with bodies) was one JSON.stringify and one socket write, each
 * holding the shared thread for milliseconds while every other tenant waited (issue 21 D2, D3);
 * rendered piece by piece, with a turn of the event loop between pieces (functions/http
 * `jsonAnswer`), each stretch costs what one slice costs, whatever the answer's size.
 *
 * A subtree that measures within `slice` (lib/config/expansion-budget.ts `jsonBytes`, which
 * stops at its limit, so measuring costs at most a slice) is one JSON.stringify; a larger one is
 * walked member by member, and a longer string is cut into runs of code units (never between
 * the two halves of a surrogate pair, so every run is escaped as the whole string would be).
 */
import { jsonBytes } from './expansion-budget'

/** Whether JSON.stringify leaves a member out of an object (and writes `null` for it in an array). */
const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol'

export function* jsonPieces(value: unknown, slice: number): Generator<string> {
  let buffer = ''
  // small pieces are gathered up to a slice: the consumer's turns are per slice, not per member
  function* emit(text: string): Generator<string> {
    buffer += text
    if (buffer.length >= slice) {
      yield buffer
      buffer = ''
    }
  }
  function* render(v: unknown): Generator<string> {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      // a value of its own rendering (a Date): rendered whole, as JSON.stringify renders it
      yield* emit(JSON.stringify(v))
      return
    }
    if (typeof v !== 'object' && typeof v !== 'string') {
      yield* emit(skipped(v) ? 'null' : JSON.stringify(v))
      return
    }
    if (v === null || jsonBytes(v, slice) <= slice) {
      yield* emit(JSON.stringify(v))
      return
    }
    if (typeof v === 'string') {
      yield* emit('"')
      for (let at = 0; at < v.length; ) {
        let end = Math.min(v.length, at + slice)
        const last = v.charCodeAt(end - 1)
        const next = v.charCodeAt(end) // NaN at the end of the string
        if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end++
        yield* emit(JSON.stringify(v.slice(at, end)).slice(1, -1))
        at = end
      }
      yield* emit('"')
      return
    }
    if (Array.isArray(v)) {
      yield* emit('[')
      for (let i = 0; i < v.length; i++) {
        if (i > 0) yield* emit(',')
        yield* render(v[i])
      }
      yield* emit(']')
      return
    }
    yield* emit('{')
    let first = true
    for (const key of Object.keys(v)) {
      const member = (v as Record<string, unknown>)[key]
      if (skipped(member)) continue
      yield* emit(`${first ? '' : ','}${JSON.stringify(key)}:`)
      first = false
      yield* render(member)
    }
    yield* emit('}')
  }
  yield* render(value)
  if (buffer) yield buffer
}
