/**
 * Cascade-resolved agent-surface documents: recipes, engines, the model catalog. Parsed results
 * are cached by (layer scope, path, version), so freshness never costs a re-parse; the model
 * catalog of a whole chain is read in one storage round trip (one BatchGetItem).
 */
import { closest, type YamlSource, yamlSourceOf } from '../config/yaml'
import type { BundledLayer } from '../documents/bundled'
import { type DocumentCascade, fromBundled, fromStored, type Layer, type LayeredDocument } from '../documents/cascade'
import type { DocumentStore } from '../documents/ports'
import { docId, scopeOf, TENANT_LAYER } from '../documents/ports'
import { invalidConfig } from '../errors'
import {
  catalogDocumentOf,
  type EndpointProfile,
  MODELS_PREFIX,
  modelPath,
  parseModelDocument,
  parseModelRef,
  parseProviderDocument,
  providerPath,
} from '../models/documents'
import { BoundedCache, PARSED_DOCUMENT_BYTES, parsedWeight } from '../runtime/bounded-cache'
import type { DocResult, EngineConfig, RecipeConfig } from './documents'
import { ENGINES_PREFIX, enginePath, parseEngine, parseRecipe, RECIPES_PREFIX, recipePath } from './documents'

export interface Resolved<T> {
  config: T
  source: Layer
  version: number
}

/** What one chain entry contributes to the tool limit. */
export interface ChainEntryLimit {
  model: string
  /** Catalog limit: a number, or undefined when none is known or the model says 0 (unlimited). */
  catalog?: number
  /** Where the catalog limit came from. */
  catalogSource: 'model' | 'provider' | 'unlimited' | 'none'
  /** The endpoint's other limits and its deferral: each field of the model document over the provider's. */
  profile?: EndpointProfile
}

export class SurfaceDocuments {
  private readonly parsed = new BoundedCache<string, DocResult<unknown>>(5_000, { maxBytes: PARSED_DOCUMENT_BYTES })

  constructor(private readonly deps: { store: DocumentStore; cascade: DocumentCascade; bundled: BundledLayer }) {}

  async recipe(tenant: string, project: string, name: string): Promise<Resolved<RecipeConfig> | undefined> {
    return this.load(await this.deps.cascade.read(tenant, project, recipePath(name)), (t, p) => parseRecipe(t, name, p))
  }

  async engine(tenant: string, project: string, name: string): Promise<Resolved<EngineConfig> | undefined> {
    return this.load(await this.deps.cascade.read(tenant, project, enginePath(name)), (t, p) => parseEngine(t, name, p))
  }

  /** Names of the recipes (or engines) any layer holds, for "did you mean" answers. */
  async names(tenant: string, project: string, kind: 'recipe' | 'engine'): Promise<string[]> {
    const prefix = kind === 'recipe' ? RECIPES_PREFIX : ENGINES_PREFIX
    const layers = await this.deps.cascade.listLayers(tenant, project, prefix)
    const names = new Set<string>()
    for (const d of [...layers.bundled, ...layers.tenant, ...layers.project]) {
      const m = /^[^/]+\/([^/]+)\.ya?ml$/.exec(d.path)
      if (m) names.add(m[1])
    }
    return [...names].sort()
  }

  /** Which model instances have a `_provider.yaml` in any layer. */
  async instances(tenant: string, project: string): Promise<string[]> {
    const layers = await this.deps.cascade.listLayers(tenant, project, MODELS_PREFIX)
    const names = new Set<string>()
    for (const d of [...layers.bundled, ...layers.tenant, ...layers.project]) {
      const kind = catalogDocumentOf(d.path)
      if (kind?.kind === 'provider') names.add(kind.instance)
    }
    return [...names].sort()
  }

