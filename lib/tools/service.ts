/**
 * ServerToolService (spec §8): the only code that reads and writes server-tool documents.
 * Resolution runs project → _tenant → bundled → built-ins (spec §4); parsed configs and
 * expanded tools are cached by (scope, path, version), so freshness never costs a re-parse.
 */
import type { ConfigResult, ServerToolConfig } from '../config/server-tool'
import {
  checkServerToolWrite,
  nameFromPath,
  PACK_SEPARATOR,
  parseServerTool,
  SERVER_TOOLS_PREFIX,
  serverToolPath,
  toolNameProblem,
} from '../config/server-tool'
import { checkDocumentWrite, unsafeTextIn } from '../config/text-hygiene'
import { INLINE_YAML, type YamlParsing, type YamlSource, yamlSourceOf } from '../config/yaml'
import type { BundledLayer } from '../documents/bundled'
import type { DocumentCascade, Layer, LayeredDocument } from '../documents/cascade'
import type { DocumentStore } from '../documents/ports'
import { MAX_DOCUMENT_BYTES, scopeOf } from '../documents/ports'
import { deleteConditions, liveVersion, type Preconditions, writeConditions } from '../documents/preconditions'
import type { Issue } from '../errors'
import { invalidConfig, invalidInput, notFound, ServerToolsError } from '../errors'
import { BoundedCache, parsedWeight } from '../runtime/bounded-cache'
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { type FactoryEnv, nameKey, type Tool, type ToolFactory, type ToolSource, type ToolSpec } from './contracts'
import { type Provenance, provenanceOf } from './provenance'
import type { BuiltinRegistry, FactoryRegistry } from './registry'

/** A configured tool (or built-in) as the admin API shows it: the config plus where it came from. */
export interface ToolView extends ServerToolConfig {
  source: ToolSource
  version: number
  /** Outer layers that define the same name, innermost first (listings and GET; see tools/provenance.ts). */
  shadows?: ToolSource[]
}

export interface ListingProblem {
  name: string
  source: ToolSource
  path?: string
  message: string
  errors?: Issue[]
}

interface ConfigHit {
  name: string
  path: string
  source: Layer
  version: number
  result: ConfigResult
}

export interface ServerToolServiceDeps {
  store: DocumentStore
  cascade: DocumentCascade
  bundled: BundledLayer
  factories: FactoryRegistry
  builtins: BuiltinRegistry
  log: Logger
  clock: Clock
  /** Where tool documents are parsed on write (a worker pool for long ones; default inline). */
  yaml?: YamlParsing
}

const sourceOf = (layer: Layer): ToolSource => layer

export class ServerToolService {
  /** Parsed configurations, weighed by their text: 10,000 documents of up to 1 MiB would be 10 GB. */
  private readonly configs = new BoundedCache<string, ConfigResult>(10_000, { maxBytes: CONFIG_CACHE_BYTES })
  private readonly expansions = new BoundedCache<string, Promise<{ tools: Tool[]; problems: string[] }>>(10_000)
  /** A dynamic expansion's configuration key → the key (with its dependency token) of the expansion kept for it. */
  private readonly dependentKeys = new BoundedCache<string, string>(10_000)
  private readonly listings = new BoundedCache<string, { fingerprint: LayerFingerprint; tools: Tool[]; problems: ListingProblem[] }>(2_000)
  /**
   * What the last expansion of a pack document (per project, layer, path and version) left out:
   * the admin listing reports it without expanding again; the next expansion (a call, a listing of
   * callable tools, a spawn) replaces it, so a server that comes back clears its entry.
   */
  private readonly expansionProblems = new BoundedCache<string, string[]>(10_000)
  /** Documents parsed since start (diagnostics; proves the cache holds across reads). */
  parses = 0

  /** The bundled defaults are validated by the test suite (test/unit/bundled-defaults.test.ts), not at every cold start. */
  constructor(private readonly deps: ServerToolServiceDeps) {}

  // ────────── Type registry ──────────
  listTypes(): ToolFactory[] {
    return this.deps.factories.list()
  }
  findType(typeId: string): ToolFactory | undefined {
    return this.deps.factories.find(typeId)
  }

