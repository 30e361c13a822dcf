/** A built-in tool for cancellation tests: it answers only when its call's signal aborts. */
import { toolError } from '../../lib/calls/outcome'
import type { Tool } from '../../lib/tools/contracts'

/** `wait_for_cancel`, and a promise that resolves once a call is running. */
export function waitForCancelTool(): { tool: Tool; started: Promise<void> } {
  let running!: () => void
  const started = new Promise<void>((resolve) => (running = resolve))
  const tool: Tool = {
    name: 'wait_for_cancel',
    description: 'Answers when its call is cancelled.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    labels: [],
    primary: true,
    deferred: false,
    source: 'builtin',
    typeId: 'builtin',
    invoke: (_params, ctx) =>
      new Promise((resolve) => {
        running()
        const signal = ctx.signal
        if (!signal) return resolve(toolError('the call carries no signal'))
        signal.addEventListener('abort', () => resolve(toolError(`cancelled: ${String(signal.reason)}`)), { once: true })
      }),
  }
  return { tool, started }
}
