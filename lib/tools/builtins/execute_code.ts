/**
 * Code mode's one tool (issue 27): the model writes TypeScript or JavaScript against the typed
 * `tools` API in this tool's description; only the script's result (and its `console.log` lines)
 * come back. Every call the script makes is an ordinary sibling call through the process's gate
 * (allow-set, activation, budget, usage, egress, spans) and, before that, through the code-mode
 * rules: only tools in this turn's declaration, and no `destructive` tool unless the recipe allows it.
 */

import type { SiblingTools, ToolOutcome } from '../../calls/outcome'
import { success, toolError } from '../../calls/outcome'
import { argumentIssues } from '../../config/argument-validation'
import type { JsonSchema } from '../../config/json-schema'
import { DEFAULT_LIMITS, DEFAULT_TIMEOUT_MS } from '../../sandbox/limits'
import { CODE_TOOL, type CodeApiMap } from '../code-declaration'
import type { DiscoverySurface, Tool } from '../contracts'
import type { ScriptSandbox } from '../types/scripted'

/** What the code tool needs of a code-mode process's surface. */
export interface CodeApi {
  map: CodeApiMap
  /** Names (and aliases) callable from code this turn: the tools in the declaration. */
  declared: ReadonlySet<string>
  /** Declared tools labelled `destructive`. */
  destructive: ReadonlySet<string>
  allowDestructive: boolean
}

export interface CodeSurface extends DiscoverySurface {
  codeApi?(): Promise<CodeApi | undefined>
}

/** Strips TypeScript types, keeping every line where it was (errors name the model's own lines). */
export type TypeStripper = (source: string) => string

/** What comes back beside the result: bounded, whatever the script prints. */
export const CONSOLE_LIMITS = { lines: 100, bytes: 8 * 1024 }

/**
 * A `console.log` line travels as a `vance.tools.has` probe of a name starting with this (no tool
 * name has a space): a probe is not one of the run's 32 sibling calls, which stay the tools'.
 */
const CONSOLE_OP = ' console'

const inputSchema: JsonSchema = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: {
    code: {
      type: 'string',
      minLength: 1,
      description:
        'TypeScript or JavaScript using `tools` (top-level `await` works); the value of the last expression is the result (JSON only).',
    },
    timeoutMs: {
      type: 'integer',
      minimum: 1,
      maximum: DEFAULT_LIMITS.maxTimeoutMs,
      description: `Wall-clock timeout in ms, default ${DEFAULT_TIMEOUT_MS}, at most ${DEFAULT_LIMITS.maxTimeoutMs}.`,
    },
  },
}

export const CODE_TOOL_DESCRIPTION =
  'Run one script that calls your tools and return only its result: write TypeScript or JavaScript against `tools` declared below ' +
  '(`const r = await tools.name({ ... })`; use `Promise.all` for independent calls, `try`/`catch` for a call that may fail). ' +
  'The value of the last expression is the result; `console.log` lines come back beside it. No IO, no timers, no modules. ' +
  'Tools not declared here: find them with tool_list, load them with tool_description, and they are declared from the next turn on.'

/**
 * The prelude that builds `tools` from the map: one line, no newline, so the model's line N is the
 * run's line N. Properties are defined, never assigned (a tool named `__proto__` stays a tool).
 */
function prelude(map: CodeApiMap): string {
  const body =
    `const tools = (function build(m) { ` +
    // the caller's line, read before the call: a rejection after an await has lost the caller's frame
    `function at() { const s = String(new Error().stack || ""); const re = /code\\.ts:(\\d+):(\\d+)/g; let x; ` +
    `while ((x = re.exec(s))) { if (x[1] !== "1" || Number(x[2]) > Number("PRELUDE")) return Number(x[1]) } return 0 } ` +
    `const o = {}; for (const k of Object.keys(m)) { const v = m[k]; ` +
    `Object.defineProperty(o, k, { enumerable: true, value: typeof v === "string" ? async function (p) { const line = at(); ` +
    `try { return await vance.tools.call(v, p === undefined ? {} : p) } catch (e) { throw new Error((line ? "line " + line + ": " : "") + String(e && e.message)) } } : build(v) }) } ` +
    `return Object.freeze(o) })(${JSON.stringify(map)}); ` +
    `const console = Object.freeze({ log: function () { const parts = []; for (let i = 0; i < arguments.length; i++) { const a = arguments[i]; ` +
    `parts.push(typeof a === "string" ? a : (function () { try { return JSON.stringify(a) } catch (e) { return String(a) } })()) } ` +
    `vance.tools.has(${JSON.stringify(CONSOLE_OP)} + parts.join(" ")) } }); `
  // PRELUDE becomes the prelude's own length (same width): frames on line 1 up to it are the prelude's
  return body.replace('PRELUDE', String(body.length).padStart(7, '0'))
}

