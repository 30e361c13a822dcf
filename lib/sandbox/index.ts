export { QuickJsSandbox, type SandboxOptions, type SandboxStats } from './quickjs'
export {
  isSandboxFailure,
  type SandboxErrorClass,
  type SandboxFailure,
  type SandboxHost,
  type SandboxRequest,
  type SandboxResult,
  type SandboxSuccess,
} from './execute'
export { DEFAULT_LIMITS, DEFAULT_TIMEOUT_MS, STATEMENTS_PER_TICK, type SandboxLimits } from './limits'
export type { EngineStats } from './engines'
export { InProcessSandbox } from './in-process'

import { InProcessSandbox } from './in-process'
import { QuickJsSandbox, type SandboxOptions } from './quickjs'

/**
 * Where scripts run. `worker`: in worker threads behind a hard watchdog — a script that stalls
 * QuickJS's interrupt polling (e.g. catching its own stack overflows) is terminated at its
 * deadline + 150 ms; costs ~200–350 µs per run. `inline`: on the calling thread — cheapest, and
 * right where one container serves one request at a time (Lambda), but such a script can hold the
 * thread seconds past its deadline.
 */
export type SandboxIsolation = 'worker' | 'inline'
export const SANDBOX_ISOLATIONS: SandboxIsolation[] = ['worker', 'inline']

export function createSandbox(isolation: SandboxIsolation, options: SandboxOptions = {}): QuickJsSandbox | InProcessSandbox {
  return isolation === 'worker' ? new QuickJsSandbox(options) : new InProcessSandbox(options)
}
