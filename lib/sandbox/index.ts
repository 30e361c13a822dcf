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
import type { SandboxIsolation } from './isolation'

export { SANDBOX_ISOLATIONS, type SandboxIsolation } from './isolation'
export { lazySandbox, type LazySandbox } from './lazy'


export function createSandbox(isolation: SandboxIsolation, options: SandboxOptions = {}): QuickJsSandbox | InProcessSandbox {
  return isolation === 'worker' ? new QuickJsSandbox(options) : new InProcessSandbox(options)
}
