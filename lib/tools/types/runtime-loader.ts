/**
 * How the tool types reach their runtime (lib/tools/types/runtime): the code their tools run —
 * request templating and sending, OpenAPI expansion, prompt rendering and LLM calls, the MCP
 * expansions, the egress client — loads on first use, never at a cold start that only reads,
 * lists or validates tools. The definitions (schemas, checks) stay in each type's own module.
 */
import type { ToolSpec } from '../contracts'

export type ToolRuntimes = typeof import('./runtime')

/**
 * The runtime's code, loaded by the caller: the composition root owns the dynamic import, and so
 * where the bundle's chunks are cut (functions/lazy/).
 */
export type LoadToolRuntimes = () => Promise<ToolRuntimes>

type Invoke = ToolSpec['invoke']

/** An invoke that loads the runtimes on its first call and builds the real one, once. */
export function invokeOnFirstUse(load: LoadToolRuntimes, build: (runtimes: ToolRuntimes) => Invoke): Invoke {
  let invoke: Promise<Invoke> | undefined
  return async (params, ctx) => (await (invoke ??= load().then(build)))(params, ctx)
}
