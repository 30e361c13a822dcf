/**
 * Client tools (spec §7, the third dispatcher source): tools an agent backend declares on its
 * process. They join the surface like any tool — classification, budget triage, discovery, the
 * meta-tools — but they run on the client: a direct call answers the validated params for the
 * backend to run; a call from a script or `invoke_tool` is a tool error (nothing here can run them).
 *
 * Declarations are attacker-written: checked with ajv (JSON pointers), bounded in count, text,
 * schema size and depth, and every input schema must compile.
 */

import { toolError } from '../calls/outcome'
import { BudgetExceeded, budgetFor } from '../config/expansion-budget'
import type { JsonSchema } from '../config/json-schema'
import { compileTransient, SchemaUnusable, validateAgainst } from '../config/json-schema'
import { ownPattern } from '../config/patterns'
import { type PackPatterns, schemaProblem } from '../config/schema-interpreter'
import { unsafeTextIn } from '../config/text-hygiene'
import { type Issue, invalidInput } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'
import { nameKey, type Tool } from '../tools/contracts'

export interface ClientToolDeclaration {
  name: string
  description: string
  inputSchema: JsonSchema
  labels: string[]
  primary: boolean
}

export const CLIENT_TOOL_LIMITS = {
  maxTools: 64,
  maxDescriptionChars: 4_096,
  maxLabels: 16,
  /** One input schema as JSON text. */
  maxSchemaBytes: 16 * 1024,
  maxSchemaDepth: 16,
  /** Every declaration together, as stored on the process (a DynamoDB item is at most 400 KB). */
  maxTotalBytes: 128 * 1024,
} as const

/** The wire names providers accept (OpenAI, Anthropic); MCP clients accept them too. */
export const CLIENT_TOOL_NAME = ownPattern('^[A-Za-z][A-Za-z0-9_-]{0,63}$')

const declarationsSchema: JsonSchema = {
  type: 'array',
  maxItems: CLIENT_TOOL_LIMITS.maxTools,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'description', 'inputSchema'],
    properties: {
      name: { type: 'string', pattern: CLIENT_TOOL_NAME },
      description: { type: 'string', minLength: 1, maxLength: CLIENT_TOOL_LIMITS.maxDescriptionChars },
      inputSchema: { type: 'object' },
      labels: {
        type: 'array',
        maxItems: CLIENT_TOOL_LIMITS.maxLabels,
        items: { type: 'string', pattern: ownPattern('^[a-z0-9][a-z0-9:_-]{0,63}$') },
      },
      primary: { type: 'boolean' },
    },
  },
}

/**
 * The declarations in `value`, or an INVALID_INPUT listing every problem with its JSON pointer
 * (under `pointer`, e.g. `/clientTools`).
 */
export function parseClientTools(value: unknown, pointer: string): ClientToolDeclaration[] {
  const issues = validateAgainst(declarationsSchema, value, pointer)
  if (!issues.length) {
    const total = JSON.stringify(value).length
    if (total > CLIENT_TOOL_LIMITS.maxTotalBytes)
      issues.push({
        pointer,
        message: `client tools may take at most ${CLIENT_TOOL_LIMITS.maxTotalBytes} bytes of JSON together, got ${total}`,
      })
  }
  const seen = new Map<string, string>()
  // each schema's patterns are bounded; 64 schemas at that bound compiled ~1,000 patterns in one turn
  const patterns: PackPatterns = {
    budget: budgetFor('packPatterns', 'the patterns of all client tools (instructions)'),
    charged: new Set(),
  }
  if (!issues.length) {
    ;(value as Record<string, unknown>[]).forEach((d, i) => {
      const at = `${pointer}/${i}`
      const name = d.name as string
      const earlier = seen.get(nameKey(name))
      if (earlier !== undefined)
        issues.push({
          pointer: `${at}/name`,
          message:
            earlier === name
              ? `client tool '${name}' is declared twice`
              : `client tool '${name}' differs only in case from '${earlier}' (tool names are compared without case)`,
        })
      else seen.set(nameKey(name), name)
      // the same text rule as every document (lib/config/text-hygiene.ts): descriptions and schema text reach manifests
      const unsafe = unsafeTextIn({ description: d.description, inputSchema: d.inputSchema }, at)
      if (unsafe)
        issues.push({
          pointer: unsafe.pointer,
          message: `${unsafe.message}; control characters, bidi overrides and tag characters are not allowed`,
        })
      issues.push(...schemaIssues(d.inputSchema as JsonSchema, `${at}/inputSchema`, patterns))
    })
  }
  if (issues.length)
    throw invalidInput(
      `the client tools are invalid (${issues.length} problem${issues.length > 1 ? 's' : ''}: ${issues
        .slice(0, 3)
        .map((i) => `${i.pointer}: ${i.message}`)
        .join('; ')})`,
      issues,
    )
  return (value as Record<string, unknown>[]).map((d) => ({
    name: d.name as string,
    description: d.description as string,
    inputSchema: d.inputSchema as JsonSchema,
    labels: [...new Set((d.labels as string[] | undefined) ?? [])],
    primary: d.primary === true,
  }))
}

