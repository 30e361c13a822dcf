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
  // '+' is a space in form encoding, which a layer does not decode: the two are one character here
  if (c < 128) return c >= 65 && c <= 90 ? c + 32 : c === 43 ? 32 : c
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
  /** Characters the automaton has stepped over, in every search so far (the work searching did). */
  steps = 0
  /** Length of the longest pattern: how far back an occurrence ending at a character can start. */
  readonly longest: number
  /** next state = table[state * classes + class] */
  private table = new Int32Array(0)
  /** Longest pattern that ends in each state (its own or a suffix's), or -1. */
  private output: Int32Array = new Int32Array(0)
  /** Length of the text each state stands for (its distance from the root). */
  private depth: Int32Array = new Int32Array(0)

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
    // the search loop maps ASCII through asciiClass without foldCode: '+' takes the space's class there
    this.asciiClass[43] = this.asciiClass[32]
    this.longest = this.patterns.reduce((max, p) => Math.max(max, p.length), 0)
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
    const depth = new Int32Array(trie.length)
    const queue: number[] = []
    for (const [c, child] of trie[0]) {
      table[c] = child
      depth[child] = 1
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
          depth[child] = depth[node] + 1
          queue.push(child)
        }
      }
    }
    this.table = table
    this.output = output
    this.depth = depth
  }

  /**
   * Every region covered by an occurrence, overlapping and nested occurrences merged, in order.
   * O(text length + number of spans). With `states`, the automaton's state after each character is
   * written there, for searching a text decoded from this one (`spansBelow`).
   */
  spans(text: string, states?: Int32Array): Span<T>[] {
    const out: Span<T>[] = []
    if (!this.patterns.length) return out
    const { table, output, asciiClass, otherClass } = this
    const k = this.classes
    let state = 0
    // two loops, so the common one (no states kept) carries no test per character
    if (states)
      for (let i = 0; i < text.length; i++) {
        let code = text.charCodeAt(i)
        if (code >= 65 && code <= 90) code += 32
        state = table[state * k + (code < 128 ? asciiClass[code] : (otherClass.get(foldCode(code)) ?? 0))]
        states[i] = state
        if (output[state] !== -1) this.push(out, i, output[state])
      }
    else
      for (let i = 0; i < text.length; i++) {
        let code = text.charCodeAt(i)
        if (code >= 65 && code <= 90) code += 32
        state = table[state * k + (code < 128 ? asciiClass[code] : (otherClass.get(foldCode(code)) ?? 0))]
        if (output[state] !== -1) this.push(out, i, output[state])
      }
    this.steps += text.length
    return out
  }

  /**
   * The occurrences in `below.text` that `spans(parent text)` did not already find at the same
   * characters, given the parent's states. Where the automaton, past a replaced character, is in
   * the state the parent's search was in at the same character, and that state's match lies in
   * unchanged characters, the two searches agree until the next replaced character: that stretch
   * is not searched again (its states are copied). So the cost is the replaced characters and the
   * few after each until the states agree, not the text's length. `states` receives the state after
   * every character of `below.text`, as `spans` writes them.
   */
  spansBelow(below: Replaced, parentStates: Int32Array, states: Int32Array): Span<T>[] {
    const out: Span<T>[] = []
    if (!this.patterns.length) return out
    const { table, output, depth } = this
    const { parentText, at, units, codePoint, sourceEnd } = below
    const k = this.classes
    const n = below.length
    const count = at.length
    let state = 0
    let steps = 0
    let i = 0
    let shift = below.base // parent index of an unchanged character = its index + shift
    for (let m = 0; m <= count; m++) {
      // the unchanged characters up to replacement m: searched until the states agree
      const until = m < count ? at[m] : n
      const from = i
      for (; i < until; i++) {
        state = table[state * k + this.classOf(parentText.charCodeAt(i + shift))]
        states[i] = state
        if (output[state] !== -1) this.push(out, i, output[state])
        if (state === parentStates[i + shift] && depth[state] <= i + 1 - from) {
          // a view per stretch costs more than copying a short one
          if (until - i > 64) states.set(parentStates.subarray(i + 1 + shift, until + shift), i + 1)
          else for (let j = i + 1; j < until; j++) states[j] = parentStates[j + shift]
          steps += i + 1 - from
          if (until > i + 1) state = parentStates[until - 1 + shift]
          i = until
          break
        }
        if (i + 1 === until) steps += until - from
      }
      if (m === count) break
      // the replacement: one unit, or a surrogate pair
      const cp = codePoint[m]
      const pair = units[m] === 2
      for (let u = 0; u < units[m]; u++, i++) {
        const unit = pair ? (u === 0 ? 0xd800 + ((cp - 0x10000) >> 10) : 0xdc00 + ((cp - 0x10000) & 0x3ff)) : cp
        state = table[state * k + this.classOf(unit)]
        states[i] = state
        if (output[state] !== -1) this.push(out, i, output[state])
      }
      steps += units[m]
      shift = sourceEnd[m] - i
    }
    this.steps += steps
    return out
  }

  private classOf(unit: number): number {
    const code = unit >= 65 && unit <= 90 ? unit + 32 : unit
    return code < 128 ? this.asciiClass[code] : (this.otherClass.get(foldCode(code)) ?? 0)
  }

  /** Adds the occurrence of pattern `hit` ending at `i`; ends only grow, so it can only swallow spans at the top of the stack. */
  private push(out: Span<T>[], i: number, hit: number) {
    const { length, value } = this.patterns[hit]
    let span: Span<T> = { start: i + 1 - length, end: i + 1, value }
    while (out.length && span.start < out[out.length - 1].end) {
      const top = out.pop()!
      const longer = top.end - top.start >= span.end - span.start ? top.value : span.value
      span = { start: Math.min(top.start, span.start), end: span.end, value: longer }
    }
    out.push(span)
  }
}

/**
 * A text decoded from `parentText`: the window [base, …) of it, `length` units long, where unit
 * `at[m]` (and `units[m]` in all: a surrogate pair past the BMP) is code point `codePoint[m]`,
 * standing for parent characters ending at `sourceEnd[m]`; every other unit is the parent's.
 */
export interface Replaced {
  readonly parentText: string
  readonly base: number
  readonly length: number
  readonly at: Int32Array
  readonly units: Uint8Array
  readonly codePoint: Int32Array
  readonly sourceEnd: Int32Array
}
