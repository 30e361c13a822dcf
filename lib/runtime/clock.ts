/** Time is a port so that expiry, activation TTLs and audit stamps are testable. */
export interface Clock {
  now(): number // epoch milliseconds
}
export const systemClock: Clock = { now: () => Date.now() }

export class ManualClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.t
  }
  advance(ms: number) {
    this.t += ms
  }
}

export const iso = (ms: number) => new Date(ms).toISOString()
