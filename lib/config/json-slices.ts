/**
 * A tenant's JSON body parsed in slices the event loop can interleave with other tenants' work
 * (issue 21: one `JSON.parse` of a 530 KB tool call, or of a 340 KB spawn body, held the shared
 * thread for ~4–10 ms at a time, and two connections sending them back to back held it for most
 * of every second). The text is scanned once — the nesting depth counted on the way, as
 * jsonTooDeep counts it — and every container with more than `chunkChars` of structure (its
 * characters outside strings) is split at its own commas; the runs of its members are handed to
 * V8's `JSON.parse` a chunk at a time, so no native parse reads more than `chunkChars` of
 * structure (strings, however long, are parsed whole: they are the cheapest characters to parse,
 * and cutting around them copies them). Between slices of `sliceChars` scanned or
 * parsed, the parse pauses (setImmediate by default), so other requests' I/O runs in between.
 *
 * The value is exactly `JSON.parse(text)`'s — duplicate keys keep the first key's place and the
 * last value, a `__proto__` key stays an own property — because every piece is parsed by
 * `JSON.parse` itself and the pieces are joined the way it joins them.
 *
 * `itemLimits` refuses before the costly part: an array at a member of the root object with more
 * items than its limit (a spawn's `models`) is counted by the scan and refused with its length,
 * and nothing of the body is parsed.
 */
import type { Issue } from '../errors'
import { WORK_BUDGETS, yieldToEventLoop } from './expansion-budget'
import { jsonSyntaxIssue, MAX_NESTING_DEPTH } from './nesting'

/** What one sliced parse did: the counts tests and benches read (never a timing). */
export interface JsonSliceWork {
  /** Pauses taken (each ends a slice). */
  pauses: number
  /** Characters scanned. */
  scanned: number
  /** JSON.parse calls. */
  parses: number
  /** Characters of the largest single JSON.parse. */
  largestParse: number
  /** Characters outside strings of the JSON.parse with the most of them (counted only when the caller passes `work`). */
  largestStructure: number
}

export const newJsonSliceWork = (): JsonSliceWork => ({ pauses: 0, scanned: 0, parses: 0, largestParse: 0, largestStructure: 0 })

export interface SlicedParseOptions {
  maxDepth?: number
  /** Characters of structure one JSON.parse reads at most (default 16 KiB). */
  chunkChars?: number
  /** Characters scanned between two pauses, a character parsed counting PARSED_WEIGHT (default 64 KiB). */
  sliceChars?: number
  /** Most items of an array that is a member of the root object, by member name. */
  itemLimits?: Readonly<Record<string, number>>
  pause?: () => Promise<void>
  work?: JsonSliceWork
  /** Named in issues (a document's path). */
  path?: string
}

/** Arrays of a body refused by their length before the body is parsed (a spawn's `models`). */
export interface ItemLimits {
  /** Most items of an array that is a member of the root object, by member name. */
  limits: Readonly<Record<string, number>>
  /**
   * The refusal, worded as the route's own check of the parsed body words it; `atLeast` when the
   * array was refused as it streamed, at its limit + 1 items, before its end was read.
   */
  refuse(member: string, items: number, opts?: { atLeast?: boolean }): Error
}

export type SlicedParse =
  | { ok: true; value: unknown }
  | { ok: false; issue: Issue; tooDeep?: true }
  /** An array of `itemLimits` over its limit: how many items it has; nothing was parsed. */
  | { ok: false; overLimit: { member: string; items: number; limit: number } }

/** Texts up to this long are one JSON.parse after a depth scan: slicing them costs more than it saves. */
export const CHUNK_CHARS = WORK_BUDGETS.jsonParseChunk.limit
export const SLICE_CHARS = WORK_BUDGETS.jsonParseSlice.limit

/**
 * A character handed to JSON.parse counts this many scanned ones against the slice: a slice is
 * bounded by what it costs, not by what it reads. Measured on N3's 307 KB spec (thousands of small
 * objects): 64 KiB scanned in 0.3–0.7 ms, 64 KiB parsed in 2.5–3.7 ms, so a slice of 64 KiB parsed
 * held the thread ~5× longer than one of 64 KiB scanned.
 */
const PARSED_WEIGHT = 4

/** A container split at its commas: [start, end) in the text, the commas, and its split children by member index. */
interface Split {
  start: number
  end: number
  object: boolean
  commas: Int32Array
  children: Map<number, Split> | undefined
}

interface Frame {
  open: number
  object: boolean
  /** Where this frame's commas start in the shared list (its children's are cut off as they close). */
  from: number
  /** Characters inside strings scanned before this container opened. */
  strings: number
  children: Map<number, Split> | undefined
  /** Set for an array under `itemLimits`: its items are counted, its commas not kept. */
  limit?: { member: string; limit: number; commas: number }
}

class Malformed extends Error {}

/** The characters the scan stops at (`"` `,` `[` `]` `{` `}`): one load decides for every other one. */
const STRUCTURE = new Uint8Array(126)
for (const c of '",[]{}') STRUCTURE[c.charCodeAt(0)] = 1