  /**
   * The catalog limit of every chain entry, in one storage round trip. `maxTools` of the model
   * document wins (0 = explicitly unlimited, suppressing the provider default), else the
   * provider's (keyed by instance, never by wire type), else no known limit.
   */
  async chainLimits(
    tenant: string,
    project: string,
    chain: readonly string[],
  ): Promise<{ entries: ChainEntryLimit[]; missingProviders: string[] }> {
    const refs = chain.map((m) => ({ m, ref: parseModelRef(m) }))
    const paths = new Set<string>()
    for (const { ref } of refs) {
      if (typeof ref === 'string') continue
      paths.add(providerPath(ref.instance))
      paths.add(modelPath(ref.instance, ref.model))
    }
    const docs = await this.readMany(tenant, project, [...paths])
    const entries: ChainEntryLimit[] = []
    const missingProviders = new Set<string>()
    for (const { m, ref } of refs) {
      if (typeof ref === 'string') throw invalidConfig(`model chain entry '${m}' is invalid`, [{ message: ref }])
      const providerDoc = docs.get(providerPath(ref.instance))
      if (!providerDoc) missingProviders.add(ref.instance)
      const model = this.load(docs.get(modelPath(ref.instance, ref.model)), parseModelDocument)?.config
      const provider = this.load(providerDoc, parseProviderDocument)?.config
      const profile = profileOf(provider, model)
      const at = entries.length
      if (model?.maxTools !== undefined)
        entries.push(
          model.maxTools === 0 ? { model: m, catalogSource: 'unlimited' } : { model: m, catalog: model.maxTools, catalogSource: 'model' },
        )
      else if (provider?.maxTools !== undefined)
        entries.push(
          provider.maxTools === 0
            ? { model: m, catalogSource: 'unlimited' }
            : { model: m, catalog: provider.maxTools, catalogSource: 'provider' },
        )
      else entries.push({ model: m, catalogSource: 'none' })
      if (profile) entries[at] = { ...entries[at], profile }
    }
    return { entries, missingProviders: [...missingProviders].sort() }
  }

  /** A "did you mean" suffix for an unknown recipe/engine/instance name. */
  static hint(name: string, known: string[]): string {
    const h = closest(name, known)
    // The did-you-mean ends its sentence with '?'; without one the message's own sentence needs its full stop.
    return `${h ? ` — did you mean '${h}'?` : known.length ? '.' : ''}${known.length ? ` Known: ${known.join(', ')}.` : ''}`
  }

  // ────────── internals ──────────

  private load<T>(doc: LayeredDocument | undefined, parse: (text: YamlSource, path: string) => DocResult<T>): Resolved<T> | undefined {
    if (!doc) return undefined
    const scope = doc.source === 'bundled' ? 'bundled' : doc.stored!.key.scope
    const key = `${scope}|${doc.path}|${doc.version}`
    let result = this.parsed.get(key) as DocResult<T> | undefined
    if (!result) result = this.parsed.set(key, parse(yamlSourceOf(doc), doc.path), parsedWeight(doc.body)) as DocResult<T>
    if (!result.ok)
      throw invalidConfig(
        `${doc.path} (${doc.source} layer) is invalid (${result.issues.length} problem${result.issues.length > 1 ? 's' : ''})`,
        result.issues,
      )
    return { config: result.config, source: doc.source, version: doc.version }
  }

  /** The innermost document of each path, project + tenant layers read in one getMany. */
  private async readMany(tenant: string, project: string, paths: string[]): Promise<Map<string, LayeredDocument>> {
    const out = new Map<string, LayeredDocument>()
    if (!paths.length) return out
    const tenantScope = scopeOf(tenant, TENANT_LAYER)
    const projectScope = project === TENANT_LAYER ? undefined : scopeOf(tenant, project)
    const keys = paths.flatMap((path) => [...(projectScope ? [{ scope: projectScope, path }] : []), { scope: tenantScope, path }])
    const found = await this.deps.store.getMany(keys)
    for (const path of paths) {
      const p = projectScope ? found.get(docId({ scope: projectScope, path })) : undefined
      const t = found.get(docId({ scope: tenantScope, path }))
      if (p) out.set(path, fromStored(p, projectScope === undefined ? 'tenant' : 'project'))
      else if (t) out.set(path, fromStored(t, 'tenant'))
      else {
        const bundled = this.deps.bundled.get(path)
        if (bundled) out.set(path, fromBundled(bundled))
      }
    }
    return out
  }
}

function profileOf(provider: EndpointProfile | undefined, model: EndpointProfile | undefined): EndpointProfile | undefined {
  const out: EndpointProfile = {}
  for (const doc of [provider, model]) {
    if (!doc) continue
    if (doc.maxToolNameLength !== undefined) out.maxToolNameLength = doc.maxToolNameLength
    if (doc.maxSchemaBytes !== undefined) out.maxSchemaBytes = doc.maxSchemaBytes
    if (doc.strict !== undefined) out.strict = doc.strict
    if (doc.nativeDeferral !== undefined) out.nativeDeferral = doc.nativeDeferral
    if (doc.deferral !== undefined) out.deferral = doc.deferral
    if (doc.surface !== undefined) out.surface = doc.surface
    if (doc.codeDeclarationBytes !== undefined) out.codeDeclarationBytes = doc.codeDeclarationBytes
  }
  return Object.keys(out).length ? out : undefined
}
