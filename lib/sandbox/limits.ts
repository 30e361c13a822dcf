/**
 * The sandbox profile (spec §3.1: no IO, no threading, no native, statement limit + wall-clock
 * timeout) as numbers. Every limit is a constructor option of QuickJsSandbox; these are the defaults.
 */

export interface SandboxLimits {
  /** QuickJS heap limit per run (a deployment setting). */
  memoryBytes: number
  /** QuickJS stack limit. More than 256 KiB lets deep native recursion overflow the host stack first. */
  stackBytes: number
  /** The statement budget ("fuel"), counted in the interrupt handler; approximate by nature. */
  maxStatements: number
  /** Largest result, as UTF-8 JSON. */
  maxResultBytes: number
  /** Deepest result nesting (`12` is depth 0, `{}` and `[]` depth 1). */
  maxResultDepth: number
  /** Largest sibling result a script may receive, as UTF-8 JSON. */
  maxSiblingResultBytes: number
  /** Sibling calls (`vance.tools.call`) one run may make. */
  maxSiblingCalls: number
  /** Nesting depth of sibling calls: a direct call is depth 0, its siblings depth 1, … */
  maxNestingDepth: number
  /** Longest timeout a caller may ask for. */
  maxTimeoutMs: number
}

export const KIB = 1024
export const MIB = 1024 * 1024

export const DEFAULT_LIMITS: SandboxLimits = Object.freeze({
  memoryBytes: 32 * MIB,
  stackBytes: 256 * KIB,
  maxStatements: 1_000_000,
  maxResultBytes: 1 * MIB,
  maxResultDepth: 64,
  maxSiblingResultBytes: 4 * MIB,
  maxSiblingCalls: 32,
  maxNestingDepth: 4,
  maxTimeoutMs: 30_000,
})

export const DEFAULT_TIMEOUT_MS = 5000
export const MAX_STACK_BYTES = 256 * KIB

/**
 * QuickJS calls the interrupt handler once per ~10,000 "polls" (a poll is a backward jump or a
 * function entry). Measured with this build: a simple loop of 1,000,000 iterations — of one or of
 * four statements — calls it ~200 times; 100,000 calls of a one-line function call it ~30 times.
 * So one handler call ("tick") stands for about 5,000 simple statements.
 */
export const STATEMENTS_PER_TICK = 5000

export const ticksFor = (maxStatements: number) => Math.max(1, Math.ceil(maxStatements / STATEMENTS_PER_TICK))

export function resolveLimits(overrides: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits = { ...DEFAULT_LIMITS, ...overrides }
  const positive = (name: keyof SandboxLimits) => {
    const v = limits[name]
    if (!Number.isInteger(v) || v <= 0) throw new RangeError(`sandbox limit ${name} must be a positive integer, got ${v}`)
  }
  ;(Object.keys(DEFAULT_LIMITS) as (keyof SandboxLimits)[]).forEach(positive)
  if (limits.stackBytes > MAX_STACK_BYTES)
    throw new RangeError(`sandbox limit stackBytes must be at most ${MAX_STACK_BYTES}, got ${limits.stackBytes}`)
  return limits
}

export const formatBytes = (n: number) =>
  n >= MIB ? `${+(n / MIB).toFixed(1)} MiB` : n >= KIB ? `${+(n / KIB).toFixed(1)} KiB` : `${n} bytes`