/**
 * The sandbox's location is in the run's source (prelude + code): kept where it is the model's
 * code, dropped where it is the prelude's (a failed tool call names its caller's line itself).
 */
function locate(message: string, preludeLength: number): string {
  const m = /\s*\(line (\d+), column (\d+)\)$/.exec(message)
  const text = m ? message.slice(0, m.index) : message
  if (!m) return text
  const [l, c] = [Number(m[1]), Number(m[2])]
  if (l > 1) return `line ${l}: ${text}`
  return c > preludeLength ? `line 1: ${text}` : text
}

class ConsoleLines {
  readonly lines: string[] = []
  private bytes = 0
  dropped = 0
  add(line: unknown) {
    const text = typeof line === 'string' ? line : String(line)
    const size = new TextEncoder().encode(text).length
    if (this.lines.length >= CONSOLE_LIMITS.lines || this.bytes + size > CONSOLE_LIMITS.bytes) {
      this.dropped++
      return
    }
    this.bytes += size
    this.lines.push(text)
  }
  get out() {
    return {
      ...(this.lines.length ? { logs: this.lines } : {}),
      ...(this.dropped
        ? {
            logsDropped: this.dropped,
            logsNote: `at most ${CONSOLE_LIMITS.lines} lines and ${CONSOLE_LIMITS.bytes} bytes of console output come back`,
          }
        : {}),
    }
  }
}

/** The script's sibling calls: code-mode rules first, then the process's own gate (the same one a direct call takes). */
function codeSiblings(tools: SiblingTools, api: CodeApi, logs: ConsoleLines): SiblingTools {
  const refuse = async (name: string): Promise<ToolOutcome | undefined> => {
    if (api.declared.has(name)) {
      if (api.destructive.has(name) && !api.allowDestructive)
        return toolError(
          `Tool '${name}' is labelled destructive and is refused from code: call it directly, or set codeAllowDestructive: true in the recipe.`,
          { reason: 'destructive_from_code' },
        )
      return undefined
    }
    // outside the allow-set: the gate's own answer, word for word
    if (!(await tools.has(name))) return undefined
    return toolError(
      `Tool '${name}' is not in your code API yet: load it with tool_description(names=["${name}"]) and call it from the next script.`,
      { reason: 'not_declared' },
    )
  }
  return {
    async call(name, params, opts) {
      return (await refuse(name)) ?? tools.call(name, params, { ...opts, origin: 'code' })
    },
    async delegate(name, params, opts) {
      return (await refuse(name)) ?? tools.delegate(name, params, opts)
    },
    list: async () => (await tools.list()).filter((n) => api.declared.has(n)),
    has: async (name) => {
      if (!name.startsWith(CONSOLE_OP)) return api.declared.has(name) && (await tools.has(name))
      logs.add(name.slice(CONSOLE_OP.length))
      return false
    },
  }
}

/** A stripper's syntax error as `line N: message` (sucrase reports `(line:column)`). */
function syntaxError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e)
  const loc = (e as { loc?: { line?: number; column?: number } })?.loc
  return loc?.line ? `line ${loc.line}: ${message.replace(/\s*\(\d+:\d+\)$/, '')}` : message
}

export function executeCodeTool(deps: { sandbox: ScriptSandbox; stripTypes: () => Promise<TypeStripper> }): Tool {
  return {
    name: CODE_TOOL,
    description: CODE_TOOL_DESCRIPTION,
    inputSchema,
    labels: ['code'],
    primary: true,
    deferred: false,
    source: 'builtin',
    typeId: 'builtin',
    title: 'Run code against your tools',
    searchHint: 'call several tools in one script and return only the result',
    async invoke(params, ctx) {
      const issues = argumentIssues(inputSchema, params)
      if (issues.length)
        return toolError(`Invalid arguments for '${CODE_TOOL}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
      const api = await (ctx.surface as CodeSurface | undefined)?.codeApi?.()
      if (!api) return toolError(`${CODE_TOOL} works inside a process whose recipe sets surface: code.`)
      let body: string
      try {
        body = (await deps.stripTypes())(params.code as string)
      } catch (e) {
        return { isError: true, content: { error: 'SYNTAX_ERROR', message: syntaxError(e) } }
      }
      const logs = new ConsoleLines()
      const head = prelude(api.map)
      const result = await deps.sandbox.run({
        source: head + body,
        timeoutMs: (params.timeoutMs as number | undefined) ?? DEFAULT_TIMEOUT_MS,
        filename: 'code.ts',
        host: {
          tools: codeSiblings(ctx.tools, api, logs),
          context: { tenant: ctx.tenant, project: ctx.project, processId: ctx.processId },
          depth: ctx.depth,
        },
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      })
      return 'error' in result
        ? { isError: true, content: { error: result.error, message: locate(result.message, head.length), ...logs.out } }
        : success({ value: result.value, ...logs.out, durationMs: result.durationMs })
    },
  }
}
