/**
 * The tool contracts every tool type, built-in and the dispatcher share.
 * A failing call is a result (`isError: true`), never an exception that reaches HTTP.
 */

import type { SiblingTools, ToolOutcome } from '../calls/outcome'
import type { JsonSchema } from '../config/json-schema'
import type { ServerToolConfig, ToolParameters } from '../config/server-tool'
import type { CascadeReader, Layer } from '../documents/cascade'
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'

/** `client`: declared by the agent backend on its process (spec §7); it runs on the client. */
export type ToolSource = Layer | 'builtin' | 'client'

export interface InvocationContext {
  tenant: string
  project: string
  /** The caller's subject (token `sub`). */
  subject: string
  processId?: string
  /** Role for usage accounting: recipe name, else engine name, else `_unknown`. */
  role?: string
  tools: SiblingTools
  /** Nesting depth of sibling calls: 0 for a direct call. */
  depth: number
  signal?: AbortSignal
  /** The calling process's tool surface (the meta-tools work on it); absent outside a process. */
  surface?: DiscoverySurface
}

/** One tool as `tool_description` reports it. */
export interface DescribedTool {
  name: string
  description: string
  paramsSchema: JsonSchema
  /** In this turn's manifest by class (primary, promoted, the floor). */
  primary: boolean
  /** Not in this turn's manifest before this call (deferred, or demoted by the budget). */
  deferred: boolean
  /** Activated (its schema is in the manifest from the next turn on). */
  activated: boolean
  searchHint: string
  source: ToolSource
  /** Code mode: the tool as it will be declared in the code tool's API (TypeScript). */
  declaration?: string
}

/** One `tool_list` answer: at most WORK_BUDGETS.listedNames names, from `offset` on. */
export interface ListedPage {
  /** Every visible name the prefix selects, shown or not. */
  count: number
  inContext: string[]
  available: string[]
  packHints: Record<string, string>
  /** Where the next page starts, when this one did not show every name. */
  nextOffset?: number
}

export interface DescribedPage {
  described: DescribedTool[]
  unknown: string[]
  skipped: string[]
  /** The first skipped tool, when it was skipped because the answer's bytes (describedBytes) were spent. */
  overBudget?: string
}

/** What the discovery meta-tools (tool_list, tool_description) see: a process's surface. */
export interface DiscoverySurface {
  /**
   * Visible names whose lower-cased form starts with the lower-cased prefix, split by manifest
   * membership; at most WORK_BUDGETS.listedNames of them, from `offset` on (visible order).
   */
  list(prefix?: string, offset?: number): Promise<ListedPage>
  /**
   * Describes at most `max` visible tools (in the given order) and activates the deferred ones
   * among them, while their descriptions and schemas fit in WORK_BUDGETS.describedBytes;
   * invisible names land in `unknown`, visible ones past `max` or the bytes in `skipped`.
   */
  describe(names: readonly string[], max: number): Promise<DescribedPage>
}

/**
 * The form two tool names are compared in for clashes: without case. To a model (and to a person
 * reading a manifest) `TOOL_LIST` and `tool_list` are the same tool, so two tools of one surface
 * never differ only in case; the first keeps the name, the other is left out with a reason.
 * Tool names are ASCII by every name pattern, so ASCII lower case is the whole fold.
 */
export const nameKey = (name: string) => name.toLowerCase()

/** A callable, fully resolved tool (a configured singleton, a pack sub-tool, or a built-in). */
export interface Tool {
  name: string
  description: string
  inputSchema: JsonSchema
  /** JSON Schema of a successful result's content (an object schema), when the tool declares one. */
  outputSchema?: JsonSchema
  labels: string[]
  /** A human-readable name for UIs (MCP `title`); derived from the name when absent (formats.ts titleOf). */
  title?: string
  /** In the manifest by default (spec §5); false = reachable through discovery. */
  primary: boolean
  /** Sub-tools of a pack start deferred when the pack says `defaultDeferred`. */
  deferred: boolean
  promptHint?: string
  searchHint?: string
  source: ToolSource
  /** `builtin` for built-ins, else the ToolFactory's typeId. */
  typeId: string
  /** Set for `<pack>__<local>` sub-tools. */
  pack?: string
  /** Other names that resolve to this tool (e.g. a shortened alias of a name over 64 characters). */
  aliases?: string[]
  invoke(params: Record<string, unknown>, ctx: InvocationContext): Promise<ToolOutcome>
}

/** What a factory returns: one spec for a singleton, one per sub-tool (with localName) for a pack. */
export interface ToolSpec {
  localName?: string
  description?: string // defaults to the config's description
  inputSchema: JsonSchema
  /** JSON Schema of a successful result's content (an object schema). */
  outputSchema?: JsonSchema
  /** Added to the config's labels (e.g. `rest`, `read-only`). */
  extraLabels?: string[]
  searchHint?: string
  /** Sub-tool default; falls back to the config's defaultDeferred. */
  deferred?: boolean
  aliases?: string[]
  invoke(params: Record<string, unknown>, ctx: InvocationContext): Promise<ToolOutcome>
}

/** Per-scope environment a factory gets when it expands a config into tools. */
export interface FactoryEnv {
  tenant: string
  project: string
  /** Reads documents through the cascade of this tenant/project (live: call it at invocation time). */
  documents: CascadeReader
  log: Logger
  clock: Clock
  /** Reports a non-fatal problem (e.g. an unreachable MCP server) into the listing's `problems`. */
  problem(message: string): void
}

/** A tool type: the parameter rules config parsing checks (lib/config) plus how it expands into tools. */
export interface ToolFactory<P = any> extends ToolParameters<P> {
  /** `pack` factories return specs with localName; `single` exactly one spec without. */
  kind: 'single' | 'pack'
  /**
   * true when the expansion depends on more than the config document (a spec document, a remote
   * catalog): the service then calls create on every resolution and the factory keeps its own cache.
   */
  dynamic?: boolean
  /**
   * For a dynamic factory: what an expansion of `config` depends on beyond the config (a spec
   * document's layer, path and version), read cheaply. The service keeps the expansion under it
   * as it keeps a static factory's, so the same token gives the same Tool objects; undefined (or
   * no method): expanded on every resolution.
   */
  dependencyToken?(config: ServerToolConfig<P>, env: FactoryEnv): Promise<string | undefined>
  create(config: ServerToolConfig<P>, env: FactoryEnv): Promise<ToolSpec[]>
}

/** The fixed flags of a primary meta built-in (whoami and the discovery tools). */
export const PRIMARY_META_BUILTIN = {
  labels: ['meta'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
} as const satisfies Partial<Tool>