function schemaIssues(schema: JsonSchema, at: string, patterns: PackPatterns): Issue[] {
  const text = JSON.stringify(schema)
  if (text.length > CLIENT_TOOL_LIMITS.maxSchemaBytes)
    return [
      { pointer: at, message: `an input schema may be at most ${CLIENT_TOOL_LIMITS.maxSchemaBytes} bytes of JSON, got ${text.length}` },
    ]
  const shape = shapeProblem(schema, at, 1)
  if (shape) return [shape]
  if (schema.type !== 'object')
    return [
      { pointer: `${at}/type`, message: "an input schema must be an object schema (type: 'object'), as every model provider requires" },
    ]
  try {
    // the patterns charged to the declarations' shared budget first (compiled once: compilePattern caches)
    schemaProblem(schema, patterns)
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e
    return [{ pointer: at, message: e.message }]
  }
  try {
    compileTransient(schema, text)
  } catch (e) {
    if (e instanceof SchemaUnusable && e.pointer)
      return [{ pointer: `${at}${e.pointer}`, message: `the input schema cannot be used: ${e.message}` }]
    return [{ pointer: at, message: `the input schema cannot be used: ${(e as Error).message}` }]
  }
  return []
}

/** Too deep, or an `$id` (it would name a schema in the one shared registry). */
function shapeProblem(node: unknown, at: string, depth: number): Issue | undefined {
  if (node === null || typeof node !== 'object') return undefined
  if (depth > CLIENT_TOOL_LIMITS.maxSchemaDepth)
    return { pointer: at, message: `an input schema may nest at most ${CLIENT_TOOL_LIMITS.maxSchemaDepth} levels deep` }
  const entries: [string, unknown][] = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node)
  for (const [k, v] of entries) {
    if (!Array.isArray(node) && k === '$id') return { pointer: `${at}/$id`, message: 'client tool schemas may not declare $id' }
    const found = shapeProblem(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1)
    if (found) return found
  }
  return undefined
}

/**
 * Names that configured or built-in tools already use, compared without case (`nameKey`): those
 * win, and the caller is told. `taken` maps a name key to the tool that holds it.
 */
export function clashWarnings(declared: readonly ClientToolDeclaration[], taken: (key: string) => string | undefined): string[] {
  const out: string[] = []
  for (const d of declared) {
    const holder = taken(nameKey(d.name))
    if (holder === undefined) continue
    out.push(
      holder === d.name
        ? `clientTools: '${d.name}' is also a configured or built-in tool; that tool wins and the client tool is ignored`
        : `clientTools: '${d.name}' differs only in case from the configured or built-in tool '${holder}' (names are compared without case); that tool wins and the client tool is ignored`,
    )
  }
  return out
}

/** Tool objects per (process, version of its declarations): stable objects keep every per-tool cache warm. */
const built = new BoundedCache<string, readonly Tool[]>(5_000)

const NO_CLIENT_TOOLS: readonly Tool[] = Object.freeze([])

export function clientToolsOf(record: {
  tenant: string
  project: string
  id: string
  clientTools?: readonly ClientToolDeclaration[]
  clientToolsVersion?: number
}): readonly Tool[] {
  const declared = record.clientTools ?? []
  // one shared empty list: the surface memo compares this by identity (a fresh [] missed it on every turn)
  if (!declared.length) return NO_CLIENT_TOOLS
  const key = `${record.tenant}\u0000${record.project}\u0000${record.id}\u0000${record.clientToolsVersion ?? 0}`
  let tools = built.get(key)
  if (!tools) tools = built.set(key, declared.map(clientTool))
  return tools
}

function clientTool(d: ClientToolDeclaration): Tool {
  // Already compiled when declared; in another container this compiles it once (same text, same validator).
  compileTransient(d.inputSchema)
  return {
    name: d.name,
    description: d.description,
    inputSchema: d.inputSchema,
    labels: [...d.labels, 'client'],
    primary: d.primary,
    deferred: false,
    source: 'client',
    typeId: 'client',
    async invoke(params, ctx) {
      if (ctx.depth > 0) {
        return toolError(
          `Tool '${d.name}' runs on the client, so it cannot be called from a script or invoke_tool; call it directly as a tool call.`,
          { runOn: 'client' },
        )
      }
      return { isError: false, content: { runOn: 'client', name: d.name, params }, clientCall: { name: d.name, params } }
    },
  }
}

export const isClientTool = (tool: Pick<Tool, 'source'>) => tool.source === 'client'