  // ────────── Cascade lookup ──────────

  /**
   * The tool a name resolves to, or undefined. A disabled document is a hit that stops the
   * cascade; a broken one throws INVALID_CONFIG (the caller turns it into a tool error).
   */
  async lookup(tenant: string, project: string, name: string): Promise<Tool | undefined> {
    const sep = name.indexOf(PACK_SEPARATOR)
    const head = sep > 0 ? name.slice(0, sep) : name
    if (!toolNameProblem(head)) {
      const hit = await this.resolveConfig(tenant, project, head)
      if (hit) {
        if (!hit.result.ok) throw invalidConfig(`tool '${head}' has an invalid configuration (${hit.source} layer)`, hit.result.issues)
        if (!hit.result.config.enabled) return undefined
        let expanded: { tools: Tool[]; problems: string[] }
        try {
          expanded = await this.expand(tenant, project, hit, hit.result.config)
        } catch (e) {
          // a pack whose spec document is missing or broken: the caller's call fails, not the request
          if (e instanceof ServerToolsError && e.code === 'THROTTLED') throw e
          throw invalidConfig(`tool '${head}' could not be expanded: ${(e as Error).message}`, [])
        }
        const tool = expanded.tools.find((t) => t.name === name || t.aliases?.includes(name))
        // Left out for a reason (an unreachable MCP server): say why instead of "unknown tool".
        if (!tool && expanded.problems.length)
          throw invalidConfig(`tool '${name}' is unavailable right now: ${expanded.problems.join('; ')}`, [])
        return tool
      }
    }
    return this.deps.builtins.get(name)
  }

  /**
   * Every callable tool of a project (packs expanded), sorted by name, with what was left out.
   * The merged result is memoised per project against the layers' (path, version) fingerprint, so
   * a manifest re-reads the listing but re-merges nothing unless a document changed; listings that
   * involve a dynamic factory (its expansion depends on more than the document) or a failed
   * expansion are never memoised.
   */
  async listAll(tenant: string, project: string): Promise<{ tools: Tool[]; problems: ListingProblem[] }> {
    const memoKey = `${tenant}\u0000${project}`
    const memo = this.listings.get(memoKey)
    // Every turn asks: the memo is checked against the layers' paths and versions alone (no body and
    // no blob is read); only a change reads the documents themselves.
    if (memo && sameFingerprint(memo.fingerprint, await this.deps.cascade.listLayerVersions(tenant, project, SERVER_TOOLS_PREFIX))) {
      return { tools: memo.tools.slice(), problems: memo.problems.slice() }
    }
    const layers = await this.deps.cascade.listLayers(tenant, project, SERVER_TOOLS_PREFIX)
    const fingerprint = layerFingerprint(layers)
    const { hits, builtins, problems } = this.mergeLayers(tenant, project, layers)
    const tools: Tool[] = [...builtins]
    let memoisable = true
    const expanded = await Promise.all(
      hits.map(async (hit) => {
        if (!hit.result.ok || !hit.result.config.enabled) return undefined
        if (this.deps.factories.find(hit.result.config.type)?.dynamic) memoisable = false
        try {
          return { hit, ...(await this.expand(tenant, project, hit, hit.result.config)) }
        } catch (e) {
          memoisable = false
          problems.push({ name: hit.name, source: hit.source, path: hit.path, message: expansionFailure(e) })
          return undefined
        }
      }),
    )
    for (const x of expanded) {
      if (!x) continue
      tools.push(...x.tools)
      for (const message of x.problems) problems.push({ name: x.hit.name, source: x.hit.source, path: x.hit.path, message })
    }
    tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const result = { tools, problems: sortProblems(problems) }
    if (memoisable) this.listings.set(memoKey, { fingerprint, tools: result.tools.slice(), problems: result.problems.slice() })
    else this.listings.delete(memoKey)
    return result
  }

  async findByLabel(tenant: string, project: string, label: string): Promise<Tool[]> {
    const { tools } = await this.listAll(tenant, project)
    return tools.filter((t) => t.labels.includes(label))
  }

