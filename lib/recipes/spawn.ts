/**
 * Spawn (spec §6): resolve the recipe and engine through the cascade, resolve `@label` selectors
 * through ServerToolService.findByLabel semantics NOW, and persist the frozen allowed list
 * `(engineDefault ∪ add) ∖ remove` — a tool labelled later never reaches a running process.
 */
import { randomUUID } from 'node:crypto'
import { EXPANSION_LIMITS } from '../config/expansion-budget'
import { precompilePatterns } from '../config/patterns'
import { isReservedToolName, RESERVED_TOOL_NAMES } from '../config/server-tool'
import { type Issue, invalidConfig, invalidInput, notFound } from '../errors'
import { parseModelRef } from '../models/documents'
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { type ClientToolDeclaration, clashWarnings, parseClientTools } from '../surface/client-tools'
import { CAPABILITY_FLOOR } from '../surface/families'
import { nameKey, type Tool } from '../tools/contracts'
import type { ServerToolService } from '../tools/service'
import { usageRole } from '../usage/role'
import { SurfaceDocuments } from './catalog'
import { DOC_NAME_PATTERN, enginePath, parseEntry, recipePath } from './documents'
import type { CallerProcessKey, ProcessRecord, ProcessStore, RankRule } from './ports'
import { allowedToolsTooLong, MAX_SPAWN_ALLOWED_TOOLS, modelChainTooLong } from './spawn-limits'
import type { SpawnRate } from './spawn-rate'

export const DEFAULT_RECIPE = 'default'
export const PROCESS_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/

export interface ProcessServiceDeps {
  tools: ServerToolService
  documents: SurfaceDocuments
  processes: ProcessStore
  clock: Clock
  log: Logger
  /** How long a process lives after its last write (spawn, activation). */
  processTtlMs: number
  /** How long an MCP session's process lives without a request (spawn `{ idle: true }`). */
  mcpSessionIdleMs?: number
  newId?: () => string
  /** Spawns per tenant (./spawn-rate.ts); absent = unlimited (tests that spawn in bulk). */
  spawnRate?: SpawnRate
  /** DocumentStore.freshen: the tenant's stamp, read beside the process (one request where the store batches reads). */
  freshen?: (tenant: string) => Promise<void>
}

export interface SpawnResult {
  process: ProcessRecord
  /** Things the caller should know: names that resolve to nothing yet, labels selecting nothing, floor entries ignored. */
  warnings: string[]
  /** The same warnings with what each is about: the document, its field and the entry (for file:line reports). */
  findings: SpawnFinding[]
}

export interface SpawnFinding {
  /** 'engine' for the engine's allowedTools, 'request' for the spawn's own, else 'recipe'. */
  document: 'recipe' | 'engine' | 'request'
  field: string
  /** The entry as written (`@label`, a name). */
  entry: string
  kind: 'label-selects-nothing' | 'unknown-tool' | 'floor-ignored'
  message: string
}

/** Collects findings while a draft resolves its selectors (after the request's own warnings). */
class Findings {
  readonly list: SpawnFinding[] = []
  constructor(
    private readonly engineName: string,
    private readonly requestWarnings: readonly string[] = [],
  ) {}
  get messages(): string[] {
    return [...this.requestWarnings, ...this.list.map((f) => f.message)]
  }
  add(field: string, entry: string, kind: SpawnFinding['kind']) {
    const document = field === 'allowedTools' ? 'engine' : field === SPAWN_ALLOWED_TOOLS ? 'request' : 'recipe'
    const where =
      document === 'engine' ? `engine ${this.engineName} allowedTools` : document === 'request' ? "the spawn's allowedTools" : field
    const message =
      kind === 'label-selects-nothing'
        ? `${where}: '${entry}' selects no tool now (label selectors are resolved once, at spawn)`
        : kind === 'unknown-tool'
          ? `${where}: no tool '${entry}' exists now; the name stays in the process and takes effect if such a tool appears`
          : `${where}: '${entry}' is part of the capability floor and stays primary and callable`
    this.list.push({ document, field, entry, kind, message })
  }
}

const SPAWN_FIELDS = ['recipe', 'engine', 'models', 'clientTools', 'reserve', 'allowedTools']
/** The findings' field for the spawn's own allowedTools (it replaces the engine's). */
const SPAWN_ALLOWED_TOOLS = 'request allowedTools'

