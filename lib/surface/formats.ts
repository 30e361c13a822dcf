/**
 * The tools array in each provider's wire shape: native/MCP `{ name, description, inputSchema }`,
 * OpenAI chat-completions `{ type: 'function', function: { name, description, parameters[, strict] } }`,
 * OpenAI Responses `{ type: 'function', name, description, parameters, strict[, defer_loading] }`,
 * Anthropic Messages `{ name, description, input_schema[, defer_loading][, strict] }`, Gemini
 * `[{ functionDeclarations: [{ name, description, parameters }] }]` (lib/surface/gemini.ts). Each tool's
 * JSON is rendered once per tool object, format and variant (tool objects are cached by document
 * version).
 */
import { EXPANSION_LIMITS, jsonBytes } from '../config/expansion-budget'
import type { JsonSchema } from '../config/json-schema'
import { invalidConfig } from '../errors'
import type { NativeDeferral } from '../models/documents'
import { formatCount } from '../runtime/count-format'
import type { Tool } from '../tools/contracts'
import { toGeminiSchema } from './gemini'
import type { StrictDialect } from './strict'

export const MANIFEST_FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'] as const
export type ManifestFormat = (typeof MANIFEST_FORMATS)[number]

/** OpenAI and Anthropic accept tool names matching this. */
export const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Gemini's FunctionDeclaration.name: at most 63 (content.proto; the triage enforces a profile's own limit). */
const GEMINI_NAME_LENGTH = 63

const cache: Record<string, WeakMap<Tool, string>> = {}

/**
 * The name a provider accepts: the tool's own, else its first alias that fits. With `maxLength`
 * (an endpoint's own cap), undefined when neither fits — the triage demotes such a tool.
 */
export function wireName(tool: Tool): string
export function wireName(tool: Tool, maxLength: number): string | undefined
export function wireName(tool: Tool, maxLength?: number): string | undefined {
  const fits = (n: string) => PROVIDER_NAME.test(n) && (maxLength === undefined || n.length <= maxLength)
  if (fits(tool.name)) return tool.name
  return tool.aliases?.find(fits) ?? (maxLength === undefined ? tool.name : undefined)
}

export function objectSchema(schema: JsonSchema): JsonSchema {
  return schema && typeof schema === 'object' && schema.type === 'object' ? schema : { ...(schema ?? {}), type: 'object' }
}

/** The formats that can send `strict: true`, and whose rules (lib/surface/strict.ts) judge it. */
export const STRICT_DIALECT: Partial<Record<ManifestFormat, StrictDialect>> = {
  openai: 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
}

/** The formats that can defer natively, and the endpoint feature (the profile's nativeDeferral) each needs. */
export const NATIVE_DEFERRAL_OF: Partial<Record<ManifestFormat, NativeDeferral>> = {
  anthropic: 'anthropic-tool-search',
  'openai-responses': 'openai-tool-search',
}

/**
 * Formats whose deferred entries count against the endpoint's tool count. OpenAI validates the
 * array's length before anything else and does not say `defer_loading` entries are exempt;
 * Anthropic's tool search is documented for catalogs far beyond any count it enforces.
 */
export const DEFERRED_ENTRIES_COUNT: ReadonlySet<ManifestFormat> = new Set(['openai-responses'])

/** How one tool is rendered beyond its format. */
export interface Variant {
  deferLoading?: boolean
  strict?: boolean
  /** `mcp` only: the name a provider accepts (wireName) instead of the tool's own. */
  providerNames?: boolean
}