  /** The admin listing: one view per configured tool or built-in, the innermost layer's. */
  async listViews(
    tenant: string,
    project: string,
    opts: { label?: string; includeDisabled?: boolean } = {},
  ): Promise<{ tools: ToolView[]; problems: ListingProblem[] }> {
    const { hits, builtins, problems, layersOf } = await this.merged(tenant, project)
    problems.push(...(await this.packProblems(tenant, project, hits)))
    const views: ToolView[] = builtins.map((b) => ({ ...builtinView(b), shadows: [] }))
    for (const hit of hits) {
      if (!hit.result.ok) continue
      if (!hit.result.config.enabled && !opts.includeDisabled) continue
      views.push({ ...configView(hit, hit.result.config), shadows: this.provenanceFrom(hit.name, layersOf.get(hit.name) ?? []).shadows })
    }
    const filtered = opts.label === undefined ? views : views.filter((v) => v.labels.includes(opts.label!))
    filtered.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { tools: filtered, problems: sortProblems(problems) }
  }

  /** One tool's view through the cascade (disabled ones included); NOT_FOUND when no layer has it. */
  async getView(tenant: string, project: string, rawName: string): Promise<ToolView> {
    const name = this.checkedName(rawName)
    const docs = await this.deps.cascade.readLayers(tenant, project, serverToolPath(name))
    const { shadows } = this.provenanceFrom(
      name,
      docs.map((d) => d.source),
    )
    if (docs.length) {
      const hit = this.hitOf(tenant, project, name, docs[0])
      if (!hit.result.ok) throw invalidConfig(`tool '${name}' has an invalid configuration (${hit.source} layer)`, hit.result.issues)
      return { ...configView(hit, hit.result.config), shadows }
    }
    const builtin = this.deps.builtins.get(name)
    if (builtin) return { ...builtinView(builtin), shadows }
    throw notFound(`no tool '${name}' in project '${project}' or any outer layer`)
  }

  /**
   * Provenance of every configured name and built-in of a project (broken and disabled documents
   * included: they shadow all the same). A pack's sub-tools share the pack's provenance.
   */
  async provenance(tenant: string, project: string): Promise<Map<string, Provenance>> {
    const { hits, builtins, layersOf } = await this.merged(tenant, project)
    const out = new Map<string, Provenance>()
    for (const b of builtins) out.set(b.name, { source: 'builtin', shadows: [] })
    for (const hit of hits) out.set(hit.name, this.provenanceFrom(hit.name, layersOf.get(hit.name) ?? []))
    return out
  }

  private provenanceFrom(name: string, layers: readonly ToolSource[]): Provenance {
    return provenanceOf([...layers, ...(this.deps.builtins.get(name) ? (['builtin'] as const) : [])]) ?? { source: 'builtin', shadows: [] }
  }

  // ────────── CRUD in one layer ──────────

  /** Validates strictly and writes; `created` is true when this layer had no document yet. */
  async put(
    tenant: string,
    project: string,
    rawName: string,
    text: string,
    opts: { actor: string; preconditions?: Preconditions },
  ): Promise<{ view: ToolView; created: boolean }> {
    const name = this.checkedName(rawName)
    if (Buffer.byteLength(text, 'utf8') > MAX_DOCUMENT_BYTES)
      throw new ServerToolsError('TOO_LARGE', `a tool document may be at most ${MAX_DOCUMENT_BYTES} bytes`)
    const path = serverToolPath(name)
    const { issues: unsafe, json, source: checked } = await checkDocumentWrite(this.deps.yaml ?? INLINE_YAML, tenant, path, text)
    const result = unsafe.length ? { ok: false as const, issues: unsafe } : this.checkWrite(path, checked)!
    if (!result.ok)
      throw invalidConfig(
        `${path} is not a valid server tool (${result.issues.length} problem${result.issues.length > 1 ? 's' : ''})`,
        result.issues,
      )
    const key = { scope: scopeOf(tenant, project), path }
    const conditions = await writeConditions(path, opts.preconditions ?? {}, liveVersion(this.deps.store, key))
    const stored = await this.deps.store.put({ key, body: text, json, actor: opts.actor }, conditions)
    this.configs.set(cacheKey(stored.key.scope, path, stored.version), result, parsedWeight(text))
    const source: Layer = project === '_tenant' ? 'tenant' : 'project'
    return { view: configView({ source, version: stored.version }, result.config), created: stored.created }
  }