export { MAX_SPAWN_ALLOWED_TOOLS, SPAWN_ITEM_LIMITS } from './spawn-limits'

const MAX_ALLOWED_ENTRY_CHARS = 200
/** At most this many slots may be kept for the client's own tools. */
export const MAX_RESERVE = 64

export class ProcessService {
  constructor(private readonly deps: ProcessServiceDeps) {}

  /** The caller's process: absent, expired and another subject's all answer the same NOT_FOUND. */
  async get(key: CallerProcessKey): Promise<ProcessRecord> {
    if (!PROCESS_ID_PATTERN.test(key.id))
      throw invalidInput(`process id '${key.id.slice(0, 80)}' is malformed`, [{ pointer: '/id', message: 'invalid process id' }])
    const reading = this.deps.processes.get({ tenant: key.tenant, project: key.project, id: key.id }, this.deps.clock.now())
    // every turn on a process reads documents next: their freshness check goes out with the process read
    const freshening = this.deps.freshen?.(key.tenant)
    const rec = freshening ? (await Promise.all([reading, freshening]))[0] : await reading
    if (!rec || rec.createdBy !== key.subject)
      throw notFound(`no process '${key.id}' of yours in project '${key.project}' (it may have expired, or another subject spawned it)`)
    return rec
  }

  /**
   * Resolves and persists a process: `draft` + one conditional create. `body` may be a function
   * that reads it (a request body): it is called only once the spawn is admitted.
   * `opts.idle`: an MCP session's process, which ends when idle (ProcessServiceDeps.mcpSessionIdleMs).
   */
  async spawn(
    tenant: string,
    project: string,
    actor: string,
    body: Record<string, unknown> | (() => Promise<Record<string, unknown>>),
    opts: { idle?: boolean; id?: string } = {},
  ): Promise<SpawnResult> {
    // before any work, reading the body included: a tenant past its spawn rate costs this check
    // and nothing else, whatever it sends (issue 21 N5: each refused 340 KB body was read and parsed)
    this.deps.spawnRate?.take(tenant)
    const drafted = await this.draft(tenant, project, actor, typeof body === 'function' ? await body() : body)
    const record = drafted.process
    // a caller-chosen id (a stateless MCP client's process, derived from who asks for what): CONFLICT when it is live
    if (opts.id !== undefined) record.id = opts.id
    const idle = this.deps.mcpSessionIdleMs
    if (opts.idle && idle !== undefined) {
      record.idleTtlMs = idle
      record.expiresAt = record.createdAt + idle
    }
    await this.deps.processes.create(record)
    this.deps.log.log('info', 'process.spawned', {
      tenant,
      project,
      processId: record.id,
      recipe: record.recipe,
      engine: record.engine,
      allowed: record.allowed.length,
      models: record.models,
    })
    return drafted
  }

