/**
 * The process surface: what one process may see and call this turn. It is the ToolGate for
 * every call made inside a process (a model's, `invoke_tool`'s, a script's `vance.tools.call`),
 * the DiscoverySurface the meta-tools work on, and the source of the per-turn manifest.
 */

import type { ToolOutcome } from '../calls/outcome'
import { EXPANSION_LIMITS, WORK_BUDGETS } from '../config/expansion-budget'
import { withRendered } from '../config/json-render'
import { invalidInput, ServerToolsError } from '../errors'
import type { EndpointSurface, NativeDeferral } from '../models/documents'
import type { SurfaceDocuments } from '../recipes/catalog'
import type { CallerProcessKey, ProcessKey, ProcessRecord, ProcessStore } from '../recipes/ports'
import type { ProcessService } from '../recipes/spawn'
import type { SpawnRateSettings } from '../recipes/spawn-rate'
import { BoundedCache, ByteBudget } from '../runtime/bounded-cache'
import type { Clock } from '../runtime/clock'
import type { CallSignal } from '../runtime/deferred-signal'
import type { Logger } from '../runtime/logger'
import type { CodeApi } from '../tools/builtins/execute_code'
import { CODE_TOOL, type CodeDeclaration, codeDeclaration, declarationBytes as codeDeclarationBytes } from '../tools/code-declaration'
import { type DescribedPage, type DescribedTool, type DiscoverySurface, type ListedPage, nameKey, type Tool } from '../tools/contracts'
import type { CallerIdentity, ToolDispatcher, ToolGate } from '../tools/dispatcher'
import type { ServerToolService } from '../tools/service'
import { usageRole } from '../usage/role'
import { type Bucket, classify, type EndpointLimits, type Turn } from './classify'
import { clientToolsOf, isClientTool } from './client-tools'
import { DESCRIBED_MEMO_BYTES, type DescribedParts, DescribedRenderings } from './described'
import { type DiagnosisMessage, diagnoseEmptyResponse, type PhantomOrigin } from './diagnosis'
import { demotedDiscoveryBlock, discoveryBlock, distinctHints, searchHintOf } from './discovery'
import { CAPABILITY_FLOOR, INVOKE_TOOL, isFloor, META_TOOLS } from './families'
import {
  DEFERRED_ENTRIES_COUNT,
  type ManifestFormat,
  NATIVE_DEFERRAL_OF,
  nativeSplit,
  objectSchema,
  STRICT_DIALECT,
  toolsArrayJson,
} from './formats'
import { geminiDroppedJson } from './gemini'
import { ObservedLimits } from './limits'
import { previewSurface, type SurfacePreview } from './preview'
import { planStrict, type StrictCaps, strictestCaps } from './strict'

/** Share of the activation TTL within which a call to an activated tool does not re-stamp it. */
export const RESTAMP_SHARE = 0.1
export interface SurfaceSettings {
  /** Slots kept free for the engine's own action tool (deployment setting, default 1). */
  reserve: number
  /**
   * Rendered manifest bodies kept for reuse, all processes together (default 64 MiB): a tenant
   * spawning many processes over hundreds of tools pushes out the oldest bodies (they are rendered
   * again when asked), never the container's memory.
   */
  manifestMemoBytes?: number
  /**
   * Visible sets and turns kept for reuse, all processes together (default 64 MiB, each process
   * weighed at 1 KiB a tool it can see): processes over large packs push out the oldest (computed
   * again when asked), never the container's memory.
   */
  surfaceMemoBytes?: number
  /**
   * What tool_description renders of each tool version (its size, its long members as UTF-8
   * JSON), kept for every process, all tenants together (default 32 MiB): past it the oldest go
   * and are rendered again when asked.
   */
  describedMemoBytes?: number
  /** Activations that keep their class (spec §14.2 max-activated-tools, default 40). */
  maxActivated: number
  /** A process lives this long after its last write (default 24 h). */
  processTtlMs: number
  /**
   * An MCP session (a process spawned by `initialize`) ends after this long without a request
   * (default 30 min, MCP_SESSION_IDLE_TTL): one-shot clients never send DELETE, and their
   * processes would otherwise pile up for a day each.
   */
  mcpSessionIdleMs?: number
  /** No learned tool limit below this (LEARNED_TOOL_LIMIT_MIN; default LEARNED_LIMIT_DEFAULTS.minimum). */
  learnedLimitMinimum?: number
  /** A learned tool limit is forgotten this long after it was learned (LEARNED_TOOL_LIMIT_TTL_HOURS). */
  learnedLimitTtlMs?: number
  /** Spawns per tenant and container (lib/recipes/spawn-rate.ts; default 120 at once, 600 a minute). */
  spawnRate?: Partial<SpawnRateSettings>
  /** Code mode: the declaration in the code tool's description stays within this many UTF-8 bytes (default 48 KiB). */
  codeDeclarationBytes?: number
}

export const DEFAULT_CODE_DECLARATION_BYTES = 48 * 1024

export const DEFAULT_MCP_SESSION_IDLE_MS = 30 * 60_000
export const DEFAULT_SURFACE_SETTINGS: SurfaceSettings = {
  reserve: 1,
  maxActivated: 40,
  processTtlMs: 24 * 3600_000,
  mcpSessionIdleMs: DEFAULT_MCP_SESSION_IDLE_MS,
}
export const DEFAULT_MANIFEST_MEMO_BYTES = 64 * 1024 * 1024
/** What the per-process memo of visible sets and turns may hold, all processes together. */
export const SURFACE_MEMO_BYTES = 64 * 1024 * 1024
/** One tool's weight there (its visible entry and its turn's maps): ~0.9 KB measured. */
export const SURFACE_MEMO_TOOL_BYTES = 1024

/** Measured demand per tool for a role (spec §14.4); the Usage feature plugs in here. */
export interface DemandSource {
  demand(tenant: string, project: string, role: string): Promise<ReadonlyMap<string, number>>
}

export interface SurfaceDeps {
  tools: ServerToolService
  documents: SurfaceDocuments
  processes: ProcessService
  store: ProcessStore
  limits: ObservedLimits
  /** tool_list, tool_description, invoke_tool: resolved by the surface itself, never through the cascade. */
  metaTools: readonly Tool[]
  log: Logger
  clock: Clock
  settings: SurfaceSettings
  demand?: DemandSource
  /** `execute_code` (lib/tools/builtins/execute_code.ts): offered to processes whose recipe sets `surface: code`. */
  codeTool?: Tool
}

