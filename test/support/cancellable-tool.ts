/** A built-in tool for cancellation tests: it answers only when its call's signal aborts. */
import { type ToolOutcome, toolError } from '../../lib/calls/outcome'
import type { Tool } from '../../lib/tools/contracts'

/** A primary built-in tool with no parameters, for tests of what a call's context carries. */
export function bareBuiltin(name: string, description: string, invoke: Tool['invoke']): Tool {
  return {
    name,
    description,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    labels: [],
    primary: true,
    deferred: false,
    source: 'builtin',
    typeId: 'builtin',
    invoke,
  }
}

/** `wait_for_cancel`, a promise that resolves once a call is running, and one with what it answered. */
export function waitForCancelTool(): { tool: Tool; started: Promise<void>; outcome: Promise<ToolOutcome> } {
  let running!: () => void
  let answered!: (o: ToolOutcome) => void
  const started = new Promise<void>((resolve) => (running = resolve))
  const outcome = new Promise<ToolOutcome>((resolve) => (answered = resolve))
  const tool = bareBuiltin(
    'wait_for_cancel',
    'Answers when its call is cancelled.',
    (_params, ctx) =>
      new Promise((resolve) => {
        running()
        const signal = ctx.signal
        const answer = (o: ToolOutcome) => {
          answered(o)
          resolve(o)
        }
        if (!signal) return answer(toolError('the call carries no signal'))
        signal.addEventListener('abort', () => answer(toolError(`cancelled: ${String(signal.reason)}`)), { once: true })
      }),
  )
  return { tool, started, outcome }
}
