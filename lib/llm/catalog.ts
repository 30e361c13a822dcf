/**
 * The model catalog as the LLM wire clients read it: the documents of lib/models resolved through
 * the cascade for one call. Parsed documents are cached by (layer, path, version).
 */

import { type YamlSource, yamlSourceOf } from '../config/yaml'
import type { CascadeDocument, CascadeReader } from '../documents/cascade'
import { scopeOf, TENANT_LAYER } from '../documents/ports'
import { issueText } from '../errors'
import type { CatalogParse, ModelDocument, ModelSize, ProviderDocument, WireType } from '../models/documents'
import { modelPath, parseModelDocument, parseModelName, parseProviderDocument, providerPath, WIRE_TYPES } from '../models/documents'
import { BoundedCache, PARSED_DOCUMENT_BYTES, parsedWeight } from '../runtime/bounded-cache'

/** A model resolved for one call. */
export interface ResolvedModel {
  /** `instance/model`, as the catalog names it. */
  ref: string
  instance: string
  model: string
  /** What goes into the request's `model` field. */
  modelId: string
  provider: ProviderDocument & { wireType: WireType }
  entry: ModelDocument
}

export type ModelLookup = { ok: true; model: ResolvedModel } | { ok: false; message: string }

export class ModelCatalog {
  private readonly parses = new BoundedCache<string, CatalogParse<unknown>>(2_000, { maxBytes: PARSED_DOCUMENT_BYTES })

  /** Resolves `instance/model` (or `instance` + size) through the cascade. */
  async resolve(scope: { tenant: string; project: string; documents: CascadeReader }, ref: string, size?: ModelSize): Promise<ModelLookup> {
    const { documents } = scope
    const name = parseModelName(ref)
    if (typeof name === 'string') return { ok: false, message: name }
    const providerFile = providerPath(name.instance)
    const providerDoc = await documents.read(providerFile)
    if (!providerDoc)
      return {
        ok: false,
        message: `model instance '${name.instance}' is not in the model catalog: there is no ${providerFile} in any layer`,
      }
    const provider = this.parse(scope, providerDoc, parseProviderDocument)
    if (!provider.ok)
      return {
        ok: false,
        message: `${providerFile} (${providerDoc.source} layer) is invalid: ${provider.issues.map(issueText).join('; ')}`,
      }
    const wireType = provider.config.wireType
    if (!wireType || !(WIRE_TYPES as readonly string[]).includes(wireType)) {
      return {
        ok: false,
        message: `${providerFile} (${providerDoc.source} layer) ${wireType ? `has wireType '${wireType}'` : 'has no wireType'}; prompt tools speak ${WIRE_TYPES.join(' and ')}`,
      }
    }
    let model = name.model
    if (!model) {
      const picked = size ? provider.config.sizes[size] : undefined
      if (!picked) {
        const known = Object.keys(provider.config.sizes)
        return {
          ok: false,
          message: `model instance '${name.instance}' names no ${size ?? ''} model: add sizes.${size ?? 'medium'} to ${providerFile}${known.length ? ` (it has ${known.join(', ')})` : ''}`,
        }
      }
      model = picked
    }
    const modelFile = modelPath(name.instance, model)
    const modelDoc = await documents.read(modelFile)
    let entry: ModelDocument = {}
    if (modelDoc) {
      const parsed = this.parse(scope, modelDoc, parseModelDocument)
      if (!parsed.ok)
        return {
          ok: false,
          message: `${modelFile} (${modelDoc.source} layer) is invalid: ${parsed.issues.map(issueText).join('; ')}`,
        }
      entry = parsed.config
    }
    return {
      ok: true,
      model: {
        ref: `${name.instance}/${model}`,
        instance: name.instance,
        model,
        modelId: entry.modelId ?? model,
        provider: { ...provider.config, wireType: wireType as WireType },
        entry,
      },
    }
  }

  private parse<T>(
    scope: { tenant: string; project: string },
    doc: CascadeDocument,
    parse: (text: YamlSource, path: string) => CatalogParse<T>,
  ): CatalogParse<T> {
    const layer = doc.source === 'bundled' ? 'bundled' : scopeOf(scope.tenant, doc.source === 'tenant' ? TENANT_LAYER : scope.project)
    const key = `${layer}\u0000${doc.path}\u0000${doc.version}`
    let hit = this.parses.get(key) as CatalogParse<T> | undefined
    if (!hit) hit = this.parses.set(key, parse(yamlSourceOf(doc), doc.path), parsedWeight(doc.body)) as CatalogParse<T>
    return hit
  }
}
