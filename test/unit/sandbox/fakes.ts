/**
 * A small SiblingTools for sandbox tests: named handlers, every call recorded, and the
 * dispatcher's nesting rule (a sibling call may reach depth 4, not 5) applied the same way.
 */
import type { SiblingTools, ToolOutcome } from '../../../lib/calls/outcome'
import { success, toolError } from '../../../lib/calls/outcome'
import type { SandboxHost } from '../../../lib/sandbox'

export type Handler = (params: Record<string, unknown>, depth: number) => ToolOutcome | Promise<ToolOutcome>

export const MAX_DEPTH = 4

export class FakeSiblings {
  readonly calls: { name: string; params: unknown; depth: number }[] = []
  constructor(readonly handlers: Record<string, Handler>) {}

  tools(depth: number): SiblingTools {
    const call = async (name: string, params: unknown): Promise<ToolOutcome> => {
      const handler = this.handlers[name]
      if (!handler) return toolError(`Tool '${name}' is not callable here.`)
      if (depth + 1 > MAX_DEPTH) return toolError(`Tool '${name}' was not called: sibling calls may nest at most ${MAX_DEPTH} deep.`)
      this.calls.push({ name, params, depth: depth + 1 })
      return handler(params as Record<string, unknown>, depth + 1)
    }
    return {
      call,
      delegate: call,
      list: async () => Object.keys(this.handlers).sort(),
      has: async (name) => name in this.handlers,
    }
  }

  host(depth = 0, context: SandboxHost['context'] = { tenant: 'acme', project: 'p1', processId: 'proc-1' }): SandboxHost {
    return { tools: this.tools(depth), context, depth }
  }
}

export const echo: Handler = (params) => success(params)
export const never = () => new Promise<ToolOutcome>(() => {})
export const ok = <T>(r: unknown): T => {
  if (r && typeof r === 'object' && 'error' in r) throw new Error(`expected a value, got ${JSON.stringify(r)}`)
  return (r as { value: T }).value
}