function render(tool: Tool, format: ManifestFormat, v: Variant): unknown {
  switch (format) {
    case 'openai':
      return {
        type: 'function',
        function: {
          name: wireName(tool),
          description: tool.description,
          parameters: objectSchema(tool.inputSchema),
          ...(v.strict ? { strict: true } : {}),
        },
      }
    case 'openai-responses':
      // `strict` is always sent: omitted, Responses makes a compatible schema strict on its own
      return {
        type: 'function',
        name: wireName(tool),
        description: tool.description,
        parameters: objectSchema(tool.inputSchema),
        strict: v.strict === true,
        ...(v.deferLoading ? { defer_loading: true } : {}),
      }
    case 'anthropic':
      return {
        name: wireName(tool),
        description: tool.description,
        input_schema: objectSchema(tool.inputSchema),
        ...(v.deferLoading ? { defer_loading: true } : {}),
        ...(v.strict ? { strict: true } : {}),
      }
    case 'gemini':
      return {
        name: wireName(tool, GEMINI_NAME_LENGTH) ?? wireName(tool),
        description: tool.description,
        parameters: toGeminiSchema(tool.inputSchema).schema,
      }
    case 'mcp': {
      const annotations = annotationsOf(tool.labels)
      return {
        name: v.providerNames ? wireName(tool) : tool.name,
        title: tool.title ?? titleOf(tool.name),
        description: tool.description,
        inputSchema: objectSchema(tool.inputSchema),
        ...(tool.outputSchema ? { outputSchema: objectSchema(tool.outputSchema) } : {}),
        ...(annotations ? { annotations } : {}),
      }
    }
    case 'native':
      // a backend translates this form into its provider's: it gets a name every provider accepts
      return { name: wireName(tool), description: tool.description, inputSchema: objectSchema(tool.inputSchema) }
  }
}

/**
 * A display title from a tool name, for clients that show one (MCP `title`): `petstore__getPetById`
 * → "Petstore: get pet by id", `doc_read_lines` → "Doc read lines".
 */
export function titleOf(name: string): string {
  const words = (part: string) =>
    part
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/[_\-.]+/g, ' ')
      .trim()
      .toLowerCase()
  const cap = (t: string) => t.charAt(0).toUpperCase() + t.slice(1)
  const [pack, ...rest] = name.split('__')
  const title = rest.length ? `${cap(words(pack))}: ${words(rest.join(' '))}` : cap(words(name))
  return title || name
}

/** MCP tool annotations from labels: `read-only` → readOnlyHint; `write`/`side-effect` → not read-only; `destructive` → destructiveHint. */
export function annotationsOf(labels: readonly string[]): { readOnlyHint?: boolean; destructiveHint?: boolean } | undefined {
  const out: { readOnlyHint?: boolean; destructiveHint?: boolean } = {}
  if (labels.includes('read-only')) out.readOnlyHint = true
  else if (labels.includes('write') || labels.includes('side-effect') || labels.includes('destructive')) out.readOnlyHint = false
  if (labels.includes('destructive')) out.destructiveHint = true
  return out.readOnlyHint === undefined && out.destructiveHint === undefined ? undefined : out
}

/**
 * Rendering is bounded in bytes rendered, before any is rendered (issue 21 N2): a tool's schema may
 * share nodes (a pack's `$ref`s, YAML aliases), which cost nothing in memory and a copy each in
 * JSON. The measure walks every use but stops at the limit, so it costs at most the limit.
 */
/** Tools whose rendering is over the manifest budget in some format (measured once per tool object). */
const refused = new WeakSet<Tool>()

function overManifestBudget(what: string, limit: number) {
  const message = `${what} renders to more than ${formatCount(limit)} bytes of JSON, over the manifest budget (manifestBytes)`
  return invalidConfig(`${message}; narrow the tools' schemas or the tools the recipe allows`, [{ message }])
}

export function toolJson(
  tool: Tool,
  format: ManifestFormat,
  variant: Variant = {},
  limit: number = EXPANSION_LIMITS.manifestBytes,
): string {
  const key = `${format}${variant.deferLoading ? '+defer' : ''}${variant.strict ? '+strict' : ''}${variant.providerNames ? '+wire' : ''}`
  const map = (cache[key] ??= new WeakMap())
  let json = map.get(tool)
  if (json === undefined) {
    // a refusal is remembered like a rendering, so asking again does not measure again
    if (limit === EXPANSION_LIMITS.manifestBytes && refused.has(tool)) throw overManifestBudget(`tool '${tool.name}'`, limit)
    const rendered = render(tool, format, variant)
    const bytes = jsonBytes(rendered, limit)
    if (bytes > limit) {
      if (limit === EXPANSION_LIMITS.manifestBytes) refused.add(tool)
      throw overManifestBudget(`tool '${tool.name}'`, limit)
    }
    json = JSON.stringify(rendered)
    map.set(tool, json)
  }
  return json
}

/**
 * Anthropic's server-side tool search, which `defer_loading: true` tools need beside them (the
 * regex variant: it matches names as our own tool_list prefix does). Source: platform.claude.com
 * /docs/en/agents-and-tools/tool-use/tool-search-tool, read 2026-12-01.
 */
