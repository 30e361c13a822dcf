/**
 * A pack type that lives only in the tests: proves the ToolFactory contract for packs
 * (`<pack>__<local>` naming, disabledSubTools, label/primary/promptHint propagation,
 * defaultDeferred as the sub-tools' default) before any real pack type exists.
 */

import { success } from '../../lib/calls/outcome'
import type { Tool, ToolFactory } from '../../lib/tools/contracts'

export const echoPackFactory: ToolFactory<{ ops: string[]; deferredOps?: string[] }> = {
  typeId: 'echo_pack',
  kind: 'pack',
  parametersSchema: {
    type: 'object',
    required: ['ops'],
    additionalProperties: false,
    properties: {
      ops: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' } },
      deferredOps: { type: 'array', items: { type: 'string' } },
    },
  },
  async create(config) {
    return config.parameters.ops.map((op) => ({
      localName: op,
      description: `Echo through ${op}`,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
      extraLabels: ['echo'],
      searchHint: `echo ${op}`,
      ...(config.parameters.deferredOps?.includes(op) ? { deferred: true } : {}),
      async invoke(params) {
        return success({ op, text: params.text ?? null })
      },
    }))
  },
}

/** A built-in pack member, to prove a disabled document shadows `<name>__*` built-ins. */
export const builtinPackMember: Tool = {
  name: 'legacy__ping',
  description: 'Answer pong.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  labels: ['legacy'],
  primary: false,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  pack: 'legacy',
  async invoke() {
    return success('pong')
  },
}

export const builtinSearch: Tool = {
  name: 'web_search',
  description: 'Search the web (test built-in).',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
  labels: ['web'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  async invoke(params) {
    return success({ results: [], q: params.q })
  },
}
