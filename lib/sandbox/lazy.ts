/**
 * The sandbox as the composition roots hand it to the tool types: created on the first script.
 * Until then neither QuickJS's engines and workers nor the sandbox's own code (a chunk of its own
 * in the Lambda bundle) are loaded — most requests run no script (cold start, README).
 */
import type { SandboxRequest, SandboxResult } from './execute'
import type { SandboxIsolation } from './isolation'
import type { SandboxOptions } from './quickjs'

export interface LazySandbox {
  run(req: SandboxRequest): Promise<SandboxResult>
}

export function lazySandbox(isolation: SandboxIsolation, options: SandboxOptions = {}): LazySandbox {
  let sandbox: Promise<LazySandbox> | undefined
  const get = () => (sandbox ??= import('./index').then((m) => m.createSandbox(isolation, options)))
  return { run: async (req) => (await get()).run(req) }
}
