/**
 * How fast one tenant may spawn processes: a token bucket per tenant (`burst` spawns at once,
 * refilled at `perMinute`). Every spawn writes a process record that lives a day (MCP `initialize`
 * spawns one too), so without it one tenant could write 179 records a second for as long as it
 * liked. Kept per container (no store round trip on the hot path): a deployment with N warm
 * containers admits up to N times the rate — the bound is on what one container does for a tenant.
 */
import { ServerToolsError } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'
import type { Clock } from '../runtime/clock'

export interface SpawnRateSettings {
  /** Spawns a tenant may make at once. */
  burst: number
  /** Spawns a tenant regains per minute. */
  perMinute: number
}

export const DEFAULT_SPAWN_RATE: SpawnRateSettings = { burst: 120, perMinute: 600 }

export class SpawnRate {
  private readonly buckets = new BoundedCache<string, { tokens: number; at: number }>(10_000)

  constructor(
    private readonly settings: SpawnRateSettings,
    private readonly clock: Clock,
  ) {}

  /** Takes one spawn from the tenant's bucket, or throws RATE_LIMITED saying when the next one is free. */
  take(tenant: string): void {
    const now = this.clock.now()
    const { burst, perMinute } = this.settings
    const b = this.buckets.get(tenant) ?? this.buckets.set(tenant, { tokens: burst, at: now })
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) * perMinute) / 60_000)
    b.at = now
    if (b.tokens >= 1) {
      b.tokens -= 1
      return
    }
    const retryAfterSeconds = Math.ceil(((1 - b.tokens) * 60) / perMinute)
    throw new ServerToolsError(
      'RATE_LIMITED',
      `this tenant may spawn at most ${perMinute} processes a minute (${burst} at once); retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds, limit: perMinute },
    )
  }
}