export interface ManifestRequest {
  format?: ManifestFormat
  /** Skill tools (spec §14.2 withAdditional): added as keep, triaged again. */
  extraTools?: readonly string[]
  /**
   * anthropic and openai-responses: append deferred and demoted tools with `defer_loading: true`
   * (and the format's tool search tool). Absent: as the catalog's deferral says (`auto` = native
   * where the endpoint has it).
   */
  deferLoading?: boolean
  /**
   * openai, openai-responses, anthropic: render `strict: true` on the manifest's tools whose
   * schemas are inside the provider's strict subset, in rank order while the profile's strict caps
   * have room; the others go without, each named with its reason in the body's `strict`.
   */
  strict?: boolean
}

export interface LimitFacts {
  limit?: number
  chain: { model: string; catalog?: number; catalogSource: string; learned?: number }[]
  /** The strictest name length and schema size over the chain. */
  endpoint?: EndpointLimits
  /** Whether the manifest defers in the endpoint's own form: only when every chain entry has the same one and none says `meta`. */
  native?: NativeDeferral
  /** The strictest strict-tool caps over the chain. */
  strict?: StrictCaps
  /** The chain's `surface`: `native` when an entry says so, else `code` when one does (see codeChoice). */
  surface?: EndpointSurface
  /** The smallest `codeDeclarationBytes` over the chain. */
  codeDeclarationBytes?: number
}

/** Who chose the code surface for a process. */
export type CodeChoice = { code: false } | { code: true; by: 'recipe' | 'endpoint' }

/**
 * Code mode when the recipe or the model chain's profiles ask for it and neither says `native`:
 * either side can opt in, and either can refuse — a recipe whose steps a person should see, or a
 * small model that writes worse code than it fills in arguments (issue 27).
 */
export function codeChoice(recipe: EndpointSurface | undefined, endpoints: EndpointSurface | undefined): CodeChoice {
  if (recipe === 'native' || endpoints === 'native') return { code: false }
  if (recipe === 'code') return { code: true, by: 'recipe' }
  return endpoints === 'code' ? { code: true, by: 'endpoint' } : { code: false }
}

export class SurfaceService {
  private readonly meta: Map<string, Tool>
  /**
   * Per process: the last visible set and turn, reused while their inputs are unchanged. Weighed
   * by the tools each holds: a process over a 1,000-operation pack kept ~0.9 MB here (measured:
   * 40 such processes, +35.6 MB of heap), so 5,000 entries alone bounded nothing.
   */
  private readonly memo: BoundedCache<string, SurfaceMemo>
  /** Every memoised body of every process counts against this. */
  private readonly bodyBudget: ByteBudget
  /** What tool_description renders of each tool version, kept for every process (./described.ts). */
  private readonly renderings: DescribedRenderings

  constructor(private readonly deps: SurfaceDeps) {
    this.memo = new BoundedCache(5_000, { maxBytes: deps.settings.surfaceMemoBytes ?? SURFACE_MEMO_BYTES })
    this.bodyBudget = new ByteBudget(deps.settings.manifestMemoBytes ?? DEFAULT_MANIFEST_MEMO_BYTES)
    this.renderings = new DescribedRenderings(deps.settings.describedMemoBytes ?? DESCRIBED_MEMO_BYTES)
    this.meta = new Map(deps.metaTools.map((t) => [t.name, t]))
    for (const n of META_TOOLS) if (!this.meta.has(n)) throw new Error(`the surface needs the meta-tool '${n}'`)
  }

  get settings() {
    return this.deps.settings
  }

  /** Tool versions tool_description has measured and rendered since start (tests count them). */
  async describedRenders(): Promise<number> {
    return this.renderings.renders
  }

  /** The caller's process (ProcessService.get: another subject's process is NOT_FOUND). */
  async open(key: CallerProcessKey): Promise<ProcessSurface> {
    const record = await this.deps.processes.get(key)
    const surface = new ProcessSurface(this.deps, this.meta, record, this.memo, true, this.bodyBudget, this.renderings)
    await surface.keepAlive()
    return surface
  }

  /**
   * A surface over a record that was drafted but never stored (ProcessService.draft): previews and
   * usage insights see exactly what a spawned process would, through the same classification and
   * rendering. Only describing or calling a tool writes (an activation), and nothing here does.
   */
  detached(record: ProcessRecord): ProcessSurface {
    return new ProcessSurface(this.deps, this.meta, record, undefined, false)
  }

  /** A detached surface over the process a spawn with `body` would create now (nothing is stored). */
  async drafted(tenant: string, project: string, actor: string, body: Record<string, unknown>): Promise<ProcessSurface> {
    return this.detached((await this.deps.processes.draft(tenant, project, actor, body)).process)
  }

  /** What a process spawned now would get on its first turn (lib/surface/preview.ts); nothing is stored. */
  preview(tenant: string, project: string, actor: string, body: Record<string, unknown>): Promise<SurfacePreview> {
    return previewSurface({ processes: this.deps.processes, surface: this, tools: this.deps.tools }, tenant, project, actor, body)
  }

  /** The manifest body (JSON text): tools, discovery blocks, prompt hints, budget facts. */
  async manifest(key: CallerProcessKey, req: ManifestRequest = {}): Promise<string> {
    return (await this.open(key)).manifest(req)
  }

  /**
   * The same body as UTF-8 bytes, encoded once per rendered manifest (the route serves these: a
   * turn whose inputs did not change costs no re-encoding). Read-only: shared between requests.
   */
  async manifestBytes(key: CallerProcessKey, req: ManifestRequest = {}): Promise<Uint8Array<ArrayBuffer>> {
    return (await this.open(key)).manifestBytes(req)
  }

  /** A tool call through the process's gates; `signal` (the request's) ends the whole call tree when the caller goes away. */
  async call(
    dispatcher: ToolDispatcher,
    key: CallerProcessKey,
    name: unknown,
    params: unknown,
    opts: { signal?: CallSignal; refused?: 'throw' } = {},
  ): Promise<ToolOutcome> {
    return this.callOn(dispatcher, await this.open(key), key.subject, name, params, opts)
  }