export const ANTHROPIC_TOOL_SEARCH_NAME = 'tool_search_tool_regex'
export const ANTHROPIC_TOOL_SEARCH = `{"type":"tool_search_tool_regex_20251119","name":"${ANTHROPIC_TOOL_SEARCH_NAME}"}`

/**
 * OpenAI's hosted tool search (Responses API), which `defer_loading: true` functions need beside
 * them. Source: developers.openai.com/api/docs/guides/tools-tool-search (read 2026-12-01) and
 * ToolSearchToolParam in openai-openapi (test/fixtures/provider-tools/openai-responses-tools.schema.json).
 */
export const OPENAI_TOOL_SEARCH = '{"type":"tool_search"}'

/**
 * Which demoted and deferred tools go in the array with `defer_loading: true`. Where they count
 * (DEFERRED_ENTRIES_COUNT) they fit in what the count leaves after the manifest and the search
 * tool (`effective`: the triage's count budget, null = none). The demoted go first (they outrank
 * the deferred); the rest stay in our discovery blocks.
 */
export function nativeSplit(
  effective: number | null,
  listed: number,
  demoted: readonly Tool[],
  deferred: readonly Tool[],
): { demoted: Tool[]; deferred: Tool[] } {
  const room = effective === null ? Infinity : Math.max(0, effective - listed - 1)
  const d = demoted.slice(0, room)
  return { demoted: d, deferred: deferred.slice(0, Math.max(0, room - d.length)) }
}

const GEMINI_WRAPPER = '{"functionDeclarations":[]}'.length

export interface ArrayOptions {
  /** Appended with `defer_loading: true` beside the format's tool search tool (anthropic, openai-responses). */
  deferred?: readonly Tool[]
  /** These tools are rendered with `strict: true` (formats in STRICT_DIALECT). */
  strict?: ReadonlySet<Tool>
  /** `mcp`: list each tool under the name a provider accepts (its own, else its first alias that fits). */
  providerNames?: boolean
  limit?: number
}

/**
 * The tools array as JSON text, at most `limit` bytes (EXPANSION_LIMITS.manifestBytes). With
 * `deferred`, those tools are appended with `defer_loading: true` and the format's tool search
 * tool joins them: the whole array stays alphabetical (Anthropic's search tool by its name,
 * OpenAI's, which has none, first).
 */
export function toolsArrayJson(tools: readonly Tool[], format: ManifestFormat, options: ArrayOptions = {}): string {
  const deferred = options.deferred ?? []
  const limit = options.limit ?? EXPANSION_LIMITS.manifestBytes
  const strict = STRICT_DIALECT[format] ? options.strict : undefined
  const all = deferred.length
    ? [...tools.map((t) => ({ t, d: false })), ...deferred.map((t) => ({ t, d: true }))].sort((a, b) =>
        a.t.name < b.t.name ? -1 : a.t.name > b.t.name ? 1 : 0,
      )
    : tools.map((t) => ({ t, d: false }))
  const parts: string[] = []
  const openaiSearch = deferred.length > 0 && format === 'openai-responses'
  if (openaiSearch) parts.push(OPENAI_TOOL_SEARCH)
  let search = deferred.length > 0 && format === 'anthropic'
  let bytes =
    2 +
    (format === 'gemini' ? GEMINI_WRAPPER : 0) +
    (search ? ANTHROPIC_TOOL_SEARCH.length + 1 : 0) +
    (openaiSearch ? OPENAI_TOOL_SEARCH.length + 1 : 0)
  for (const { t, d } of all) {
    if (search && t.name > ANTHROPIC_TOOL_SEARCH_NAME) {
      parts.push(ANTHROPIC_TOOL_SEARCH)
      search = false
    }
    const json = toolJson(
      t,
      format,
      { deferLoading: d, strict: strict?.has(t) === true, providerNames: options.providerNames === true },
      limit,
    )
    bytes += json.length + 1
    if (bytes > limit) throw overManifestBudget('the manifest', limit)
    parts.push(json)
  }
  if (search) parts.push(ANTHROPIC_TOOL_SEARCH)
  // Gemini's tools field holds Tool messages; the functions are the declarations of one of them
  if (format === 'gemini') return `[{"functionDeclarations":[${parts.join(',')}]}]`
  return `[${parts.join(',')}]`
}
