/**
 * A read-through cache in front of a remote SecretStore (SSM), so a hot tool does not pay a
 * Parameter Store round trip (and its TPS quota) on every call. Values live for `ttlMs` per
 * container; this container's own put/delete invalidate at once, other containers see a change
 * within `ttlMs`. Misses are cached too (a tool naming a missing secret stays cheap).
 */
import type { Clock } from '../runtime/clock'
import { systemClock } from '../runtime/clock'
import type { SecretStore } from './ports'

export class CachedSecretStore implements SecretStore {
  private readonly entries = new Map<string, { value: string | undefined; until: number }>()

  constructor(
    private readonly inner: SecretStore,
    private readonly opts: { ttlMs?: number; clock?: Clock; maxEntries?: number } = {},
  ) {}

  private get ttl() {
    return this.opts.ttlMs ?? 60_000
  }
  private get clock() {
    return this.opts.clock ?? systemClock
  }
  private key(tenant: string, name: string) {
    return `${tenant}\u0000${name}`
  }

  async put(tenant: string, name: string, value: string) {
    const result = await this.inner.put(tenant, name, value)
    this.entries.delete(this.key(tenant, name))
    return result
  }

  async delete(tenant: string, name: string) {
    this.entries.delete(this.key(tenant, name))
    await this.inner.delete(tenant, name)
  }

  list(tenant: string) {
    return this.inner.list(tenant)
  }

  async get(tenant: string, name: string) {
    return (await this.getMany(tenant, [name])).get(name)
  }

  async getMany(tenant: string, names: string[]) {
    const now = this.clock.now()
    const out = new Map<string, string>()
    const missing: string[] = []
    for (const name of new Set(names)) {
      const hit = this.entries.get(this.key(tenant, name))
      if (hit && hit.until > now) {
        if (hit.value !== undefined) out.set(name, hit.value)
      } else missing.push(name)
    }
    if (missing.length) {
      const fetched = await this.inner.getMany(tenant, missing)
      for (const name of missing) {
        const value = fetched.get(name)
        this.remember(this.key(tenant, name), value, now + this.ttl)
        if (value !== undefined) out.set(name, value)
      }
    }
    return out
  }

  private remember(key: string, value: string | undefined, until: number) {
    const max = this.opts.maxEntries ?? 10_000
    if (this.entries.size >= max && !this.entries.has(key)) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(key, { value, until })
  }
}
