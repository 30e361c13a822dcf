export type { EngineStats } from './engines'
export {
  isSandboxFailure,
  type SandboxErrorClass,
  type SandboxFailure,
  type SandboxHost,
  type SandboxRequest,
  type SandboxResult,
  type SandboxSuccess,
} from './execute'
export { InProcessSandbox } from './in-process'
export { DEFAULT_LIMITS, DEFAULT_TIMEOUT_MS, type SandboxLimits, STATEMENTS_PER_TICK } from './limits'
export { QuickJsSandbox, type SandboxOptions, type SandboxStats } from './quickjs'
export { type FairnessLimits, FairSandbox, overloaded, type SchedulerStats } from './scheduler'

import { InProcessSandbox } from './in-process'
import type { SandboxIsolation } from './isolation'
import { QuickJsSandbox, type SandboxOptions, type SandboxStats } from './quickjs'
import { FairSandbox } from './scheduler'

export type { SandboxIsolation } from './isolation'
export { type LazySandbox, lazySandbox } from './lazy'

/** How the sandbox is shared between tenants (see scheduler.ts); deployment settings. */
export interface FairnessOptions {
  /** Top-level scripts one tenant may run at once (default: half the workers, at least 1). */
  tenantConcurrency?: number
  /** Scripts one tenant may have waiting (default 8). */
  tenantQueue?: number
  /** Scripts waiting across tenants (default 64). */
  queue?: number
}

export type SandboxSettings = SandboxOptions & FairnessOptions & { isolation?: SandboxIsolation }

export const DEFAULT_TENANT_QUEUE = 8
export const DEFAULT_QUEUE = 64

export function createSandbox(isolation: SandboxIsolation, options: SandboxOptions & FairnessOptions = {}): FairSandbox<SandboxStats> {
  const { tenantConcurrency, tenantQueue = DEFAULT_TENANT_QUEUE, queue = DEFAULT_QUEUE, ...engineOptions } = options
  const inner = isolation === 'worker' ? new QuickJsSandbox(engineOptions) : new InProcessSandbox(engineOptions)
  const slots = engineOptions.asyncEngines ?? 4
  const tenantSlots = Math.min(slots, tenantConcurrency ?? Math.max(1, Math.floor(slots / 2)))
  const depth = inner.limits.maxNestingDepth
  return new FairSandbox(inner, {
    slots,
    tenantSlots,
    tenantQueue,
    queue,
    nestedSlots: slots * depth,
    tenantNestedSlots: tenantSlots * depth,
  })
}
