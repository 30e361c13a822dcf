/** Small builders for classification tests: tools as the service would resolve them, and a process record. */

import { success } from '../../../lib/calls/outcome'
import type { ProcessRecord } from '../../../lib/recipes/ports'
import { EMPTY_RULE } from '../../../lib/surface/families'
import { toolDescriptionTool } from '../../../lib/tools/builtins/tool_description'
import { toolListTool } from '../../../lib/tools/builtins/tool_list'
import type { Tool } from '../../../lib/tools/contracts'

export function tool(
  name: string,
  opts: Partial<Pick<Tool, 'primary' | 'deferred' | 'promptHint' | 'searchHint' | 'description' | 'labels' | 'source'>> = {},
): Tool {
  const sep = name.indexOf('__')
  return {
    name,
    description: opts.description ?? `The ${name} tool. It does ${name} things.`,
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    labels: opts.labels ?? [],
    primary: opts.primary ?? true,
    deferred: opts.deferred ?? false,
    source: opts.source ?? 'project',
    typeId: sep > 0 ? 'echo_pack' : 'doc_lookup',
    ...(sep > 0 ? { pack: name.slice(0, sep) } : {}),
    ...(opts.promptHint ? { promptHint: opts.promptHint } : {}),
    ...(opts.searchHint ? { searchHint: opts.searchHint } : {}),
    async invoke() {
      return success(name)
    },
  }
}

export const FLOOR = [toolListTool, toolDescriptionTool]

export const NOW = Date.UTC(2026, 0, 1, 12)
export const MINUTE = 60_000

export function processRecord(over: Partial<ProcessRecord> = {}): ProcessRecord {
  return {
    tenant: 'acme',
    project: 'p1',
    id: 'proc-1',
    recipe: 'default',
    engine: 'default',
    role: 'default',
    roles: [],
    models: [],
    allowed: [],
    promoted: [],
    added: [],
    deferred: [],
    keep: EMPTY_RULE,
    dropFirst: EMPTY_RULE,
    activationTtlMs: 15 * MINUTE,
    activations: {},
    phantomsReported: [],
    createdAt: NOW,
    createdBy: 'alice',
    expiresAt: NOW + 24 * 60 * MINUTE,
    ...over,
  }
}

export const rule = (r: { names?: string[]; selected?: string[]; prefixes?: string[] }) => ({
  names: r.names ?? [],
  selected: r.selected ?? [],
  prefixes: r.prefixes ?? [],
})
export const names = (tools: readonly Tool[]) => tools.map((t) => t.name)
