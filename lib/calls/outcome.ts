/**
 * The call protocol every layer shares: what a tool call returns and how running code calls
 * other tools. It sits below the tools so the sandbox, MCP result mapping and the tool types can
 * all speak it without importing lib/tools. A failing call is a result (`isError: true`), never an
 * exception that reaches HTTP.
 */

export interface ToolOutcome {
  isError: boolean
  content: unknown
  /** Set when the tool runs on the client (spec §7): the backend runs it with these validated params. */
  clientCall?: { name: string; params: Record<string, unknown> }
}

export const success = (content: unknown): ToolOutcome => ({ isError: false, content })
/** A failure a model can act on: a sentence first, structured fields after. */
export const toolError = (message: string, extra: Record<string, unknown> = {}): ToolOutcome => ({
  isError: true,
  content: { message, ...extra },
})

/** A sibling call may carry a signal of its own (a script's run): the call ends with it. */
export interface SiblingCallOptions {
  signal?: AbortSignal
  /** `code`: the call comes from a code-mode script (execute_code); spans and listeners see it on the caller. */
  origin?: 'code'
}

/** What a running tool may do with its siblings: the same gates as a model's own call. */
export interface SiblingTools {
  call(name: string, params: unknown, opts?: SiblingCallOptions): Promise<ToolOutcome>
  /**
   * The wrapper path: call the tool this one wraps as its mechanical half (spec §14.4,
   * `file_read → client_file_read`). Same gates as `call`; progress listeners hear it, the usage
   * counter does not (one intent is one count).
   */
  delegate(name: string, params: unknown, opts?: SiblingCallOptions): Promise<ToolOutcome>
  list(): Promise<string[]>
  has(name: string): Promise<boolean>
}

/** The same siblings, each call marked as made from code written by the model (usage counts it apart; spans carry it). */
export const fromCode = (tools: SiblingTools): SiblingTools => ({
  call: (name, params, opts) => tools.call(name, params, { ...opts, origin: 'code' }),
  delegate: (name, params, opts) => tools.delegate(name, params, opts),
  list: () => tools.list(),
  has: (name) => tools.has(name),
})