  async delete(tenant: string, project: string, rawName: string, preconditions: Preconditions = {}): Promise<void> {
    const name = this.checkedName(rawName)
    const key = { scope: scopeOf(tenant, project), path: serverToolPath(name) }
    await this.deps.store.delete(key, await deleteConditions(key.path, preconditions, liveVersion(this.deps.store, key)))
  }

  // ────────── internals ──────────

  /** The one write-time check of tool documents: this service's put and DocumentService's (functions/deps.ts) both run it. */
  checkWrite(path: string, body: YamlSource): ConfigResult | undefined {
    return checkServerToolWrite(path, body, this.deps.factories)
  }

  private checkedName(name: string): string {
    const problem = toolNameProblem(name)
    if (problem) throw invalidInput(problem, [{ pointer: '/name', message: problem }])
    return name
  }

  private async resolveConfig(tenant: string, project: string, name: string): Promise<ConfigHit | undefined> {
    const doc = await this.deps.cascade.read(tenant, project, serverToolPath(name))
    return doc && this.hitOf(tenant, project, name, doc)
  }

  private hitOf(tenant: string, project: string, name: string, doc: LayeredDocument): ConfigHit {
    const scope = doc.source === 'bundled' ? 'bundled' : doc.stored!.key.scope
    const key = cacheKey(scope, doc.path, doc.version)
    let result = this.configs.get(key)
    if (!result) {
      this.parses++
      result = parseServerTool(yamlSourceOf(doc), name, { mode: 'read', types: this.deps.factories, path: doc.path })
      if (result.ok && result.warnings.length)
        this.deps.log.log('warn', 'server_tool.unknown_fields', { tenant, project, path: doc.path, warnings: result.warnings })
      this.configs.set(key, result, parsedWeight(doc.body))
    }
    return { name, path: doc.path, source: doc.source, version: doc.version, result }
  }

  /** Merges the layers outer → inner; a document (even a disabled one) shadows a built-in and its sub-tools. */
  private async merged(tenant: string, project: string) {
    return this.mergeLayers(tenant, project, await this.deps.cascade.listLayers(tenant, project, SERVER_TOOLS_PREFIX))
  }