  /** A tool call through an already open surface's gates (the MCP endpoint opens it once per request). */
  callOn(
    dispatcher: ToolDispatcher,
    surface: ProcessSurface,
    subject: string,
    name: unknown,
    params: unknown,
    opts: { signal?: CallSignal; refused?: 'throw' } = {},
  ): Promise<ToolOutcome> {
    return dispatcher.call(surface.gate, surface.caller(subject), name, params, { signal: opts.signal, refused: opts.refused })
  }
}

export class ProcessSurface implements DiscoverySurface {
  private visibleP?: Promise<Visible>
  private limitP?: Promise<LimitFacts>
  /** The resolved limits, once loaded (a rendering follows a turn, which loaded them). */
  private limitFacts?: LimitFacts
  private demandP?: Promise<ReadonlyMap<string, number>>
  private turnP?: Promise<Turn>
  readonly gate: ToolGate

  constructor(
    private readonly deps: SurfaceDeps,
    private readonly meta: ReadonlyMap<string, Tool>,
    readonly record: ProcessRecord,
    private readonly memo: BoundedCache<string, SurfaceMemo> = new BoundedCache(1),
    /** false for a detached surface (a preview): no process exists whose budget the logs would report. */
    private readonly stored = true,
    private readonly bodyBudget = new ByteBudget(DEFAULT_MANIFEST_MEMO_BYTES),
    private readonly renderings = new DescribedRenderings(),
  ) {
    this.gate = {
      resolve: (name) => this.resolveForCall(name),
      names: async () => (await this.visible()).tools.map((t) => t.name),
      surface: this,
    }
  }

  // Built on first use (a memoised manifest never needs them); shared while the record's frozen
  // spawn-time lists are the same arrays (the memory store hands out the same ones).
  private get allowed() {
    return setOf(this.record.allowed)
  }
  private get promoted() {
    return setOf(this.record.promoted)
  }
  private get deferForced() {
    return setOf(this.record.deferred)
  }

  get key(): ProcessKey {
    return { tenant: this.record.tenant, project: this.record.project, id: this.record.id }
  }

  caller(subject: string): CallerIdentity {
    return {
      tenant: this.record.tenant,
      project: this.record.project,
      subject,
      processId: this.record.id,
      role: this.record.role || usageRole(this.record),
    }
  }

  /** allowed ∩ resolvable, plus the floor (always) and invoke_tool (when allowed). */
  visible(): Promise<Visible> {
    return (this.visibleP ??= this.loadVisible())
  }

  /** min over the chain of (catalog maxTools, learned limit). */
  limit(): Promise<LimitFacts> {
    return (this.limitP ??= this.loadLimit())
  }

  turn(): Promise<Turn> {
    return (this.turnP ??= this.computeTurn())
  }

  /** This turn, or with skill tools (spec §14.2 withAdditional) ranked as keep; they must be visible. */
  async turnWith(extraTools?: readonly string[]): Promise<Turn> {
    if (!extraTools?.length) return this.turn()
    const v = await this.visible()
    const outside = extraTools.filter((n) => !v.byName.has(n))
    if (outside.length) {
      throw invalidInput(
        `extraTools names tools outside this process's allowed list: ${outside.join(', ')}`,
        outside.map((n) => ({ pointer: '/extraTools', message: `'${n}' is not visible to this process` })),
      )
    }
    return this.computeTurn(new Set(extraTools.map((n) => v.byName.get(n)!.name)))
  }

  async manifest(req: ManifestRequest = {}): Promise<string> {
    return this.renderedOf(await this.turnWith(req.extraTools), req).text
  }

  /** The manifest body as UTF-8 bytes (encoded once per memoised body; do not modify them). */
  async manifestBytes(req: ManifestRequest = {}): Promise<Uint8Array<ArrayBuffer>> {
    return this.renderedOf(await this.turnWith(req.extraTools), req).bytes
  }

  /** The manifest body of a turn computed by turnWith(req.extraTools). */
  manifestOf(turn: Turn, req: ManifestRequest = {}): string {
    return this.renderedOf(turn, req).text
  }

  private renderedOf(turn: Turn, req: ManifestRequest): RenderedBody {
    const format = req.format ?? 'native'
    this.logBudget(turn)
    const native = NATIVE_DEFERRAL_OF[format]
    const deferLoading = native !== undefined && (req.deferLoading ?? this.limitFacts?.native === native)
    const strict = req.strict === true && STRICT_DIALECT[format] !== undefined
    const bodies = req.extraTools?.length ? undefined : this.bodiesOf(turn)
    const bodyKey = `${format}${deferLoading ? '+defer' : ''}${strict ? '+strict' : ''}`
    const cached = bodies?.get(bodyKey)
    if (cached !== undefined) return cached
    const body = new RenderedBody(this.render(turn, format, deferLoading, strict))
    if (bodies) this.bodyBudget.set(bodies, bodyKey, body, body.memoryBytes)
    return body
  }

  /**
   * The memoised bodies of exactly this turn: a concurrent request of the same process may have
   * replaced the memo's turn since this one was computed, and its bodies are not this turn's.
   */
  private bodiesOf(turn: Turn): Map<string, RenderedBody> | undefined {
    const memoised = this.memo.get(this.memoKey)?.turn
    return memoised?.turn === turn ? memoised.bodies : undefined
  }

  private render(turn: Turn, format: ManifestFormat, deferLoading: boolean, strict: boolean): string {
    const code = this.codeView(turn)
    const listed = code ? code.manifest : turn.manifest
    const demoted = code ? code.demoted : turn.demoted
    const { demoted: nativeDemoted, deferred: nativeDeferred } = deferLoading
      ? nativeSplit(DEFERRED_ENTRIES_COUNT.has(format) ? turn.budget.effective : null, listed.length, demoted, turn.deferred)
      : { demoted: [], deferred: [] }
    const plan = strict ? planStrict(this.rankedOf(turn, listed), STRICT_DIALECT[format]!, this.limitFacts?.strict) : undefined
    const tools = toolsArrayJson(listed, format, {
      deferred: [...nativeDeferred, ...nativeDemoted],
      ...(plan ? { strict: plan.strict } : {}),
    })
    // deferred in the provider's own form: those tools are in the array, so no block lists them again
    const native = nativeDeferred.length + nativeDemoted.length > 0
    const left = (all: readonly Tool[], taken: readonly Tool[]) => {
      if (!taken.length) return all
      const set = new Set(taken)
      return all.filter((t) => !set.has(t))
    }
    return (
      `{"tools":${tools}` +
      `,"discoveryBlock":${JSON.stringify(discoveryBlock(left(turn.deferred, nativeDeferred)))}` +
      `,"demotedDiscoveryBlock":${JSON.stringify(demotedDiscoveryBlock(left(demoted, nativeDemoted)))}` +
      (native ? `,"deferral":"native"` : '') +
      (plan
        ? `,"strict":${JSON.stringify({ tools: listed.filter((t) => plan.strict.has(t)).map((t) => t.name), notStrict: plan.notStrict })}`
        : '') +
      (format === 'gemini' ? geminiDroppedJson(listed) : '') +
      `,"promptHints":${JSON.stringify(distinctHints(code ? code.declared : turn.manifest))}` +
      `,"budget":${JSON.stringify(turn.budget)}` +
      (code ? `,"code":${JSON.stringify(code.facts)}` : '') +
      '}'
    )
  }

