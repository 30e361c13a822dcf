/** A Map that forgets its oldest entries past a size, for per-container memo caches. */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    return this.map.get(key)
  }
  set(key: K, value: V): V {
    if (this.map.size >= this.max && !this.map.has(key)) this.map.delete(this.map.keys().next().value as K)
    this.map.set(key, value)
    return value
  }
  delete(key: K) {
    this.map.delete(key)
  }
  get size() {
    return this.map.size
  }
}

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