  private mergeLayers(tenant: string, project: string, layers: Awaited<ReturnType<DocumentCascade['listLayers']>>) {
    const byName = new Map<string, ConfigHit>()
    const layersOf = new Map<string, ToolSource[]>()
    for (const doc of [...layers.bundled, ...layers.tenant, ...layers.project]) {
      const name = nameFromPath(doc.path)
      if (doc.path !== serverToolPath(name) || toolNameProblem(name)) continue // not a tool document (e.g. notes beside them)
      byName.set(name, this.hitOf(tenant, project, name, doc))
      layersOf.set(name, [...(layersOf.get(name) ?? []), doc.source])
    }
    const problems: ListingProblem[] = []
    for (const hit of byName.values()) {
      if (!hit.result.ok)
        problems.push({
          name: hit.name,
          source: hit.source,
          path: hit.path,
          message: 'invalid configuration; left out',
          errors: hit.result.issues,
        })
    }
    const builtins = this.deps.builtins.list().filter((b) => {
      const sep = b.name.indexOf(PACK_SEPARATOR)
      return !byName.has(b.name) && !(sep > 0 && byName.has(b.name.slice(0, sep)))
    })
    const hits = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1))
    return { hits, builtins, problems, layersOf }
  }

  /**
   * Why enabled packs leave tools out, for the admin listing: the remembered outcome of each pack
   * document version, expanding (in parallel, through the expansion caches) only the versions not
   * seen yet — so a listing costs at most one expansion per pack document version.
   */
  private async packProblems(tenant: string, project: string, hits: readonly ConfigHit[]): Promise<ListingProblem[]> {
    const packs = hits.filter(
      (h) => h.result.ok && h.result.config.enabled && this.deps.factories.find(h.result.config.type)?.kind === 'pack',
    )
    const outcomes = await Promise.all(
      packs.map(async (hit) => {
        const remembered = this.expansionProblems.get(this.expansionKey(tenant, project, hit))
        if (remembered) return { hit, messages: remembered }
        try {
          return { hit, messages: (await this.expand(tenant, project, hit, (hit.result as { config: ServerToolConfig }).config)).problems }
        } catch (e) {
          return { hit, messages: [expansionFailure(e)] }
        }
      }),
    )
    return outcomes.flatMap(({ hit, messages }) =>
      messages.map((message) => ({ name: hit.name, source: hit.source, path: hit.path, message })),
    )
  }

  private expansionKey(tenant: string, project: string, hit: ConfigHit) {
    return `${tenant}|${project}|${hit.source}|${cacheKey(hit.source, hit.path, hit.version)}`
  }

  private async expand(
    tenant: string,
    project: string,
    hit: ConfigHit,
    config: ServerToolConfig,
  ): Promise<{ tools: Tool[]; problems: string[] }> {
    const factory = this.deps.factories.find(config.type)!
    const base = this.expansionKey(tenant, project, hit)
    if (!factory.dynamic) {
      const cached = this.expansions.get(base)
      if (cached) return cached
    }
    const problems: string[] = []
    const env: FactoryEnv = {
      tenant,
      project,
      documents: this.deps.cascade.reader(tenant, project),
      log: this.deps.log,
      clock: this.deps.clock,
      problem: (m) => problems.push(m),
    }
    // A dynamic factory that can name what its expansion read (a spec document's version) is kept
    // like a static one under that name: a 1,000-operation pack was expanded again on every
    // listing — every turn and every tool_list of the process (issue 21 D1: 1,000 tools built and
    // text-checked, then the surface's visible set and turn rebuilt, in one stretch per request).
    const token = factory.dynamic ? await factory.dependencyToken?.(config, env) : ''
    const key = token ? `${base}|${token}` : base
    if (token !== undefined && factory.dynamic) {
      const cached = this.expansions.get(key)
      if (cached) return cached
    }
    const run = factory
      .create(config, env)
      .then((specs) => ({ tools: buildTools(config, specs, sourceOf(hit.source), factory, (m) => problems.push(m)), problems }))
    run.then(
      (r) => this.expansionProblems.set(base, r.problems),
      (e) => this.expansionProblems.set(base, [expansionFailure(e)]),
    )
    if (token !== undefined) {
      // one kept expansion per configuration hit: the one of an older spec version goes
      const previous = this.dependentKeys.get(base)
      if (previous !== undefined && previous !== key) this.expansions.delete(previous)
      if (token) this.dependentKeys.set(base, key)
      this.expansions.set(key, run)
      run.catch(() => this.expansions.delete(key)) // a failed expansion is retried next time
    }
    return run
  }
}

const cacheKey = (scope: string, path: string, version: number) => `${scope}|${path}|${version}`
/** Parsed configurations kept, by weight (parsedWeight: ~4 bytes of objects a character of text). */
const CONFIG_CACHE_BYTES = 128 * 1024 * 1024
const expansionFailure = (e: unknown) => `could not be expanded: ${(e as Error).message}`

/**
 * What a listing depends on in the store: every stored layer's (path, version), in listing order
 * (the bundled layer never changes). Versions are never reused, even after a delete.
 */
interface LayerFingerprint {
  tenant: { paths: string[]; versions: number[] }
  project: { paths: string[]; versions: number[] }
}

type Versioned = { path: string; version: number }

function layerFingerprint(layers: { tenant: Versioned[]; project: Versioned[] }): LayerFingerprint {
  const of = (docs: Versioned[]) => ({ paths: docs.map((d) => d.path), versions: docs.map((d) => d.version) })
  return { tenant: of(layers.tenant), project: of(layers.project) }
}

/** Compared in place: building a fingerprint string of every document per manifest cost more than the rest of the check. */
function sameFingerprint(f: LayerFingerprint, layers: { tenant: Versioned[]; project: Versioned[] }): boolean {
  const same = (l: LayerFingerprint['tenant'], docs: Versioned[]) => {
    if (l.paths.length !== docs.length) return false
    for (let i = 0; i < docs.length; i++) if (l.versions[i] !== docs[i].version || l.paths[i] !== docs[i].path) return false
    return true
  }
  return same(f.tenant, layers.tenant) && same(f.project, layers.project)
}