/**
 * `JSON.parse(text)` in slices, refusing nesting deeper than `maxDepth` with the line and column
 * (as jsonTooDeep does) and a syntax error with its position (jsonSyntaxIssue).
 */
export async function parseJsonInSlices(text: string, opts: SlicedParseOptions = {}): Promise<SlicedParse> {
  const maxDepth = opts.maxDepth ?? MAX_NESTING_DEPTH
  const chunk = opts.chunkChars ?? CHUNK_CHARS
  const sliceChars = opts.sliceChars ?? SLICE_CHARS
  const pause = opts.pause ?? yieldToEventLoop
  const work = opts.work ?? newJsonSliceWork()
  const measured = opts.work !== undefined
  const limits = opts.itemLimits
  const n = text.length
  let budget = sliceChars
  const spent = async (chars: number) => {
    budget -= chars
    if (budget > 0) return
    budget = sliceChars
    work.pauses++
    await pause()
  }
  const syntax = (): SlicedParse => ({ ok: false, issue: jsonSyntaxIssue(text, opts.path) })

  // ── the scan: depth, string ends, and the commas of every container still open ──
  const stack: Frame[] = []
  // the commas of the open containers, in a typed array grown by doubling: pushing onto a JS array
  // was half the scan's time
  let commas = new Int32Array(1024)
  let count = 0
  let root: Split | undefined
  // the last key of the root object (a string at depth 1 followed by ':'), for itemLimits
  let keyStart = -1
  let keyEnd = -1
  // characters inside strings so far: a container is measured by its structure, not its strings
  let strings = 0
  let i = 0
  while (i < n) {
    const stop = Math.min(n, i + Math.max(1, budget))
    const from = i
    for (; i < stop; i++) {
      const c = text.charCodeAt(i)
      if (c > 125 || !STRUCTURE[c]) continue
      if (c === 34 /* " */) {
        let j = i
        for (;;) {
          j = text.indexOf('"', j + 1)
          if (j < 0) return syntax()
          let backslashes = 0
          for (let k = j - 1; text.charCodeAt(k) === 92; k--) backslashes++
          if ((backslashes & 1) === 0) break
        }
        if (limits && stack.length === 1 && stack[0].object) {
          keyStart = i
          keyEnd = j + 1
        }
        strings += j - i - 1
        i = j
      } else if (c === 91 /* [ */ || c === 123 /* { */) {
        if (stack.length >= maxDepth) return { ok: false, issue: tooDeepAt(text, i, maxDepth, opts.path), tooDeep: true }
        const frame: Frame = { open: i, object: c === 123, from: count, strings, children: undefined }
        // the member's key sits right before its colon; a gap longer than any real one is not rescanned per bracket
        if (limits && c === 91 && stack.length === 1 && stack[0].object && keyEnd > keyStart && i - keyEnd <= 64) {
          const member = memberName(text, keyStart, keyEnd, i)
          if (member !== undefined && Object.hasOwn(limits, member)) frame.limit = { member, limit: limits[member], commas: 0 }
        }
        stack.push(frame)
      } else if (c === 44 /* , */) {
        const top = stack[stack.length - 1]
        if (!top) return syntax()
        // past its limit an array's commas are only counted: it is refused, never parsed
        if (!top.limit || top.limit.commas < top.limit.limit) {
          if (count === commas.length) {
            const grown = new Int32Array(commas.length * 2)
            grown.set(commas)
            commas = grown
          }
          commas[count++] = i
        }
        if (top.limit) top.limit.commas++
      } else if (c === 93 /* ] */ || c === 125 /* } */) {
        const top = stack.pop()
        if (!top || top.object !== (c === 125)) return syntax()
        // n commas are n + 1 items; an empty array has none but is never over a limit of 1 or more
        if (top.limit && top.limit.commas + 1 > top.limit.limit) {
          work.scanned += i + 1 - from
          return { ok: false, overLimit: { member: top.limit.member, items: top.limit.commas + 1, limit: top.limit.limit } }
        }
        // Long strings are the cheapest characters JSON.parse reads, and a piece wrapped around one
        // is a copy of it (issue 21 N1: a 200,000-character argument cost 2.5x one JSON.parse when
        // cut around): a container is split for its structure only.
        if (i + 1 - top.open - (strings - top.strings) > chunk) {
          const split: Split = {
            start: top.open,
            end: i + 1,
            object: top.object,
            commas: commas.slice(top.from, count),
            children: top.children,
          }
          count = top.from
          const parent = stack[stack.length - 1]
          if (parent) (parent.children ??= new Map()).set(count - parent.from, split)
          else root = split
          continue
        }
        count = top.from
      }
    }
    work.scanned += i - from
    await spent(i - from)
  }
  if (stack.length) return syntax()

  // ── the parse: small texts and small containers whole, split containers a run of members at a time ──
  const parse = async (from: number, to: number, wrap?: '[]' | '{}'): Promise<unknown> => {
    const piece = wrap ? `${wrap[0]}${text.slice(from, to)}${wrap[1]}` : text.slice(from, to)
    work.parses++
    if (piece.length > work.largestParse) work.largestParse = piece.length
    if (measured) work.largestStructure = Math.max(work.largestStructure, structureOf(piece))
    let value: unknown
    try {
      value = JSON.parse(piece)
    } catch {
      throw new Malformed()
    }
    await spent(piece.length * PARSED_WEIGHT)
    return value
  }
  const blank = (from: number, to: number) => {
    if (!isBlank(text, from, to)) throw new Malformed()
  }
  const assemble = async (s: Split): Promise<unknown> => {
    const out: unknown = s.object ? {} : []
    // member k spans (bound(k), bound(k + 1)) exclusive of the separators: the opening bracket,
    // its commas, the closing bracket (read in place: a 1 MiB list has half a million commas)
    const members = s.commas.length + 1
    const bound = (k: number) => (k === 0 ? s.start : k === members ? s.end - 1 : s.commas[k - 1])
    let run = -1 // first member of the pending run of unsplit members
    const flush = async (to: number) => {
      if (run < 0) return
      // a blank run is one empty member: right only as the whole of an empty container (`[ ]`)
      if ((members > 1 || s.children) && isBlank(text, bound(run) + 1, bound(to))) throw new Malformed()
      const part = await parse(bound(run) + 1, bound(to), s.object ? '{}' : '[]')
      if (s.object) join(out as Record<string, unknown>, part as Record<string, unknown>)
      else for (const item of part as unknown[]) (out as unknown[]).push(item)
      run = -1
    }
    for (let k = 0; k < members; k++) {
      const child = s.children?.get(k)
      if (!child) {
        if (run >= 0 && bound(k + 1) - bound(run) > chunk) await flush(k)
        if (run < 0) run = k
        continue
      }
      await flush(k)
      blank(child.end, bound(k + 1))
      const value = await assemble(child)
      if (s.object) {
        // `"key" :` before the value: the key parsed alone, the rest only blank space and one colon
        const head = text.slice(bound(k) + 1, child.start)
        const colon = head.lastIndexOf(':')
        if (colon < 0) throw new Malformed()
        blank(bound(k) + 1 + colon + 1, child.start)
        const key = await parse(bound(k) + 1, bound(k) + 1 + colon)
        if (typeof key !== 'string') throw new Malformed()
        join(out as Record<string, unknown>, { [key]: value })
      } else {
        blank(bound(k) + 1, child.start)
        ;(out as unknown[]).push(value)
      }
    }
    await flush(members)
    return out
  }

  try {
    if (!root) return { ok: true, value: await parse(0, n) }
    blank(0, root.start)
    blank(root.end, n)
    return { ok: true, value: await assemble(root) }
  } catch (e) {
    if (e instanceof Malformed) return syntax()
    throw e
  }
}

