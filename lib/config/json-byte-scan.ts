/**
 * A JSON body's budgets checked on its bytes as they arrive, before the body exists as one buffer
 * or one string (issue 21 N5: a spawn with 20,000 models was 340 KB read whole, decoded to a
 * string and scanned before its length was refused; each such request left ~0.7 MB for the
 * collector, and under a flood the collector's pauses stopped every tenant alike). Fed one chunk
 * at a time, the scan answers a refusal the moment it is certain — the array of a limited root
 * member passing its limit (at item limit + 1, whatever follows), nesting passing the depth limit
 * — and the reader then drops what it kept and discards the rest unread into anything.
 *
 * It reads only structure: brackets, commas, colons and the quotes that end strings (a string's
 * content is skipped with one native search per chunk). It refuses nothing else: a body it lets
 * through is parsed as before (lib/config/json-slices.ts), which reports syntax errors with their
 * position. Bytes after a syntax error it cannot follow (a closing bracket with nothing open) end
 * the scan without a refusal. Keys are compared as JSON.parse reads them (escapes included).
 */

/** A refusal the scan made certain: the byte offset where it became so. */
export type ByteScanRefusal =
  | { kind: 'overLimit'; member: string; atLeast: number; limit: number; offset: number }
  | { kind: 'tooDeep'; offset: number; max: number }

/** The bytes that change the scan's state; every other byte outside a string is skipped by one load. */
const QUOTE = 1
const OPEN = 2
const CLOSE = 3
const COMMA = 4
const COLON = 5
const OTHER = 6
const KIND = new Uint8Array(256).fill(OTHER)
for (const c of ' \t\r\n') KIND[c.charCodeAt(0)] = 0
KIND[34] = QUOTE
KIND[91] = OPEN
KIND[123] = OPEN
KIND[93] = CLOSE
KIND[125] = CLOSE
KIND[44] = COMMA
KIND[58] = COLON

/** Where a root object's member stands: nothing, its key read, its colon read. */
const NONE = 0
const KEY = 1
const COLON_READ = 2

/** Longest key compared with a limit's name, in bytes with its quotes and escapes. */
const MAX_KEY_BYTES = 256

export class JsonByteScan {
  /** Bytes fed so far. */
  bytes = 0
  private depth = 0
  private rootObject = false
  private inString = false
  /** Backslashes right before the end of the last chunk, inside a string. */
  private trailingBackslashes = 0
  private member = NONE
  private expectKey = false
  /** The bytes of the root key being read (quotes included), while it may still name a limit. */
  private keyBytes: number[] | undefined
  private readingKey = false
  private key = ''
  private limited: { member: string; limit: number; commas: number } | undefined
  private stopped = false
  private readonly longestName: number

  constructor(
    private readonly maxDepth: number,
    private readonly itemLimits: Readonly<Record<string, number>> = {},
  ) {
    this.longestName = Math.max(0, ...Object.keys(itemLimits).map((k) => k.length))
  }

  /** Reads one chunk; the refusal once it is certain (then nothing more is read). */
  feed(chunk: Uint8Array): ByteScanRefusal | undefined {
    if (this.stopped) return undefined
    const base = this.bytes
    this.bytes += chunk.length
    const n = chunk.length
    let i = 0
    if (this.inString) {
      const end = this.stringEnd(chunk, 0)
      this.collectKey(chunk, 0, end < 0 ? n : end + 1)
      if (end < 0) return undefined
      this.stringRead()
      i = end + 1
    }
    for (; i < n; i++) {
      const kind = KIND[chunk[i]]
      if (kind === 0) continue
      if (kind === QUOTE) {
        this.readingKey = this.depth === 1 && this.rootObject && this.expectKey
        this.keyBytes = this.readingKey && this.longestName > 0 ? [] : undefined
        this.inString = true
        this.trailingBackslashes = 0
        const end = this.stringEnd(chunk, i + 1)
        this.collectKey(chunk, i, end < 0 ? n : end + 1)
        if (end < 0) return undefined
        this.stringRead()
        i = end
      } else if (kind === OPEN) {
        if (this.depth >= this.maxDepth) return this.stop({ kind: 'tooDeep', offset: base + i, max: this.maxDepth })
        this.depth++
        if (this.depth === 1) {
          this.rootObject = chunk[i] === 123
          this.expectKey = this.rootObject
        } else if (this.depth === 2 && this.member === COLON_READ && chunk[i] === 91) {
          const key = this.key
          if (Object.hasOwn(this.itemLimits, key)) this.limited = { member: key, limit: this.itemLimits[key], commas: 0 }
        }
        if (this.depth === 2) this.member = NONE
      } else if (kind === CLOSE) {
        if (this.depth === 0) {
          this.stopped = true
          return undefined
        }
        if (this.depth === 2) this.limited = undefined
        this.depth--
        if (this.depth === 1) this.member = NONE
      } else if (kind === COMMA) {
        if (this.depth === 1) {
          this.member = NONE
          this.expectKey = this.rootObject
        } else if (this.depth === 2 && this.limited) {
          const l = this.limited
          // n commas are at least n + 1 items: past the limit whatever the rest of the array holds
          if (++l.commas + 1 > l.limit)
            return this.stop({ kind: 'overLimit', member: l.member, atLeast: l.commas + 1, limit: l.limit, offset: base + i })
        }
      } else if (kind === COLON) {
        if (this.depth === 1) this.member = this.member === KEY ? COLON_READ : NONE
      } else if (this.depth === 1) this.member = NONE
    }
    return undefined
  }

  private stop(refusal: ByteScanRefusal): ByteScanRefusal {
    this.stopped = true
    return refusal
  }

  /** The index of the quote that ends the string open at `from`, or -1 when it goes on past the chunk. */
  private stringEnd(chunk: Uint8Array, from: number): number {
    let at = from
    for (;;) {
      const q = chunk.indexOf(34, at)
      if (q < 0) {
        // the backslashes at the end of the chunk escape (or not) the first byte of the next one
        let run = 0
        for (let k = chunk.length - 1; k >= from && chunk[k] === 92; k--) run++
        this.trailingBackslashes = run === chunk.length - from ? this.trailingBackslashes + run : run
        return -1
      }
      let backslashes = 0
      for (let k = q - 1; k >= from && chunk[k] === 92; k--) backslashes++
      if (backslashes === q - from) backslashes += this.trailingBackslashes
      if ((backslashes & 1) === 0) {
        this.inString = false
        this.trailingBackslashes = 0
        return q
      }
      at = q + 1
    }
  }

  private collectKey(chunk: Uint8Array, from: number, to: number) {
    const key = this.keyBytes
    if (!key) return
    if (key.length + to - from > MAX_KEY_BYTES) {
      this.keyBytes = undefined
      return
    }
    for (let k = from; k < to; k++) key.push(chunk[k])
  }

  /** A string ended: a root key read (a member of the root object begins), or a value. */
  private stringRead() {
    if (!this.readingKey) {
      if (this.depth === 1) this.member = NONE
      return
    }
    this.readingKey = false
    this.expectKey = false
    this.member = NONE
    const raw = this.keyBytes
    this.keyBytes = undefined
    // a key longer than every name (even with escapes, 6 bytes a character at most) names no limit
    if (!raw || raw.length - 2 > this.longestName * 6) return
    try {
      this.key = JSON.parse(UTF8.decode(Uint8Array.from(raw))) as string
      this.member = KEY
    } catch {
      // not a JSON string: the parse after the scan names the syntax error
    }
  }
}

const UTF8 = new TextDecoder('utf-8')
