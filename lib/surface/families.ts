/**
 * Families and rank rules (spec §14.2). A family is the demotion unit: the pack before `__`,
 * else the first `_`-segment, else the whole name — a half-visible pack is the worst state.
 */

import { PACK_SEPARATOR } from '../config/server-tool'
import type { RankRule } from '../recipes/ports'

/** The capability floor (spec §13.1): always primary, never removed, deferred, disabled or demoted. */
export const CAPABILITY_FLOOR: readonly string[] = ['tool_list', 'tool_description']
export const INVOKE_TOOL = 'invoke_tool'
export const META_TOOLS: readonly string[] = [...CAPABILITY_FLOOR, INVOKE_TOOL]

export const isFloor = (name: string) => name === 'tool_list' || name === 'tool_description'

export function familyOf(name: string): string {
  const sep = name.indexOf(PACK_SEPARATOR)
  if (sep > 0) return name.slice(0, sep)
  const u = name.indexOf('_')
  return u > 0 ? name.slice(0, u) : name
}

export const EMPTY_RULE: RankRule = { names: [], selected: [], prefixes: [] }

/** Compiled for per-turn matching. */
export class RuleMatcher {
  private readonly names: Set<string>
  private readonly selected: Set<string>
  private readonly prefixes: string[]
  constructor(rule: RankRule) {
    this.names = new Set(rule.names)
    this.selected = new Set(rule.selected)
    this.prefixes = rule.prefixes.filter((p) => p.length > 0)
  }
  /**
   * Named exactly or by a `prefix*` entry: splits the tool off its family (the spec owners'
   * decision: keep `doc_read*` with room for two keeps doc_read and doc_read_lines, not the whole
   * doc family or nothing). A label selector ranks its tools without splitting them.
   */
  splits(name: string): boolean {
    if (this.names.has(name)) return true
    for (const p of this.prefixes) if (name.startsWith(p)) return true
    return false
  }
  matches(name: string): boolean {
    if (this.names.has(name) || this.selected.has(name)) return true
    for (const p of this.prefixes) if (name.startsWith(p)) return true
    return false
  }
}