  /**
   * Everything a spawn decides, without storing it: the record a spawn now would persist. Previews
   * and usage insights open a surface on it (SurfaceService.detached) — the same code as a spawn.
   */
  async draft(tenant: string, project: string, actor: string, body: Record<string, unknown>): Promise<SpawnResult> {
    // the client tools' patterns compiled one per turn of the event loop before the checks read them
    await precompilePatterns(body.clientTools)
    const req = checkSpawnBody(body)
    const docs = this.deps.documents
    const recipeName = req.recipe ?? DEFAULT_RECIPE
    const recipe = await docs.recipe(tenant, project, recipeName)
    if (!recipe) {
      const hint = SurfaceDocuments.hint(recipeName, await docs.names(tenant, project, 'recipe'))
      throw invalidConfig(`unknown recipe '${recipeName}': no ${recipePath(recipeName)} in any layer${hint}`, [
        { pointer: '/recipe', message: `unknown recipe '${recipeName}'` },
      ])
    }
    const engineName = req.engine ?? recipe.config.engine
    const engine = await docs.engine(tenant, project, engineName)
    if (!engine) {
      const hint = SurfaceDocuments.hint(engineName, await docs.names(tenant, project, 'engine'))
      const where: Issue =
        req.engine !== undefined
          ? { pointer: '/engine', message: `unknown engine '${engineName}'` }
          : { path: recipePath(recipeName), pointer: '/engine', message: `recipe '${recipeName}' names unknown engine '${engineName}'` }
      throw invalidConfig(`unknown engine '${engineName}': no ${enginePath(engineName)} in any layer${hint}`, [where])
    }
    const models = req.models ?? recipe.config.models
    const { missingProviders } = await docs.chainLimits(tenant, project, models)
    if (missingProviders.length) {
      const known = await docs.instances(tenant, project)
      throw invalidConfig(
        `unknown model instance${missingProviders.length > 1 ? 's' : ''} ${missingProviders.map((i) => `'${i}'`).join(', ')}: each needs models/<instance>/_provider.yaml in some layer${SurfaceDocuments.hint(missingProviders[0], known)}`,
        models
          .map((m, i) => ({ m, i }))
          .filter(({ m }) => missingProviders.includes(m.slice(0, m.indexOf('/'))))
          .map(({ m, i }) => ({ pointer: `/models/${i}`, message: `unknown model instance in '${m}'` })),
      )
    }

    const { tools: inventory, problems } = await this.deps.tools.listAll(tenant, project)
    const sel = new Selector(inventory)
    // A tool document that is there but yields no tools (a pack whose server is unreachable, whose
    // spec is missing): the process is spawned without them, and says so.
    const leftOut = problems.filter((p) => !p.errors).map((p) => `tool '${p.name}' (${p.source} layer): ${p.message}`)
    const warnings = new Findings(engineName, [
      ...leftOut,
      ...(req.clientTools ? clashWarnings(req.clientTools, (k) => sel.holderOf(k)) : []),
    ])
    const floorNote = (field: string, names: Iterable<string>) => {
      for (const n of names) if (CAPABILITY_FLOOR.includes(n)) warnings.add(field, n, 'floor-ignored')
    }
    // A spawn's own allowedTools replaces the engine's allow-set for this process (frozen now, like
    // the recipe's selectors); the recipe's add/remove/defer/keep still apply within it.
    const engineExplicit = req.allowedTools !== undefined || engine.config.allowedTools.length > 0
    const engineSet =
      req.allowedTools !== undefined
        ? sel.resolve(req.allowedTools, SPAWN_ALLOWED_TOOLS, warnings).all
        : engineExplicit
          ? sel.resolve(engine.config.allowedTools, 'allowedTools', warnings).all
          : new Set(inventory.map((t) => t.name))
    const add = sel.resolve(recipe.config.allowedToolsAdd, 'allowedToolsAdd', warnings)
    const remove = sel.resolve(recipe.config.allowedToolsRemove, 'allowedToolsRemove', warnings)
    const defer = sel.resolve(recipe.config.allowedToolsDefer, 'allowedToolsDefer', warnings)
    floorNote('allowedToolsRemove', remove.all)
    floorNote('allowedToolsDefer', defer.all)

    const allowed = new Set<string>([...engineSet, ...add.all])
    for (const n of remove.all) if (!CAPABILITY_FLOOR.includes(n)) allowed.delete(n)
    const sorted = (s: Iterable<string>) => [...s].sort()
    const promoted = [...add.all].filter((n) => allowed.has(n) && (engineExplicit ? engineSet.has(n) : add.byName.has(n)))

    const now = this.deps.clock.now()
    const record: ProcessRecord = {
      tenant,
      project,
      id: this.deps.newId?.() ?? randomUUID(),
      recipe: recipeName,
      engine: engineName,
      role: usageRole({ recipe: recipeName, engine: engineName }),
      roles: engine.config.roles,
      models: [...models],
      allowed: sorted(allowed),
      promoted: sorted(promoted),
      added: sorted([...add.all].filter((n) => allowed.has(n))),
      deferred: sorted([...defer.all].filter((n) => allowed.has(n) && !CAPABILITY_FLOOR.includes(n))),
      keep: sel.rank(recipe.config.allowedToolsKeep, 'allowedToolsKeep', warnings),
      dropFirst: sel.rank(recipe.config.allowedToolsDropFirst, 'allowedToolsDropFirst', warnings),
      activationTtlMs: recipe.config.activationTtlMs,
      activations: {},
      phantomsReported: [],
      createdAt: now,
      createdBy: actor,
      expiresAt: now + this.deps.processTtlMs,
      ...(req.clientTools?.length ? { clientTools: req.clientTools, clientToolsVersion: 1 } : {}),
      ...(req.reserve !== undefined ? { reserve: req.reserve } : {}),
      ...(req.allowedTools !== undefined ? { allowedToolsOverride: [...req.allowedTools] } : {}),
      ...(recipe.config.surface ? { surface: recipe.config.surface } : {}),
      ...(recipe.config.codeAllowDestructive ? { codeAllowDestructive: true } : {}),
    }
    return { process: record, warnings: warnings.messages, findings: warnings.list }
  }

