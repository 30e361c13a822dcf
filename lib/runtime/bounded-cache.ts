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