/** Characters of a JSON text outside its strings (a test's and a bench's count, not the parse's). */
function structureOf(text: string): number {
  let outside = 0
  let i = 0
  for (;;) {
    const open = text.indexOf('"', i)
    if (open < 0) return outside + text.length - i
    outside += open + 1 - i
    let end = open
    do end = text.indexOf('"', end + 1)
    while (end > 0 && oddBackslashesBefore(text, end))
    if (end < 0) return outside
    i = end + 1
  }
}

function oddBackslashesBefore(text: string, at: number): boolean {
  let k = at - 1
  while (text.charCodeAt(k) === 92) k--
  return ((at - 1 - k) & 1) === 1
}

function isBlank(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k)
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false
  }
  return true
}

/** Members of `part` onto `out` as JSON.parse would have put them there (a `__proto__` key stays data). */
function join(out: Record<string, unknown>, part: Record<string, unknown>) {
  // Object.assign sets through [[Set]], which would take an own `__proto__` as the prototype
  if (!Object.hasOwn(part, '__proto__')) {
    Object.assign(out, part)
    return
  }
  for (const key of Object.keys(part)) {
    if (key === '__proto__') Object.defineProperty(out, key, { value: part[key], writable: true, enumerable: true, configurable: true })
    else out[key] = part[key]
  }
}

/** The key of a root member (`"models"` before `: [`), or undefined when what sits between is not a colon. */
function memberName(text: string, keyStart: number, keyEnd: number, open: number): string | undefined {
  if (!/^\s*:\s*$/.test(text.slice(keyEnd, open))) return undefined
  try {
    return JSON.parse(text.slice(keyStart, keyEnd)) as string
  } catch {
    return undefined
  }
}

function tooDeepAt(text: string, offset: number, max: number, path?: string): Issue {
  let line = 1
  let lineStart = 0
  for (let k = text.indexOf('\n'); k >= 0 && k < offset; k = text.indexOf('\n', k + 1)) {
    line++
    lineStart = k + 1
  }
  const column = offset - lineStart + 1
  return { path, line, column, message: `nested deeper than ${max} levels at line ${line}, column ${column}` }
}