  /** Replaces a process's client tools (PUT …/client-tools); configured and built-in names win, with a warning. */
  async setClientTools(
    key: CallerProcessKey,
    body: Record<string, unknown>,
    expectedVersion?: number,
  ): Promise<{ version: number; names: string[]; warnings: string[] }> {
    const unknown = Object.keys(body).filter((k) => k !== 'clientTools')
    if (unknown.length)
      throw invalidInput(
        `unknown field '${unknown[0]}' (the body is { clientTools: [...] })`,
        unknown.map((k) => ({ pointer: `/${k}`, message: `unknown field '${k}'` })),
      )
    await precompilePatterns(body.clientTools)
    const tools = parseClientTools(body.clientTools ?? [], '/clientTools')
    const { subject: _, ...stored } = key
    await this.get(key)
    const { tools: inventory } = await this.deps.tools.listAll(key.tenant, key.project)
    const sel = new Selector(inventory)
    const now = this.deps.clock.now()
    const version = await this.deps.processes.setClientTools(stored, tools, {
      ...(expectedVersion !== undefined ? { expectedVersion } : {}),
      expiresAt: now + this.deps.processTtlMs,
      now,
    })
    return { version, names: tools.map((t) => t.name), warnings: clashWarnings(tools, (k) => sel.holderOf(k)) }
  }

  /** Ends a process (an MCP session's DELETE). */
  async end(key: CallerProcessKey): Promise<void> {
    if (!PROCESS_ID_PATTERN.test(key.id)) throw notFound(`no process '${key.id.slice(0, 80)}' in project '${key.project}'`)
    await this.get(key)
    const { subject: _, ...stored } = key
    await this.deps.processes.end(stored, this.deps.clock.now())
  }
}

interface SpawnRequest {
  recipe?: string
  engine?: string
  models?: string[]
  clientTools?: ClientToolDeclaration[]
  reserve?: number
  allowedTools?: string[]
}

function checkSpawnBody(body: Record<string, unknown>): SpawnRequest {
  const issues: Issue[] = []
  for (const k of Object.keys(body))
    if (!SPAWN_FIELDS.includes(k))
      issues.push({
        pointer: `/${k}`,
        message: `unknown field '${k}' (a spawn takes recipe, engine, models, clientTools, reserve and allowedTools)`,
      })
  const name = (k: 'recipe' | 'engine') => {
    const v = body[k]
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string' || !DOC_NAME_PATTERN.test(v)) {
      issues.push({ pointer: `/${k}`, message: `${k} must be a ${k} name (lower-case letters, digits, '_' or '-')` })
      return undefined
    }
    return v
  }
  const recipe = name('recipe')
  const engine = name('engine')
  let models: string[] | undefined
  if (body.models !== undefined && body.models !== null) {
    if (!Array.isArray(body.models))
      issues.push({ pointer: '/models', message: "models must be a list of 'instance/model' strings, primary first" })
    else if (body.models.length > EXPANSION_LIMITS.modelChain)
      // checked before any entry is read: every turn of the process would read each one (issue 21 N5)
      issues.push({ pointer: '/models', message: modelChainTooLong(body.models.length) })
    else {
      models = []
      body.models.forEach((m, i) => {
        const r = typeof m === 'string' ? parseModelRef(m) : `models[${i}] must be a string`
        if (typeof r === 'string') issues.push({ pointer: `/models/${i}`, message: r })
        else models!.push(m as string)
      })
    }
  }
  const reserve = body.reserve
  if (
    reserve !== undefined &&
    reserve !== null &&
    !(Number.isInteger(reserve) && (reserve as number) >= 0 && (reserve as number) <= MAX_RESERVE)
  ) {
    issues.push({ pointer: '/reserve', message: `reserve must be a whole number from 0 to ${MAX_RESERVE}` })
  }
  let allowedTools: string[] | undefined
  if (body.allowedTools !== undefined && body.allowedTools !== null) {
    if (!Array.isArray(body.allowedTools))
      issues.push({ pointer: '/allowedTools', message: "allowedTools must be a list of tool names and '@label' selectors" })
    else if (body.allowedTools.length > MAX_SPAWN_ALLOWED_TOOLS) issues.push({ pointer: '/allowedTools', message: allowedToolsTooLong() })
    else {
      allowedTools = []
      body.allowedTools.forEach((e, i) => {
        if (typeof e !== 'string' || !e.trim() || e.length > MAX_ALLOWED_ENTRY_CHARS)
          issues.push({
            pointer: `/allowedTools/${i}`,
            message: `allowedTools[${i}] must be a tool name or '@label' of 1 to ${MAX_ALLOWED_ENTRY_CHARS} characters`,
          })
        else allowedTools!.push(e.trim())
      })
    }
  }
  if (issues.length) throw invalidInput(`the spawn request is invalid (${issues.map((i) => i.message).join('; ')})`, issues)
  // Checked after the simple fields, so their problems are not hidden behind a long schema report.
  const clientTools =
    body.clientTools === undefined || body.clientTools === null ? undefined : parseClientTools(body.clientTools, '/clientTools')
  return {
    ...(recipe ? { recipe } : {}),
    ...(engine ? { engine } : {}),
    ...(models ? { models } : {}),
    ...(clientTools ? { clientTools } : {}),
    ...(typeof reserve === 'number' ? { reserve } : {}),
    ...(allowedTools ? { allowedTools } : {}),
  }
}

