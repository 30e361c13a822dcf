/**
 * Built-in `tool_description` (spec §13): descriptions and parameter schemas for a batch of
 * names; describing a deferred tool activates it (in the manifest from the next turn on).
 */

import { success, toolError } from '../../calls/outcome'
import { WORK_BUDGETS } from '../../config/expansion-budget'
import { formatCount } from '../../runtime/count-format'
import type { Tool } from '../contracts'
import { PRIMARY_META_BUILTIN } from '../contracts'
import { NO_SURFACE } from './tool_list'

export const MAX_DESCRIBED = 25

/** A comma-separated string or a list → trimmed, non-empty, deduplicated names in their first order. */
export function namesFrom(raw: unknown): string[] {
  const parts = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw.filter((x): x is string => typeof x === 'string') : []
  const out: string[] = []
  const seen = new Set<string>()
  for (const p of parts) {
    const n = p.trim()
    if (n && !seen.has(n)) {
      seen.add(n)
      out.push(n)
    }
  }
  return out
}

export const toolDescriptionTool: Tool = {
  name: 'tool_description',
  description: `Describe tools by name and load them: returns each tool's description and parameter schema, and a described tool is in your tool list from the next turn on. Pass every candidate at once (at most ${MAX_DESCRIBED} per call).`,
  inputSchema: {
    type: 'object',
    properties: {
      names: {
        description: 'Tool names: a list, or one comma-separated string',
        anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }],
      },
    },
    required: ['names'],
    additionalProperties: false,
  },
  ...PRIMARY_META_BUILTIN,
  labels: [...PRIMARY_META_BUILTIN.labels, 'read-only'],
  title: 'Describe tools',
  searchHint: 'describe and load tools by name',
  async invoke(params, ctx) {
    if (!ctx.surface) return toolError(`tool_description ${NO_SURFACE}.`)
    const names = namesFrom(params.names)
    if (!names.length)
      return toolError(
        'tool_description needs at least one tool name in `names` (a list or a comma-separated string). Call tool_list to see the names.',
      )
    const { described, unknown, skipped, overBudget } = await ctx.surface.describe(names, MAX_DESCRIBED)
    const bytes = formatCount(WORK_BUDGETS.describedBytes.limit)
    if (!described.length && overBudget)
      return toolError(
        `Tool '${overBudget}' is too large to describe: its description and schema render to more than ${bytes} bytes (describedBytes).`,
        { skipped },
      )
    if (!described.length)
      return toolError(`Unknown tool(s): ${unknown.join(', ')}. Call tool_list to see the tools you can use.`, { unknown })
    return success({
      tools: described,
      ...(unknown.length ? { unknown } : {}),
      ...(skipped.length
        ? {
            skipped,
            skippedReason: overBudget
              ? `one answer describes tools up to ${bytes} bytes (describedBytes); ask again for the skipped ones`
              : `at most ${MAX_DESCRIBED} tools are described per call; ask again for the skipped ones`,
          }
        : {}),
    })
  },
}