/**
 * The tools of one expansion. What a spec derived from other text (a spec's operations, a remote
 * catalog) passes the same text-hygiene rule as a document, and its name may not differ only in
 * case from an earlier one's (`nameKey`); a spec that fails either is left out with a problem.
 */
function buildTools(
  config: ServerToolConfig,
  specs: ToolSpec[],
  source: ToolSource,
  factory: ToolFactory,
  problem: (message: string) => void,
): Tool[] {
  const tools: Tool[] = []
  const taken = new Map<string, string>()
  for (const spec of specs) {
    if (factory.kind === 'pack' && !spec.localName)
      throw new Error(`pack type '${factory.typeId}' returned a sub-tool without a local name`)
    if (spec.localName && config.disabledSubTools.includes(spec.localName)) continue
    const name = spec.localName ? `${config.name}${PACK_SEPARATOR}${spec.localName}` : config.name
    const unsafe = unsafeTextIn({
      name,
      description: spec.description ?? '',
      searchHint: spec.searchHint ?? '',
      aliases: spec.aliases ?? [],
      inputSchema: spec.inputSchema,
    })
    if (unsafe) {
      problem(
        `left out tool '${JSON.stringify(name).slice(1, -1).slice(0, 80)}': ${unsafe.message.replace(/^\//, '')}; control characters, bidi overrides and tag characters are not allowed`,
      )
      continue
    }
    const clash = [name, ...(spec.aliases ?? []).map((a) => `${config.name}${PACK_SEPARATOR}${a}`)].find((n) => taken.has(nameKey(n)))
    if (clash !== undefined) {
      problem(
        `left out tool '${name}': its name differs only in case from '${taken.get(nameKey(clash))}' (tool names are compared without case)`,
      )
      continue
    }
    taken.set(nameKey(name), name)
    for (const a of spec.aliases ?? []) taken.set(nameKey(`${config.name}${PACK_SEPARATOR}${a}`), name)
    tools.push({
      name,
      description: spec.description ?? config.description,
      inputSchema: spec.inputSchema,
      ...(spec.outputSchema ? { outputSchema: spec.outputSchema } : {}),
      labels: [...new Set([...config.labels, ...(spec.extraLabels ?? [])])],
      primary: config.primary,
      deferred: spec.localName ? (spec.deferred ?? config.defaultDeferred) : false,
      ...(config.promptHint !== undefined ? { promptHint: config.promptHint } : {}),
      ...((spec.searchHint ?? config.searchHint) !== undefined ? { searchHint: spec.searchHint ?? config.searchHint } : {}),
      source,
      typeId: config.type,
      ...(spec.localName ? { pack: config.name } : {}),
      ...(spec.aliases?.length ? { aliases: spec.aliases.map((a) => `${config.name}${PACK_SEPARATOR}${a}`) } : {}),
      invoke: spec.invoke,
    })
  }
  return tools
}

function configView(hit: Pick<ConfigHit, 'source' | 'version'>, c: ServerToolConfig): ToolView {
  return {
    name: c.name,
    type: c.type,
    description: c.description,
    enabled: c.enabled,
    primary: c.primary,
    labels: c.labels,
    disabledSubTools: c.disabledSubTools,
    defaultDeferred: c.defaultDeferred,
    ...(c.promptHint !== undefined ? { promptHint: c.promptHint } : {}),
    ...(c.searchHint !== undefined ? { searchHint: c.searchHint } : {}),
    parameters: c.parameters,
    source: sourceOf(hit.source as Layer),
    version: hit.version,
  }
}

function builtinView(t: Tool): ToolView {
  return {
    name: t.name,
    type: 'builtin',
    description: t.description,
    enabled: true,
    primary: t.primary,
    labels: t.labels,
    disabledSubTools: [],
    defaultDeferred: t.deferred,
    ...(t.promptHint !== undefined ? { promptHint: t.promptHint } : {}),
    ...(t.searchHint !== undefined ? { searchHint: t.searchHint } : {}),
    parameters: {},
    source: 'builtin',
    version: 0,
  }
}

const sortProblems = (p: ListingProblem[]) => p.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