  /** A manifest's tools in the triage's rank order (the floor first, then kept groups as ranked). */
  private rankedOf(turn: Turn, listed: readonly Tool[]): Tool[] {
    const byName = new Map(listed.map((t) => [t.name, t]))
    const ranked: Tool[] = []
    for (const g of turn.groups) {
      if (g.status !== 'kept') continue
      for (const n of g.names) {
        const t = byName.get(n)
        if (t) ranked.push(t)
        byName.delete(n)
      }
    }
    // what the triage did not rank (code mode's own tool, client tools listed beside it) comes last
    return [...ranked, ...byName.values()]
  }

  // ────────── code mode (issue 27) ──────────

  /**
   * Whether this turn is in code mode: the recipe and the chain's profiles (codeChoice), read after
   * the limits are loaded (every turn loads them first), and the deployment offers the code tool.
   */
  get isCode(): boolean {
    return this.codeChoice.code
  }

  private get codeChoice(): CodeChoice {
    if (this.deps.codeTool === undefined) return { code: false }
    return codeChoice(this.record.surface, this.limitFacts?.surface)
  }

  /**
   * The code surface of a turn: the floor, client tools and the code tool in the manifest; this turn's
   * other manifest tools in the declaration, in rank order while it fits the byte budget — the
   * rest are set aside like tools over the tool budget (the demoted block), callable once described.
   */
  codeView(turn: Turn): CodeView | undefined {
    if (!this.isCode) return undefined
    let view = codeViews.get(turn)
    if (view) return view
    const direct = (t: Tool) => isFloor(t.name) || isClientTool(t) || t.name === INVOKE_TOOL
    const codeTool = this.deps.codeTool!
    const withDeclaration = (d: CodeDeclaration): Tool => ({
      ...codeTool,
      description: `${codeTool.description}\n\n\`\`\`ts\n${d.text}\`\`\``,
    })
    const { budget, budgetBy, room } = this.codeBudget(turn.manifest.filter(direct), withDeclaration)
    const inManifest = new Map(turn.manifest.map((t) => [t.name, t]))
    const ranked = new Set<Tool>()
    for (const n of turn.groups.flatMap((g) => g.names)) {
      const t = inManifest.get(n)
      if (t && !direct(t)) ranked.add(t)
    }
    for (const t of turn.manifest) if (!direct(t)) ranked.add(t)
    const declared: Tool[] = []
    const overBudget: Tool[] = []
    const empty = codeDeclaration([])
    const emptyBytes = codeDeclarationBytes(empty)
    const emptyEscaped = escapedBytes(empty.text)
    let bytes = emptyBytes
    let escaped = emptyEscaped
    let roomBound = false
    for (const t of ranked) {
      // a tool's share: its own member text (packs share one wrapper, so this over-counts a little)
      const alone = codeDeclaration([t])
      const own = codeDeclarationBytes(alone) - emptyBytes
      const ownEscaped = room === undefined ? 0 : escapedBytes(alone.text) - emptyEscaped
      const fitsBudget = bytes + own <= budget
      if (fitsBudget && (room === undefined || escaped + ownEscaped <= room)) {
        declared.push(t)
        bytes += own
        escaped += ownEscaped
      } else {
        overBudget.push(t)
        if (fitsBudget) roomBound = true
      }
    }
    // the shares are estimates (the empty body's layout differs from a joined one by a few bytes):
    // the whole text is measured, and the lowest-ranked tools leave until it fits
    let declaration = codeDeclaration(declared)
    const fits = (d: CodeDeclaration) =>
      codeDeclarationBytes(d) <= budget && (room === undefined || escapedBytes(d.text) - emptyEscaped <= room - emptyEscaped)
    while (declared.length && !fits(declaration)) {
      overBudget.unshift(declared.pop()!)
      if (codeDeclarationBytes(declaration) <= budget) roomBound = true
      declaration = codeDeclaration(declared)
    }
    const withApi = withDeclaration(declaration)
    const byName = (a: Tool, b: Tool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    view = {
      declaration,
      declared,
      manifest: [...turn.manifest.filter(direct), withApi].sort(byName),
      demoted: [...turn.demoted, ...overBudget].sort(byName),
      facts: {
        tool: CODE_TOOL,
        chosenBy: (this.codeChoice as { by: 'recipe' | 'endpoint' }).by,
        declarationBytes: codeDeclarationBytes(declaration),
        budgetBytes: budget,
        budgetBy: roomBound ? 'maxSchemaBytes' : budgetBy,
        declared: declared.length,
        overBudget: overBudget.map((t) => t.name),
      },
    }
    codeViews.set(turn, view)
    return view
  }

  /**
   * The declaration's byte budget on this chain: the deployment's setting, the profiles'
   * `codeDeclarationBytes`, and what `maxSchemaBytes` leaves once the rest of the tools array is
   * counted — the declaration reaches the provider inside the code tool's description, so it is
   * bounded there as any tool's schema is (UTF-8 bytes, never fewer than the triage's count).
   */
  private codeBudget(direct: readonly Tool[], withDeclaration: (d: CodeDeclaration) => Tool): CodeBudget {
    let budget = this.deps.settings.codeDeclarationBytes ?? DEFAULT_CODE_DECLARATION_BYTES
    let budgetBy: CodeBudget['budgetBy'] = 'setting'
    const own = this.limitFacts?.codeDeclarationBytes
    if (own !== undefined && own < budget) {
      budget = own
      budgetBy = 'codeDeclarationBytes'
    }
    const maxBytes = this.limitFacts?.endpoint?.maxSchemaBytes
    if (maxBytes === undefined) return { budget, budgetBy }
    // The tools array as the provider receives it (escapes counted): a handful of tools, so exact JSON is cheap.
    const empty = codeDeclaration([])
    let used = wireBytes(withDeclaration(empty))
    for (const t of direct) used += wireBytes(t)
    if (used > maxBytes)
      throw new ServerToolsError(
        'BUDGET_TOO_SMALL',
        `the model chain accepts ${maxBytes} bytes of tool definitions (maxSchemaBytes), but the code tool and the capability floor alone take ${used}; raise maxSchemaBytes in the model catalog`,
        { maxSchemaBytes: maxBytes, floorTools: [CODE_TOOL, ...direct.map((t) => t.name)] },
      )
    // the room for the declaration's escaped text, the empty declaration's own text included
    const room = maxBytes - used + escapedBytes(empty.text)
    return { budget, budgetBy, room }
  }

  /** What execute_code needs: this turn's declared tools, by name and alias. */
  async codeApi(): Promise<CodeApi | undefined> {
    const view = this.codeView(await this.turn())
    if (!view) return undefined
    const declared = new Set<string>()
    const destructive = new Set<string>()
    for (const t of view.declared) {
      for (const n of [t.name, ...(t.aliases ?? [])]) {
        declared.add(n)
        if (t.labels.includes('destructive')) destructive.add(n)
      }
    }
    return { map: view.declaration.map, declared, destructive, allowDestructive: this.record.codeAllowDestructive === true }
  }

  // ────────── DiscoverySurface (tool_list, tool_description) ──────────

  async list(prefix?: string, offset = 0): Promise<ListedPage> {
    const [v, turn] = await Promise.all([this.visible(), this.turn()])
    const p = (prefix ?? '').trim().toLowerCase()
    const max = WORK_BUDGETS.listedNames.limit
    const inContext: string[] = []
    const available: string[] = []
    const packHints: Record<string, string> = {}
    let count = 0
    for (const t of v.tools) {
      if (p && !t.name.toLowerCase().startsWith(p)) continue
      // every match is counted; only a page of them is shown (and so written as usage)
      if (count++ < offset || count > offset + max) continue
      ;(turn.inManifest.has(t.name) ? inContext : available).push(t.name)
      const hint = t.promptHint?.trim()
      if (t.pack && hint && !(t.pack in packHints)) packHints[t.pack] = hint
    }
    return { count, inContext, available, packHints, ...(offset + max < count ? { nextOffset: offset + max } : {}) }
  }

  async describe(names: readonly string[], max: number): Promise<DescribedPage> {
    const [v, turn] = await Promise.all([this.visible(), this.turn()])
    const unknown: string[] = []
    const known: Tool[] = []
    const seen = new Set<string>()
    for (const n of names) {
      const t = v.byName.get(n)
      if (!t) unknown.push(n)
      else if (!seen.has(t.name)) {
        seen.add(t.name)
        known.push(t)
      }
    }
    // Charged by what the answer renders, measured before anything is built or activated: the
    // first tool that does not fit ends the answer (the measure then costs at most the budget).
    // The measure and the long members' renderings are kept per tool version (./described.ts).
    let room = WORK_BUDGETS.describedBytes.limit
    let fitting = Math.min(known.length, max)
    const parts: DescribedParts[] = []
    for (let i = 0; i < fitting; i++) {
      const p = await this.renderings.of(known[i], this.isCode)
      const bytes = p.measured * (this.isCode ? 2 : 1)
      if (bytes > room) fitting = i
      else {
        room -= bytes
        parts.push(p)
      }
    }
    const chosen = known.slice(0, fitting)
    const skipped = known.slice(fitting).map((t) => t.name)
    const overBudget = fitting < Math.min(known.length, max)
    const now = this.deps.clock.now()
    // as a call does (noteUse): a fresh activation stamped within the last RESTAMP_SHARE of its TTL is not written again
    const toStamp = chosen.filter(
      (t) => !isFloor(t.name) && (!turn.inManifest.has(t.name) || this.isFresh(t.name, now)) && !this.recentlyStamped(t.name, now),
    )
    if (toStamp.length) await this.stamp(toStamp.map((t) => t.name))
    const described = chosen.map(
      (t, i): DescribedTool =>
        withRendered(
          {
            name: t.name,
            description: t.description,
            paramsSchema: t.inputSchema,
            primary: turn.bucket.get(t.name) === 'primary',
            deferred: !turn.inManifest.has(t.name),
            activated: this.isFresh(t.name, this.deps.clock.now()),
            searchHint: searchHintOf(t),
            source: t.source,
            ...(parts[i].declaration !== undefined ? { declaration: parts[i].declaration } : {}),
          },
          parts[i].rendered,
        ),
    )
    return { described, unknown, skipped, ...(overBudget ? { overBudget: skipped[0] } : {}) }
  }

  // ────────── internals ──────────

  /**
   * The tool behind a name if this process may call it. One cascade lookup (not a listing): the
   * meta-tools come from the surface itself, every other tool must resolve and be on the frozen
   * allowed list. A broken configuration is reported only for allowed names.
   */
  private async resolveForCall(name: string): Promise<Tool | undefined> {
    if (META_TOOLS.includes(name)) return (await this.visible()).byName.get(name)
    if (name === CODE_TOOL && this.deps.codeTool) {
      await this.limit()
      if (this.isCode) return this.deps.codeTool
    }
    let tool: Tool | undefined
    try {
      tool = await this.deps.tools.lookup(this.record.tenant, this.record.project, name)
    } catch (e) {
      if (this.allowed.has(name)) throw e
      return undefined
    }
    if (!tool) {
      // a client tool answers only where the visible set kept it (no configured tool holds its name, in any case)
      const client = clientToolsOf(this.record).some((t) => t.name === name) ? (await this.visible()).byName.get(name) : undefined
      tool = client && isClientTool(client) ? client : undefined
    } else if (META_TOOLS.includes(tool.name) || !this.allowed.has(tool.name)) return undefined
    if (!tool) return undefined
    const resolved = tool
    return { ...resolved, invoke: async (params, ctx) => (await this.noteUse(resolved), resolved.invoke(params, ctx)) }
  }

  /** A call to a tool outside this turn's manifest activates it; a call to an activated tool re-stamps it. */
  private async noteUse(tool: Tool) {
    const now = this.deps.clock.now()
    if (this.baseBucket(tool) === 'deferred' || this.isFresh(tool.name, now)) {
      // A fresh activation stamped within the last RESTAMP_SHARE of its TTL keeps its stamp: a
      // call then rewrites nothing (its TTL runs from at most that much earlier than the last use).
      if (this.recentlyStamped(tool.name, now)) return
      return this.stamp([tool.name])
    }
    if (this.record.models.length && !(await this.turn()).inManifest.has(tool.name)) return this.stamp([tool.name])
  }

  private baseBucket(t: Tool): Exclude<Bucket, 'activated'> {
    if (isFloor(t.name) || this.promoted.has(t.name)) return 'primary'
    if (this.deferForced.has(t.name)) return 'deferred'
    return t.primary && !t.deferred ? 'primary' : 'deferred'
  }

  /** Stamped within the last RESTAMP_SHARE of the activation TTL: its TTL runs from at most that much earlier than now. */
  private recentlyStamped(name: string, now: number) {
    const at = this.record.activations[name]
    return at !== undefined && now >= at && now - at < this.record.activationTtlMs * RESTAMP_SHARE
  }

  private isFresh(name: string, now: number) {
    const at = this.record.activations[name]
    return at !== undefined && now - at < this.record.activationTtlMs
  }

  private async stamp(names: string[]) {
    const now = this.deps.clock.now()
    const expiresAt = now + (this.record.idleTtlMs ?? this.deps.settings.processTtlMs)
    await this.deps.store.stampActivations(this.key, names, now, expiresAt, now)
    for (const n of names) this.record.activations[n] = now
    this.record.expiresAt = expiresAt
  }

  /**
   * A process with an idle limit (an MCP session) lives on while it is used: its expiry moves to
   * now + the limit once less than half of it is left — at most one write per half-limit, not one
   * per request.
   */
  async keepAlive(): Promise<void> {
    const idle = this.record.idleTtlMs
    if (idle === undefined) return
    if (this.record.expiresAt - this.deps.clock.now() < idle / 2) await this.stamp([])
  }

  private get memoKey() {
    return `${this.record.tenant}\u0000${this.record.project}\u0000${this.record.id}`
  }

  private async loadVisible(): Promise<Visible> {
    const { tools: inventory } = await this.deps.tools.listAll(this.record.tenant, this.record.project)
    const clientTools = clientToolsOf(this.record)
    const memo = this.memo.get(this.memoKey)
    if (memo && memo.clientTools === clientTools && sameTools(memo.inventory, inventory)) return memo.visible
    const visible = this.buildVisible(inventory, clientTools)
    this.memo.set(this.memoKey, { inventory, clientTools, visible }, SURFACE_MEMO_TOOL_BYTES * (inventory.length + clientTools.length))
    return visible
  }

  private buildVisible(inventory: Tool[], clientTools: readonly Tool[]): Visible {
    const allowed = new Set(this.record.allowed)
    const tools: Tool[] = []
    for (const t of inventory) if (!META_TOOLS.includes(t.name) && allowed.has(t.name)) tools.push(t)
    for (const n of CAPABILITY_FLOOR) tools.push(this.meta.get(n)!)
    if (allowed.has(INVOKE_TOOL)) tools.push(this.meta.get(INVOKE_TOOL)!)
    if (clientTools.length) {
      // Configured and built-in tools win a name clash, names compared without case (spawn and
      // PUT …/client-tools warn about it).
      const taken = new Set<string>(META_TOOLS.map(nameKey))
      for (const t of inventory) {
        taken.add(nameKey(t.name))
        for (const a of t.aliases ?? []) taken.add(nameKey(a))
      }
      for (const t of clientTools) if (!taken.has(nameKey(t.name))) tools.push(t)
    }
    tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const byName = new Map<string, Tool>()
    for (const t of tools) byName.set(t.name, t)
    for (const t of tools) for (const a of t.aliases ?? []) if (!byName.has(a)) byName.set(a, t)
    return { tools, byName }
  }

  private async loadLimit(): Promise<LimitFacts> {
    // spawns refuse longer chains; a process stored before that rule reads no more than the budget per turn
    const chain = this.record.models.slice(0, EXPANSION_LIMITS.modelChain)
    if (!chain.length) return { chain: [] }
    const [catalog, learned] = await Promise.all([
      this.deps.documents.chainLimits(this.record.tenant, this.record.project, chain),
      this.deps.limits.forChain(this.record.tenant, chain),
    ])
    let limit: number | undefined
    const facts: LimitFacts['chain'] = []
    const endpoint: EndpointLimits = {}
    const min = (a: number | undefined, b: number | undefined) => (a === undefined ? b : b === undefined ? a : Math.min(a, b))
    const natives = new Set<string>()
    const strictCaps: (StrictCaps | undefined)[] = []
    for (const e of catalog.entries) {
      const l = ObservedLimits.applicable(e, learned.get(e.model))
      const { profile, ...entry } = e
      facts.push({ ...entry, ...(l !== undefined ? { learned: l } : {}) })
      for (const v of [e.catalog, l]) if (v !== undefined) limit = limit === undefined ? v : Math.min(limit, v)
      const name = min(endpoint.maxToolNameLength, profile?.maxToolNameLength)
      const bytes = min(endpoint.maxSchemaBytes, profile?.maxSchemaBytes)
      if (name !== undefined) endpoint.maxToolNameLength = name
      if (bytes !== undefined) endpoint.maxSchemaBytes = bytes
      // a fallback model that cannot read the native form would get a request it rejects
      const deferral = profile?.deferral ?? 'auto'
      natives.add(deferral === 'meta' ? 'none' : (profile?.nativeDeferral ?? 'none'))
      strictCaps.push(profile?.strict)
    }
    const native = natives.size === 1 ? ([...natives][0] as NativeDeferral) : undefined
    const out: LimitFacts = { limit, chain: facts }
    const surfaces = new Set(catalog.entries.map((e) => e.profile?.surface))
    if (surfaces.has('native')) out.surface = 'native'
    else if (surfaces.has('code')) out.surface = 'code'
    const codeBytes = catalog.entries.map((e) => e.profile?.codeDeclarationBytes).filter((b): b is number => b !== undefined)
    if (codeBytes.length) out.codeDeclarationBytes = Math.min(...codeBytes)
    if (Object.keys(endpoint).length) out.endpoint = endpoint
    if (native && native !== 'none') out.native = native
    const strict = strictestCaps(strictCaps)
    if (strict) out.strict = strict
    this.limitFacts = out
    return out
  }

  private async computeTurn(extraKeep?: ReadonlySet<string>): Promise<Turn> {
    this.demandP ??= this.deps.demand
      ? this.deps.demand.demand(this.record.tenant, this.record.project, this.record.role)
      : Promise.resolve(new Map())
    const [v, limit, demand] = await Promise.all([this.visible(), this.limit(), this.demandP])
    const now = this.deps.clock.now()
    const memo = extraKeep ? undefined : this.memo.get(this.memoKey)
    const activationKey = JSON.stringify(this.record.activations)
    const last = memo?.visible === v ? memo.turn : undefined
    if (
      last &&
      last.activationKey === activationKey &&
      last.limit === limit.limit &&
      last.endpoint === endpointKey(limit) &&
      last.demand === demand &&
      now < last.validUntil &&
      now >= last.validFrom
    )
      return last.turn
    const turn = classify({
      tools: v.tools,
      process: this.record,
      now: this.deps.clock.now(),
      maxActivated: this.deps.settings.maxActivated,
      // code mode: the model sees the floor and one tool; the declaration's byte budget bounds the rest
      limit: this.isCode ? undefined : limit.limit,
      reserve: this.reserve,
      demand,
      ...(extraKeep ? { extraKeep } : {}),
      // nor do the endpoint's name and schema rules: declared tools never reach the provider as tools
      ...(limit.endpoint && !this.isCode ? { endpoint: limit.endpoint } : {}),
    })
    if (memo && memo.visible === v) {
      memo.turn = {
        turn,
        activationKey,
        limit: limit.limit,
        endpoint: endpointKey(limit),
        demand,
        validFrom: now,
        validUntil: nextActivationExpiry(this.record, now),
        bodies: new Map(),
      }
    }
    return turn
  }

  /** Slots kept free: the process's own reserve (MCP `?reserve=`, spawn `reserve`), else the deployment's. */
  private get reserve() {
    return this.record.reserve ?? this.deps.settings.reserve
  }

  // ────────── for protocol front ends (MCP) ──────────

  /**
   * This turn's manifest without client tools (an MCP client lists its own; `reserve` keeps room
   * for them), as the JSON text of an MCP tools array — rendered once per turn, like the manifest.
   */
  async serverToolsJson(): Promise<string> {
    const turn = await this.turn()
    this.logBudget(turn)
    // A chain whose model limits names (the MCP URL's ?model=) gets the names that model accepts:
    // a client forwards the list to its provider as it is. tools/call takes either name.
    const providerNames = this.limitFacts?.endpoint?.maxToolNameLength !== undefined
    const bodyKey = providerNames ? 'mcp-server-tools+wire' : 'mcp-server-tools'
    const bodies = this.bodiesOf(turn)
    const cached = bodies?.get(bodyKey)
    if (cached !== undefined) return cached.text
    const json = toolsArrayJson(
      (this.codeView(turn)?.manifest ?? turn.manifest).filter((t) => !isClientTool(t)),
      'mcp',
      { providerNames },
    )
    if (bodies) {
      const body = new RenderedBody(json)
      this.bodyBudget.set(bodies, bodyKey, body, body.memoryBytes)
    }
    return json
  }

  /** The system-prompt material of spec §13: the discovery block, the demoted block, the prompt hints. */
  async promptMaterial(): Promise<{ discoveryBlock: string; demotedDiscoveryBlock: string; promptHints: string[] }> {
    const turn = await this.turn()
    const code = this.codeView(turn)
    return {
      discoveryBlock: discoveryBlock(turn.deferred),
      demotedDiscoveryBlock: demotedDiscoveryBlock(code?.demoted ?? turn.demoted),
      promptHints: distinctHints(code?.declared ?? turn.manifest),
    }
  }

  /** Whether `name` calls one of this process's client tools (no configured or built-in tool answers to it). */
  async isClientToolName(name: string): Promise<boolean> {
    // Most processes declare none: answer without listing the inventory.
    if (!clientToolsOf(this.record).some((t) => t.name === name)) return false
    const t = (await this.visible()).byName.get(name)
    return t !== undefined && isClientTool(t)
  }

  /**
   * Runs a call and says whether it changed the server-side tool list of this turn (a tool
   * activated into it, or pushed out by the budget). Only a call that stamped an activation can;
   * the others cost one comparison of the activations.
   */
  async callChangingTools(run: () => Promise<ToolOutcome>): Promise<{ outcome: ToolOutcome; changed: boolean }> {
    const before = { ...this.record.activations }
    const outcome = await run()
    const after = this.record.activations
    const keys = Object.keys(after)
    if (keys.length === Object.keys(before).length && keys.every((k) => before[k] === after[k])) return { outcome, changed: false }
    const [was, is] = await Promise.all([this.classifyWith(before), this.classifyWith(after)])
    const names = (t: Turn) =>
      t.manifest
        .filter((x) => !isClientTool(x))
        .map((x) => x.name)
        .join('\u0000')
    return { outcome, changed: names(was) !== names(is) }
  }

  private async classifyWith(activations: Record<string, number>): Promise<Turn> {
    this.demandP ??= this.deps.demand
      ? this.deps.demand.demand(this.record.tenant, this.record.project, this.record.role)
      : Promise.resolve(new Map())
    const [v, limit, demand] = await Promise.all([this.visible(), this.limit(), this.demandP])
    return classify({
      tools: v.tools,
      process: { ...this.record, activations },
      now: this.deps.clock.now(),
      maxActivated: this.deps.settings.maxActivated,
      limit: this.isCode ? undefined : limit.limit,
      reserve: this.reserve,
      demand,
      ...(limit.endpoint && !this.isCode ? { endpoint: limit.endpoint } : {}),
    })
  }

  private logBudget(turn: Turn) {
    if (!this.stored) return
    if (!turn.budget.demoted || this.deps.log.enabled?.('info') === false) return
    const ids = { tenant: this.record.tenant, project: this.record.project, processId: this.record.id }
    this.deps.log.log('info', 'surface.budget_demoted', {
      ...ids,
      limit: turn.budget.limit,
      reserved: turn.budget.reserved,
      effective: turn.budget.effective,
      demoted: turn.budget.demoted,
      families: turn.demotedGroups.map((g) => ({ family: g.family, count: g.names.length })),
    })
    if (this.deps.log.enabled?.('debug') !== false)
      this.deps.log.log('debug', 'surface.budget_demoted_names', { ...ids, names: turn.demotedGroups.flatMap((g) => g.names) })
  }

  /** Spec §13.2: phantom candidates of an empty response; each new phantom is reported (WARN) once per process. */
  async diagnoseEmptyResponse(input: { messages: DiagnosisMessage[]; offeredTools: string[]; finishReason?: string }) {
    const { tools: inventory } = await this.deps.tools.listAll(this.record.tenant, this.record.project)
    const known = new Set<string>(META_TOOLS)
    for (const t of inventory) {
      known.add(t.name)
      for (const a of t.aliases ?? []) known.add(a)
    }
    const diagnosis = diagnoseEmptyResponse({
      messages: input.messages,
      offered: new Set(input.offeredTools),
      known,
      finishReason: input.finishReason,
    })
    const ids = { tenant: this.record.tenant, project: this.record.project, processId: this.record.id }
    let fresh = new Set<string>()
    if (diagnosis.kind === 'phantom') {
      fresh = new Set(
        await this.deps.store.markPhantoms(
          this.key,
          diagnosis.phantoms.map((p) => p.name),
          this.deps.clock.now(),
        ),
      )
      for (const p of diagnosis.phantoms) {
        if (fresh.has(p.name))
          this.deps.log.log('warn', 'llm.diagnostic', {
            ...ids,
            kind: 'phantom',
            tool: p.name,
            origin: p.origin,
            finishReason: input.finishReason ?? null,
          })
      }
    } else if (diagnosis.kind === 'blank') {
      this.deps.log.log('warn', 'llm.diagnostic', {
        ...ids,
        kind: 'blank',
        finishReason: input.finishReason ?? null,
        offeredTools: input.offeredTools.length,
      })
    }
    return {
      kind: diagnosis.kind,
      phantoms: diagnosis.phantoms.map((p): { name: string; origin: PhantomOrigin; firstReport: boolean } => ({
        ...p,
        firstReport: fresh.has(p.name),
      })),
      ...(diagnosis.reason ? { reason: diagnosis.reason } : {}),
    }
  }
}

/** Same tools, same objects, same order: the listing memo of ServerToolService hands out the same Tool objects while no document changed. */
function sameTools(a: readonly Tool[], b: readonly Tool[]) {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** The classification changes by itself when an activation's TTL runs out: the earliest such instant after now. */
function nextActivationExpiry(record: ProcessRecord, now: number): number {
  let next = Infinity
  for (const at of Object.values(record.activations)) {
    const end = at + record.activationTtlMs
    if (end > now && end < next) next = end
  }
  return next
}

interface SurfaceMemo {
  inventory: readonly Tool[]
  clientTools: readonly Tool[]
  visible: Visible
  turn?: {
    turn: Turn
    activationKey: string
    limit: number | undefined
    /** endpointKey of the limits the turn was computed with. */
    endpoint: string
    demand: ReadonlyMap<string, number>
    validFrom: number
    validUntil: number
    /** Rendered manifest bodies by format. */
    bodies: Map<string, RenderedBody>
  }
}

const endpointKey = (l: LimitFacts) =>
  `${l.endpoint?.maxToolNameLength ?? ''}/${l.endpoint?.maxSchemaBytes ?? ''}/${l.surface ?? ''}/${l.codeDeclarationBytes ?? ''}`

const utf8 = new TextEncoder()
const utf8Text = new TextDecoder()

/**
 * A rendered body: its JSON text, or its UTF-8 bytes once asked for. Encoding drops the text, so a
 * memoised body costs its size once (the route only ever asks for bytes); text is decoded again
 * only for a caller that asks for it afterwards.
 */
class RenderedBody {
  private textForm?: string
  private bytesForm?: Uint8Array<ArrayBuffer>
  /** What holding it may cost: the text (up to 2 bytes a character) and its UTF-8 bytes (up to 3). */
  readonly memoryBytes: number
  constructor(text: string) {
    this.textForm = text
    this.memoryBytes = text.length * 5
  }
  get text(): string {
    return (this.textForm ??= utf8Text.decode(this.bytesForm!))
  }
  get bytes(): Uint8Array<ArrayBuffer> {
    if (!this.bytesForm) {
      this.bytesForm = utf8.encode(this.textForm!)
      this.textForm = undefined
    }
    return this.bytesForm
  }
}

/** Code views by turn: a turn object is reused while its inputs are unchanged, and so is its view. */
const codeViews = new WeakMap<Turn, CodeView>()

export interface CodeView {
  declaration: CodeDeclaration
  /** Tools in the declaration, in rank order. */
  declared: Tool[]
  /** What the model's tools array holds: the floor, client tools and the code tool. */
  manifest: Tool[]
  /** This turn's demoted tools and those over the declaration budget. */
  demoted: Tool[]
  facts: {
    tool: string
    /** Who chose code mode: the recipe's `surface: code`, or the chain's endpoint profiles. */
    chosenBy: 'recipe' | 'endpoint'
    declarationBytes: number
    budgetBytes: number
    /** What bounded the declaration: the deployment setting, a profile's codeDeclarationBytes, or (when it left a tool out) the room maxSchemaBytes leaves. */
    budgetBy: CodeBudget['budgetBy']
    declared: number
    overBudget: string[]
  }
}

interface CodeBudget {
  /** UTF-8 bytes of the declaration text. */
  budget: number
  budgetBy: 'setting' | 'codeDeclarationBytes' | 'maxSchemaBytes'
  /** Bytes the declaration may take as JSON-escaped text in the tools array (maxSchemaBytes); absent = no such limit. */
  room?: number
}

/** A text's bytes inside a JSON string (escapes counted). */
const escapedBytes = (text: string) => utf8.encode(JSON.stringify(text)).length - 2
/** One tool's bytes in the provider's tools array as maxSchemaBytes counts them (the schema as the renderings send it). */
const wireBytes = (t: Tool) =>
  utf8.encode(JSON.stringify({ name: t.name, description: t.description, input_schema: objectSchema(t.inputSchema) })).length

interface Visible {
  /** Sorted by name. */
  tools: Tool[]
  /** Names and aliases → tool. */
  byName: Map<string, Tool>
}

const sets = new WeakMap<readonly string[], ReadonlySet<string>>()
function setOf(list: readonly string[]): ReadonlySet<string> {
  let set = sets.get(list)
  if (!set) sets.set(list, (set = new Set(list)))
  return set
}
