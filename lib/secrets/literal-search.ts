/**
 * Many literal strings searched at once, ASCII case-insensitively, in one left-to-right pass
 * (Aho–Corasick). The scrubber looks for a few dozen spellings of every secret in each result
 * string; a regular expression alternation of them would retry every spelling at every
 * position, this costs one automaton step per character whatever the number of patterns.
 */

/** A region of the text covered by one or more occurrences; `value` belongs to the longest of them. */
export interface Span<T> {
  start: number
  end: number
  value: T
}

const foldCode = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c)

export class LiteralSearch<T> {
  /** Goto function: (node << 16 | UTF-16 code unit) → node. */
  private readonly edges = new Map<number, number>()
  private readonly fail: number[] = [0]
  /** Longest pattern that ends at each node (its own or one reached by failure links), or -1. */
  private readonly output: number[] = [-1]
  private readonly patterns: { length: number; value: T }[] = []

  constructor(patterns: Iterable<readonly [string, T]>) {
    for (const [text, value] of patterns) this.insert(text, value)
    this.link()
  }

  get size() {
    return this.patterns.length
  }

  private insert(text: string, value: T) {
    if (!text) return
    let node = 0
    for (let i = 0; i < text.length; i++) {
      const key = node * 65536 + foldCode(text.charCodeAt(i))
      let next = this.edges.get(key)
      if (next === undefined) {
        next = this.fail.length
        this.fail.push(0)
        this.output.push(-1)
        this.edges.set(key, next)
      }
      node = next
    }
    // the same folded text twice: the first value stays
    if (this.output[node] === -1) {
      this.output[node] = this.patterns.length
      this.patterns.push({ length: text.length, value })
    }
  }

  /** Breadth-first failure links; a node without a pattern of its own inherits its suffix's. */
  private link() {
    const children = new Map<number, [number, number][]>()
    for (const [key, child] of this.edges) {
      const parent = Math.floor(key / 65536)
      const list = children.get(parent) ?? []
      list.push([key % 65536, child])
      children.set(parent, list)
    }
    const queue: number[] = []
    for (const [, child] of children.get(0) ?? []) queue.push(child)
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head]
      for (const [code, child] of children.get(node) ?? []) {
        let f = this.fail[node]
        let target = this.edges.get(f * 65536 + code)
        while (target === undefined && f !== 0) {
          f = this.fail[f]
          target = this.edges.get(f * 65536 + code)
        }
        this.fail[child] = target ?? 0
        if (this.output[child] === -1) this.output[child] = this.output[this.fail[child]]
        queue.push(child)
      }
    }
  }

  /**
   * Every region covered by an occurrence, overlapping and nested occurrences merged, in order.
   * O(text length + number of spans).
   */
  spans(text: string): Span<T>[] {
    const out: Span<T>[] = []
    if (!this.patterns.length) return out
    let node = 0
    for (let i = 0; i < text.length; i++) {
      const code = foldCode(text.charCodeAt(i))
      let next = this.edges.get(node * 65536 + code)
      while (next === undefined && node !== 0) {
        node = this.fail[node]
        next = this.edges.get(node * 65536 + code)
      }
      node = next ?? 0
      const hit = this.output[node]
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
