/**
 * Built-in `execute_javascript`: run a snippet in the same QuickJS sandbox profile as `scripted`
 * tools (spec §3.1), with the same result shapes: `{ value, durationMs }` or `{ error, message }`.
 */

import { fromCode, success, toolError } from '../../calls/outcome'
import { argumentIssues } from '../../config/argument-validation'
import type { JsonSchema } from '../../config/json-schema'
import { DEFAULT_LIMITS, DEFAULT_TIMEOUT_MS } from '../../sandbox/limits'
import type { Tool } from '../contracts'
import type { ScriptSandbox } from '../types/scripted'

const inputSchema: JsonSchema = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', minLength: 1, description: 'JavaScript; the value of the last expression is the result (JSON only).' },
    timeoutMs: {
      type: 'integer',
      minimum: 1,
      maximum: DEFAULT_LIMITS.maxTimeoutMs,
      description: `Wall-clock timeout in ms, default ${DEFAULT_TIMEOUT_MS}, at most ${DEFAULT_LIMITS.maxTimeoutMs}.`,
    },
  },
}

export function executeJavascriptTool(sandbox: ScriptSandbox): Tool {
  return {
    name: 'execute_javascript',
    description:
      'Run a JavaScript snippet in a sandbox and return the value of its last expression as JSON. No IO, no timers, no modules; ' +
      'about 1,000,000 statements, 32 MiB and a wall-clock timeout. Call other tools synchronously with ' +
      '`vance.tools.call(name, params)` (a failing tool throws an Error), check with `vance.tools.has(name)`, list with `vance.tools.list()`.',
    inputSchema,
    labels: ['code'],
    primary: false,
    deferred: false,
    source: 'builtin',
    typeId: 'builtin',
    searchHint: 'run code, compute, transform data, combine several tool calls in one script',
    async invoke(params, ctx) {
      const issues = argumentIssues(inputSchema, params)
      if (issues.length)
        return toolError(`Invalid arguments for 'execute_javascript': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
      const result = await sandbox.run({
        source: params.code as string,
        timeoutMs: (params.timeoutMs as number | undefined) ?? DEFAULT_TIMEOUT_MS,
        filename: 'code.js',
        // the model wrote this script: its calls count as from code, as code mode's do
        host: {
          tools: fromCode(ctx.tools),
          context: { tenant: ctx.tenant, project: ctx.project, processId: ctx.processId },
          depth: ctx.depth,
        },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      })
      return 'error' in result
        ? { isError: true, content: { error: result.error, message: result.message } }
        : success({ value: result.value, durationMs: result.durationMs })
    },
  }
}
