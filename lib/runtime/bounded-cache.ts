/**
 * A Map that forgets its oldest entries past a size, for per-container memo caches. With
 * `maxBytes`, entries may also be given a weight (`set(key, value, bytes)`), and the oldest go
 * once the weights pass it: a count alone does not bound memory when one entry can be large.
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>()
  private readonly weights = new Map<K, number>()
  private weighed = 0
  constructor(
    private readonly max: number,
    private readonly opts: { maxBytes?: number } = {},
  ) {}
  get(key: K): V | undefined {
    return this.map.get(key)
  }
  set(key: K, value: V, bytes = 0): V {
    this.delete(key)
    while (
      this.map.size >= this.max ||
      (this.opts.maxBytes !== undefined && this.map.size > 0 && this.weighed + bytes > this.opts.maxBytes)
    ) {
      this.delete(this.map.keys().next().value as K)
    }
    this.map.set(key, value)
    if (bytes) {
      this.weights.set(key, bytes)
      this.weighed += bytes
    }
    return value
  }
  delete(key: K) {
    this.map.delete(key)
    const w = this.weights.get(key)
    if (w !== undefined) {
      this.weights.delete(key)
      this.weighed -= w
    }
  }
  get size() {
    return this.map.size
  }
  /** The weights of the entries held now. */
  get bytes() {
    return this.weighed
  }
}

/** What a per-container cache of parsed documents may hold (one cache; several features have one). */
export const PARSED_DOCUMENT_BYTES = 64 * 1024 * 1024
/** The weight of a document parsed into objects: ~4 bytes a character of its text. */
export const parsedWeight = (text: string) => 4 * text.length

/**
 * One byte budget over entries kept in many maps (a cache per process, say): adding an entry past
 * the budget removes the oldest ones from whichever map holds them. The maps' entries together
 * then stay near `maxBytes`, however many maps there are — a bound a count of maps cannot give
 * when each entry can be large.
 */
export class ByteBudget {
  private readonly queue = new Map<number, { map: Map<unknown, unknown>; key: unknown; value: unknown; bytes: number }>()
  private next = 0
  private total = 0
  constructor(private readonly maxBytes: number) {}

  /** Sets `map.set(key, value)` and counts `bytes` for it. */
  set<K, V>(map: Map<K, V>, key: K, value: V, bytes: number): V {
    map.set(key, value)
    this.queue.set(this.next++, { map: map as Map<unknown, unknown>, key, value, bytes })
    this.total += bytes
    while (this.total > this.maxBytes && this.queue.size > 1) {
      const [id, oldest] = this.queue.entries().next().value!
      this.queue.delete(id)
      this.total -= oldest.bytes
      // a later value under the same key is not this entry's to remove
      if (oldest.map.get(oldest.key) === oldest.value) oldest.map.delete(oldest.key)
    }
    return value
  }

  /** Bytes counted now (entries replaced in their map stay counted until they are the oldest). */
  get bytes() {
    return this.total
  }
}
