/**
 * Built-in `invoke_tool` (spec §13): calls a tool by name through the caller's own gate — the
 * same allow-set and argument checks as a direct call; a deferred allowed tool is activated.
 */

import { toolError } from '../../calls/outcome'
import type { Tool } from '../contracts'
import { PRIMARY_META_BUILTIN } from '../contracts'

export const invokeToolTool: Tool = {
  name: 'invoke_tool',
  description:
    'Call a tool by name with its params, with the same permissions as calling it directly. Rarely needed: load a tool with tool_description and call it directly once it is in your tool list.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool to call' },
      params: { type: 'object', description: "The tool's arguments" },
    },
    required: ['name'],
    additionalProperties: false,
  },
  ...PRIMARY_META_BUILTIN,
  labels: [...PRIMARY_META_BUILTIN.labels],
  title: 'Invoke a tool by name',
  searchHint: 'call a tool by its name',
  async invoke(params, ctx) {
    const name = typeof params.name === 'string' ? params.name.trim() : ''
    if (!name) return toolError('invoke_tool needs the `name` of the tool to call.')
    if (name === 'invoke_tool') return toolError('invoke_tool cannot invoke itself; pass the name of the tool you want to call.')
    return ctx.tools.call(name, params.params ?? {})
  },
}
