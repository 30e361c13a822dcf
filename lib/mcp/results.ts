/** Turning remote MCP tools into ToolSpecs, and their results and failures into ToolOutcomes. */
import type { CallToolResult } from '@modelcontextprotocol/client'
import type { ToolOutcome } from '../calls/outcome'
import { success, toolError } from '../calls/outcome'
import type { JsonSchema } from '../config/json-schema'
import { compile } from '../config/json-schema'
import { sha256 } from '../runtime/hash'
import type { SecretScrubber } from '../secrets/scrubber'
import type { RemoteTool } from './connections'

/** Tool names as the OpenAI and Anthropic APIs accept them. */
export const MAX_MODEL_TOOL_NAME = 64

/**
 * The remote input schema as our validator and the model APIs want it: no `$schema` (draft
 * 2020-12 ids the shared ajv does not load), always `type: object`. Memoized per catalog entry,
 * so the dispatcher's compiled-validator cache hits on every call.
 */
const sanitized = new WeakMap<RemoteTool, { schema: JsonSchema; problem?: string }>()

export function inputSchemaOf(tool: RemoteTool): { schema: JsonSchema; problem?: string } {
  let hit = sanitized.get(tool)
  if (!hit) {
    const { $schema: _ignored, ...rest } = (tool.inputSchema ?? {}) as Record<string, unknown>
    const schema: JsonSchema = rest.type === undefined ? { type: 'object', ...rest } : rest
    let problem: string | undefined
    if (schema.type !== 'object') problem = `its input schema is not an object schema`
    else {
      try {
        compile(schema)
      } catch (e) {
        problem = `its input schema cannot be used (${(e as Error).message})`
      }
    }
    hit = problem ? { schema, problem } : { schema }
    sanitized.set(tool, hit)
  }
  return hit
}

/** Remote tool names may hold `.`, `/`, spaces; sub-tool names may not. */
export const localNameOf = (remote: string) => remote.replace(/[^A-Za-z0-9_-]/g, '_')

/** A stable shorter alias when `<pack>__<local>` is over the model APIs' 64 characters. */
export function shortAlias(pack: string, local: string): string | undefined {
  if (pack.length + 2 + local.length <= MAX_MODEL_TOOL_NAME) return undefined
  const room = Math.max(1, MAX_MODEL_TOOL_NAME - pack.length - 2 - 7)
  return `${local.slice(0, room)}_${sha256(local).slice(0, 6)}`
}

/** Whitespace collapsed, cut to `max` characters (an ellipsis marks a cut). */
export function cut(text: string | undefined, max = 80): string | undefined {
  if (!text) return undefined
  const flat = text.replace(/\s+/g, ' ').trim()
  if (!flat) return undefined
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`
}

/** `*` and `?` globs, case-insensitive, anchored. */
export function globMatcher(patterns: string[]): (name: string) => boolean {
  const res = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .replace(/[.+^${}()|[\]\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
        'i',
      ),
  )
  return (name) => res.some((r) => r.test(name))
}

/** The content a model gets: structured content when the server sent it, else the content blocks (JSON text parsed). */
export function contentOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && !result.isError) return result.structuredContent
  const blocks = (result.content ?? []).map((block) => {
    if (block.type === 'text') return parseJsonText(block.text)
    return block
  })
  if (blocks.length === 0) return null
  return blocks.length === 1 ? blocks[0] : blocks
}

function parseJsonText(text: string): unknown {
  const t = text.trim()
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.parse(t)
    } catch {
      return text
    }
  }
  return text
}

export function outcomeOf(server: string, tool: string, result: CallToolResult, scrubber: SecretScrubber): ToolOutcome {
  const content = scrubber.scrub(contentOf(result))
  if (!result.isError) return success(content)
  const texts = (result.content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text.trim())
    .filter(Boolean)
  const message = texts.length
    ? scrubber.scrubText(texts.join('\n'))
    : `MCP tool '${tool}' on server '${server}' reported an error without a message.`
  return toolError(message, { server, tool, content })
}

export function failureOf(server: string, tool: string, e: unknown, scrubber: SecretScrubber): ToolOutcome {
  // A JSON-RPC error from the server (the v2 SDK's ProtocolError; v1's McpError prefixed its
  // message), recognised by shape so this module never loads the SDK.
  if (isJsonRpcError(e)) {
    return toolError(
      `MCP server '${server}' rejected the call to '${tool}': ${scrubber.scrubText(e.message.replace(/^MCP error -?\d+: /, ''))}`,
      { server, tool, code: e.code },
    )
  }
  return toolError(scrubber.scrubText((e as Error)?.message ?? String(e)), { server, tool })
}

const isJsonRpcError = (e: unknown): e is Error & { code: number } =>
  e instanceof Error &&
  typeof (e as { code?: unknown }).code === 'number' &&
  (e.name === 'ProtocolError' || /^MCP error -?\d+: /.test(e.message))
