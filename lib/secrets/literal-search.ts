/**
 * Many literal strings searched at once, case-insensitively (`foldCode`), in one left-to-right pass
 * (Aho–Corasick, as a DFA). The scrubber looks for a few dozen spellings of every secret in each result
 * string; a regular expression alternation of them would retry every spelling at every
 * position, this costs one automaton step per character whatever the number of patterns.
 */

/** A region of the text covered by one or more occurrences; `value` belongs to the longest of them. */
export interface Span<T> {
  start: number
  end: number
  value: T
}

/**
 * A UTF-16 code unit without case: ASCII by arithmetic, every other letter through the Unicode
 * case mappings (lower of upper, so `ſ`, `K` (Kelvin) fold like `s`, `k`), where that mapping is
 * one code unit; a letter whose case form is longer (`ß` → `SS`) stays itself. Cached per unit.
 */
const FOLDED = new Uint16Array(65536)
function foldCode(c: number): number {
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c
  let f = FOLDED[c]
  if (f === 0) {
    const ch = String.fromCharCode(c)
    const upper = ch.toUpperCase()
    const lower = (upper.length === 1 ? upper : ch).toLowerCase()
    FOLDED[c] = f = lower.length === 1 ? lower.charCodeAt(0) : c
  }
  return f
}

/**
 * Built as a DFA over the characters the patterns use (every other character is one class):
 * one table lookup per character of the text, failure transitions folded in at build time.
 */
export class LiteralSearch<T> {
  private readonly patterns: { length: number; value: T }[] = []
  /** Character class of an ASCII code (0: a character no pattern uses). */
  private readonly asciiClass = new Uint16Array(128)
  private readonly otherClass = new Map<number, number>()
  private classes = 1
  /** next state = table[state * classes + class] */
  private table = new Int32Array(0)
  /** Longest pattern that ends in each state (its own or a suffix's), or -1. */
  private output: Int32Array = new Int32Array(0)

  constructor(patterns: Iterable<readonly [string, T]>) {
    const trie: Map<number, number>[] = [new Map()]
    const own: number[] = [-1]
    for (const [text, value] of patterns) {
      if (!text) continue
      let node = 0
      for (let i = 0; i < text.length; i++) {
        const c = this.classFor(foldCode(text.charCodeAt(i)), true)
        let next = trie[node].get(c)
        if (next === undefined) {
          next = trie.length
          trie.push(new Map())
          own.push(-1)
          trie[node].set(c, next)
        }
        node = next
      }
      // the same folded text twice: the first value stays
      if (own[node] === -1) {
        own[node] = this.patterns.length
        this.patterns.push({ length: text.length, value })
      }
    }
    this.build(trie, own)
  }

  get size() {
    return this.patterns.length
  }

  private classFor(code: number, add = false): number {
    if (code < 128) {
      if (add && this.asciiClass[code] === 0) this.asciiClass[code] = this.classes++
      return this.asciiClass[code]
    }
    let c = this.otherClass.get(code)
    if (c === undefined && add) this.otherClass.set(code, (c = this.classes++))
    return c ?? 0
  }

  /** Breadth-first: a state's missing transitions are its failure state's, already complete. */
  private build(trie: Map<number, number>[], own: number[]) {
    const k = this.classes
    const table = new Int32Array(trie.length * k)
    const fail = new Int32Array(trie.length)
    const output = Int32Array.from(own)
    const queue: number[] = []
    for (const [c, child] of trie[0]) {
      table[c] = child
      queue.push(child)
    }
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]
      const f = fail[node]
      if (output[node] === -1) output[node] = output[f]
      for (let c = 0; c < k; c++) {
        const child = trie[node].get(c)
        if (child === undefined) table[node * k + c] = table[f * k + c]
        else {
          table[node * k + c] = child
          fail[child] = table[f * k + c]
          queue.push(child)
        }
      }
    }
    this.table = table
    this.output = output
  }

  /**
   * Every region covered by an occurrence, overlapping and nested occurrences merged, in order.
   * O(text length + number of spans).
   */
  spans(text: string): Span<T>[] {
    const out: Span<T>[] = []
    if (!this.patterns.length) return out
    const { table, output, asciiClass, otherClass } = this
    const k = this.classes
    let state = 0
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i)
      if (code >= 65 && code <= 90) code += 32
      const c = code < 128 ? asciiClass[code] : (otherClass.get(foldCode(code)) ?? 0)
      state = table[state * k + c]
      const hit = output[state]
      if (hit === -1) continue
      const { length, value } = this.patterns[hit]
      let span: Span<T> = { start: i + 1 - length, end: i + 1, value }
      // ends only grow, so a new occurrence can only swallow spans at the top of the stack
      while (out.length && span.start < out[out.length - 1].end) {
        const top = out.pop()!
        const longer = top.end - top.start >= span.end - span.start ? top.value : span.value
        span = { start: Math.min(top.start, span.start), end: span.end, value: longer }
      }
      out.push(span)
    }
    return out
  }
}
