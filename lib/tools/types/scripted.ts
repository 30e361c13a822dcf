/**
 * `scripted` (spec §3.1): a small JavaScript body with declared inputs, run in the QuickJS
 * sandbox. Inputs are bound as top-level variables (an absent optional one is `null`); `vance`
 * reaches sibling tools through the same gates as a model's own call. The value of the last
 * expression is the result: `{ value, durationMs }`, or `{ error, message }` on failure.
 */

import { success, toolError } from '../../calls/outcome'
import { argumentIssues } from '../../config/argument-validation'
import type { JsonSchema } from '../../config/json-schema'
import { RELATIVE_PATH_PATTERN } from '../../config/patterns'
import type { ServerToolConfig } from '../../config/server-tool'
import type { SandboxRequest, SandboxResult } from '../../sandbox/execute'
import { jsonDeeperThanLimit } from '../../sandbox/json'
import { DEFAULT_LIMITS, DEFAULT_TIMEOUT_MS } from '../../sandbox/limits'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import { checkInputs, type InputDeclaration, inputsSchema, schemaFromInputs } from '../inputs'

export interface ScriptedParameters {
  engine?: 'javascript'
  timeoutMs?: number
  /** Absent = a script that takes no input (same as `[]`). */
  inputs?: InputDeclaration[]
  source?: string
  scriptPath?: string
}

/** What the factory needs of the sandbox (lib/sandbox's createSandbox in production: fair between tenants, cancellable). */
export interface ScriptSandbox {
  run(req: SandboxRequest): Promise<SandboxResult>
}

export const SCRIPT_MAX_TIMEOUT_MS = DEFAULT_LIMITS.maxTimeoutMs

export const scriptedParametersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    engine: { enum: ['javascript'], description: 'Script language; only javascript (the default) for now.' },
    timeoutMs: {
      type: 'integer',
      minimum: 1,
      maximum: SCRIPT_MAX_TIMEOUT_MS,
      description: `Wall-clock timeout per invocation in ms, default ${DEFAULT_TIMEOUT_MS}, at most ${SCRIPT_MAX_TIMEOUT_MS}.`,
    },
    inputs: {
      ...inputsSchema,
      description:
        'Declared inputs, bound as top-level variables; the tool input schema is generated from them. A script that takes none leaves it out.',
    },
    source: { type: 'string', minLength: 1, description: 'Inline JavaScript; the value of the last expression is the result.' },
    scriptPath: {
      type: 'string',
      minLength: 1,
      pattern: RELATIVE_PATH_PATTERN,
      description: 'Cascade document holding the script, read anew on every invocation (e.g. scripts/jira_summary.js).',
    },
  },
}

/** The host object; plus names a script could not use as a variable, or that would hide a builtin. */
const RESERVED_INPUT_NAMES = ['vance']
const JS_RESERVED_WORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'import in instanceof new null return super switch this throw true try typeof var void while with yield let static ' +
    'implements interface package private protected public await arguments eval'
  ).split(' '),
)
const STANDARD_GLOBALS = new Set(
  (
    'globalThis undefined NaN Infinity Object Function Array Number Boolean String Symbol BigInt Math JSON Reflect Proxy Promise ' +
    'Date RegExp Map Set WeakMap WeakSet WeakRef FinalizationRegistry Iterator ArrayBuffer SharedArrayBuffer DataView Atomics ' +
    'Error EvalError RangeError ReferenceError SyntaxError TypeError URIError AggregateError InternalError ' +
    'Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float16Array Float32Array Float64Array ' +
    'BigInt64Array BigUint64Array parseInt parseFloat isNaN isFinite decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape'
  ).split(' '),
)

export function checkScripted(p: ScriptedParameters): { pointer: string; message: string }[] {
  const inputs = Array.isArray(p.inputs) ? p.inputs : []
  const problems = checkInputs(inputs, '/inputs', RESERVED_INPUT_NAMES)
  inputs.forEach((input, i) => {
    if (JS_RESERVED_WORDS.has(input.name))
      problems.push({
        pointer: `/inputs/${i}/name`,
        message: `input name '${input.name}' is a JavaScript reserved word and can't be a variable`,
      })
    else if (STANDARD_GLOBALS.has(input.name))
      problems.push({ pointer: `/inputs/${i}/name`, message: `input name '${input.name}' would hide the standard global ${input.name}` })
  })
  const hasSource = p.source !== undefined
  const hasPath = p.scriptPath !== undefined
  if (hasSource === hasPath)
    problems.push({
      pointer: hasSource ? '/scriptPath' : '',
      message: hasSource ? 'give either source or scriptPath, not both' : 'exactly one of source or scriptPath is required',
    })
  return problems
}

const errorOutcome = (r: { error: string; message: string }) => ({ isError: true, content: { error: r.error, message: r.message } })

export class ScriptedToolFactory implements ToolFactory<ScriptedParameters> {
  readonly typeId = 'scripted'
  readonly kind = 'single' as const
  readonly parametersSchema = scriptedParametersSchema
  private readonly sandbox: ScriptSandbox

  constructor(deps: { sandbox: ScriptSandbox }) {
    this.sandbox = deps.sandbox
  }

  check(parameters: ScriptedParameters) {
    return checkScripted(parameters)
  }

  async create(config: ServerToolConfig<ScriptedParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const p = config.parameters
    const problems = checkScripted(p)
    if (problems.length) throw new Error(`scripted tool '${config.name}': ${problems.map((x) => x.message).join('; ')}`)
    const inputs = p.inputs ?? []
    const inputSchema = schemaFromInputs(inputs)
    const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const sandbox = this.sandbox
    const maxDepth = DEFAULT_LIMITS.maxResultDepth

    return [
      {
        inputSchema,
        extraLabels: ['scripted'],
        async invoke(params, ctx) {
          // Checked here too, not only by the dispatcher: nothing reaches the script unvalidated.
          const issues = argumentIssues(inputSchema, params)
          if (issues.length)
            return toolError(`Invalid arguments for '${config.name}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
          const bound: Record<string, unknown> = {}
          for (const input of inputs) {
            const value = params[input.name] ?? null
            if (value !== null && typeof value === 'object' && jsonDeeperThanLimit(JSON.stringify(value), maxDepth))
              return toolError(`Invalid arguments for '${config.name}': ${input.name} nests deeper than ${maxDepth} levels.`)
            bound[input.name] = value
          }

          let source = p.source
          if (p.scriptPath !== undefined) {
            const doc = await env.documents.read(p.scriptPath)
            if (!doc)
              return toolError(
                `Script '${p.scriptPath}' of tool '${config.name}' does not exist in project '${env.project}', the tenant layer or the bundled defaults.`,
                { path: p.scriptPath },
              )
            if (!doc.body.trim()) return toolError(`Script '${p.scriptPath}' of tool '${config.name}' is empty.`, { path: p.scriptPath })
            source = doc.body
          }

          const result = await sandbox.run({
            source: source!,
            inputs: bound,
            timeoutMs,
            filename: p.scriptPath ?? `${config.name}.js`,
            host: { tools: ctx.tools, context: { tenant: ctx.tenant, project: ctx.project, processId: ctx.processId }, depth: ctx.depth },
            ...(ctx.signal ? { signal: ctx.signal } : {}),
          })
          return 'error' in result ? errorOutcome(result) : success({ value: result.value, durationMs: result.durationMs })
        },
      },
    ]
  }
}

export type { FactoryEnv }
