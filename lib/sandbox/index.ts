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