/** Resolves names (and aliases) and `@label` selectors against the inventory at spawn time. */
class Selector {
  private readonly names = new Map<string, string>()
  private readonly labels = new Map<string, string[]>()
  constructor(inventory: readonly Tool[]) {
    for (const t of inventory) {
      this.names.set(t.name, t.name)
      for (const a of t.aliases ?? []) if (!this.names.has(a)) this.names.set(a, t.name)
      for (const l of t.labels) {
        let list = this.labels.get(l)
        if (!list) this.labels.set(l, (list = []))
        list.push(t.name)
      }
    }
  }

  /** A configured or built-in tool (or a meta-tool) already answers to this name. */
  has(name: string): boolean {
    return this.names.has(name) || isReservedToolName(name)
  }

  /** The configured, built-in or meta-tool whose name has this `nameKey` (names compared without case). */
  holderOf(key: string): string | undefined {
    if (!this.keys) {
      this.keys = new Map()
      for (const n of [...RESERVED_TOOL_NAMES, ...this.names.keys()]) if (!this.keys.has(nameKey(n))) this.keys.set(nameKey(n), n)
    }
    return this.keys.get(key)
  }
  private keys?: Map<string, string>

  resolve(entries: readonly string[], field: string, warnings: Findings): { all: Set<string>; byName: Set<string> } {
    const all = new Set<string>()
    const byName = new Set<string>()
    for (const raw of entries) {
      const e = parseEntry(raw, false)
      if (typeof e === 'string') continue // documents are validated before they get here
      if (e.kind === 'label') {
        const selected = this.labels.get(e.label) ?? []
        if (!selected.length) warnings.add(field, `@${e.label}`, 'label-selects-nothing')
        for (const n of selected) all.add(n)
      } else if (e.kind === 'name') {
        const canonical = this.names.get(e.name)
        if (!canonical && !CAPABILITY_FLOOR.includes(e.name)) warnings.add(field, e.name, 'unknown-tool')
        all.add(canonical ?? e.name)
        byName.add(canonical ?? e.name)
      }
    }
    return { all, byName }
  }

  rank(entries: readonly string[], field: string, warnings: Findings): RankRule {
    const rule: RankRule = { names: [], selected: [], prefixes: [] }
    for (const raw of entries) {
      const e = parseEntry(raw, true)
      if (typeof e === 'string' || e.kind === 'nothing') continue
      if (e.kind === 'prefix') rule.prefixes.push(e.prefix)
      else if (e.kind === 'name') rule.names.push(this.names.get(e.name) ?? e.name)
      else {
        const selected = this.labels.get(e.label) ?? []
        if (!selected.length) warnings.add(field, `@${e.label}`, 'label-selects-nothing')
        rule.selected.push(...selected)
      }
    }
    rule.names = [...new Set(rule.names)].sort()
    rule.selected = [...new Set(rule.selected)].sort()
    rule.prefixes = [...new Set(rule.prefixes)].sort()
    return rule
  }
}
