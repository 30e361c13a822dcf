/** Built-in `tool_list` (spec §13): the names a process can use, split by whether their schema is in context. */

import { success, toolError } from '../../calls/outcome'
import { WORK_BUDGETS } from '../../config/expansion-budget'
import type { Tool } from '../contracts'
import { PRIMARY_META_BUILTIN } from '../contracts'

export const NO_SURFACE =
  'works inside a process: spawn one (POST /projects/{project}/processes) and call it through /processes/{id}/tool-calls'

export const toolListTool: Tool = {
  name: 'tool_list',
  description: `List the names of every tool you can use. \`inContext\` tools are in your tool list now; \`available\` tools can be loaded with tool_description. Optional \`prefix\` keeps names starting with it (case-insensitive). At most ${WORK_BUDGETS.listedNames.limit} names per answer: \`count\` says how many there are, \`nextOffset\` where the next answer starts.`,
  inputSchema: {
    type: 'object',
    properties: {
      prefix: { type: 'string', description: 'Only names starting with this (case-insensitive), e.g. "gmail__"' },
      offset: { type: 'integer', minimum: 0, description: 'Skip this many names (the nextOffset of the answer before)' },
    },
    additionalProperties: false,
  },
  ...PRIMARY_META_BUILTIN,
  labels: [...PRIMARY_META_BUILTIN.labels, 'read-only'],
  title: 'List tools',
  searchHint: 'names of all tools you can use',
  async invoke(params, ctx) {
    if (!ctx.surface) return toolError(`tool_list ${NO_SURFACE}.`)
    const prefix = typeof params.prefix === 'string' ? params.prefix : undefined
    const offset = typeof params.offset === 'number' && Number.isSafeInteger(params.offset) && params.offset > 0 ? params.offset : 0
    const { count, inContext, available, packHints, nextOffset } = await ctx.surface.list(prefix, offset)
    return success({
      count,
      inContext,
      available,
      ...(Object.keys(packHints).length ? { packHints } : {}),
      ...(nextOffset !== undefined ? { nextOffset } : {}),
    })
  },
}
