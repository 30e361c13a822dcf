/**
 * The usage counter: a DispatchListener that turns successful dispatches into counts (spec §14.4).
 *
 * - `calls` +1 for every successful dispatch the dispatcher runs on its normal path: a model's call,
 *   `invoke_tool` and its target, a script's sibling call, the meta-tools themselves; `codeCalls`
 *   +1 beside it when a code-mode script made the call (origin `code`), under the process's role.
 * - `refusals` +1 for a call the dispatcher refused before it ran (a quota, the sandbox's capacity):
 *   what a runaway agent was denied shows beside what it did.
 * - `discoveryHits` +1 for every name a successful `tool_description` described (primary ones too).
 * - `listedHits` +1 for every name a successful `tool_list` answer showed (`inContext` ∪ `available`).
 * - Nothing for a failed call (`isError`), and nothing on the delegate path: the mechanical half of
 *   a wrapper call is a consequence, not a second demand (`beforeDelegate`/`afterDelegate` are
 *   silenced here, so progress listeners still hear it).
 */
import type { Tool } from '../tools/contracts'
import type { AfterCallEvent, DispatchListener, RefusalEvent } from '../tools/dispatcher'
import { UNKNOWN_ROLE } from './ports'
import type { UsageRecorder } from './recorder'

const PACK_SEPARATOR = '__'

/**
 * A tool's family (spec §14.2 ToolFamily, the demotion unit): the pack before `__`, else the first
 * `_` segment, else the name.
 */
export function familyOfName(name: string): string {
  const sep = name.indexOf(PACK_SEPARATOR)
  if (sep > 0) return name.slice(0, sep)
  const us = name.indexOf('_')
  return us > 0 ? name.slice(0, us) : name
}

export const familyOfTool = (tool: Pick<Tool, 'name' | 'pack'>) => tool.pack ?? familyOfName(tool.name)

/** The names a successful `tool_description` answer described. */
export function describedNames(content: unknown): string[] {
  if (!content || typeof content !== 'object') return []
  const c = content as Record<string, unknown>
  const entries = Array.isArray(c.tools) ? c.tools : Array.isArray(c.described) ? c.described : Array.isArray(content) ? content : []
  const names = entries
    .map((e) => (e && typeof e === 'object' ? (e as { name?: unknown }).name : undefined))
    .filter((n): n is string => typeof n === 'string' && n.length > 0)
  return [...new Set(names)]
}

/** The names a successful `tool_list` answer showed. */
export function listedNames(content: unknown): string[] {
  if (!content || typeof content !== 'object') return []
  const c = content as Record<string, unknown>
  const names = [...(Array.isArray(c.inContext) ? c.inContext : []), ...(Array.isArray(c.available) ? c.available : [])].filter(
    (n): n is string => typeof n === 'string' && n.length > 0,
  )
  return [...new Set(names)]
}

export class UsageCounter implements DispatchListener {
  constructor(private readonly recorder: UsageRecorder) {}

  afterCall({ caller, tool, outcome }: AfterCallEvent): void {
    if (outcome.isError) return
    const role = caller.role || UNKNOWN_ROLE
    this.recorder.record({ tenant: caller.tenant, project: caller.project, role, tool: tool.name }, familyOfTool(tool), {
      calls: 1,
      codeCalls: caller.origin === 'code' ? 1 : 0,
    })
    if (tool.source !== 'builtin') return
    const base = { tenant: caller.tenant, project: caller.project, role }
    if (tool.name === 'tool_description')
      this.recorder.recordEach(base, describedNames(outcome.content), familyOfName, { discoveryHits: 1 })
    else if (tool.name === 'tool_list') this.recorder.recordEach(base, listedNames(outcome.content), familyOfName, { listedHits: 1 })
  }

  refused({ caller, tool }: RefusalEvent): void {
    const key = { tenant: caller.tenant, project: caller.project, role: caller.role || UNKNOWN_ROLE, tool: tool.name }
    this.recorder.record(key, familyOfTool(tool), { refusals: 1 })
  }

  /** The delegated half of a wrapper call is not counted (spec §14.4). */
  beforeDelegate(): void {}
  afterDelegate(): void {}
}
