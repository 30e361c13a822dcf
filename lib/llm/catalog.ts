/**
 * The model catalog as the LLM wire clients read it: documents in the cascade.
 *
 *   # models/<instance>/_provider.yaml — one endpoint (required)
 *   wireType: openai                     # openai (chat completions) | anthropic (messages)
 *   baseUrl: https://api.openai.com/v1   # default per wire type: https://api.openai.com/v1,
 *                                        # https://api.anthropic.com (a gateway: its own instance)
 *   apiKey: ${secret:OPENAI_KEY}         # a secret reference; omit for keyless local servers
 *   headers: { OpenAI-Organization: org-1 }   # optional extra headers (may hold ${secret:…})
 *   timeoutMs: 60000                     # optional default per call
 *   sizes: { small: gpt-4o-mini, large: gpt-4o }   # optional: what `modelSize` picks
 *
 *   # models/<instance>/<model>.yaml — one model (optional)
 *   modelId: gpt-4o-mini-2024-07-18      # the provider's name (default: the file name)
 *   maxOutputTokens: 16384               # default and cap for a call's max tokens
 *   size: small
 *
 * Both are tolerant of fields they do not know: the same documents carry the agent surface's
 * `maxTools` (lib/recipes) and may carry pricing or other settings; only the fields read here are
 * checked (on write through `checkModelCatalogDocument`, and again on read). A provider document
 * may leave out `wireType` when only the agent surface uses it; a prompt call then says so.
 * Parsed documents are cached by (layer, path, version).
 */
import { validateAgainst } from '../config/json-schema'
import { locate, parseYaml } from '../config/yaml'
import { scopeOf, TENANT_LAYER } from '../documents/ports'
import type { Issue } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'
import { malformedSecretReferences } from '../secrets/references'
import type { CascadeDocument, CascadeReader } from '../tools/contracts'

export const MODELS_PREFIX = 'models/'
export const PROVIDER_FILE = '_provider.yaml'
export const providerDocPath = (instance: string) => `${MODELS_PREFIX}${instance}/${PROVIDER_FILE}`
export const modelDocPath = (instance: string, model: string) => `${MODELS_PREFIX}${instance}/${model}.yaml`

/** Same name rules as the agent-surface catalog reader (lib/recipes/documents.ts). */
export const INSTANCE_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$'
export const MODEL_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'
export const MODEL_SIZES = ['small', 'medium', 'large'] as const
export type ModelSize = (typeof MODEL_SIZES)[number]
export const WIRE_TYPES = ['openai', 'anthropic'] as const
export type WireType = (typeof WIRE_TYPES)[number]

export const DEFAULT_BASE_URLS: Record<WireType, string> = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' }

export interface ProviderEntry {
  /** As written; resolve() insists on one of WIRE_TYPES. */
  wireType?: string
  baseUrl: string
  /** A `${secret:NAME}` reference (never a literal key: documents are readable through the API). */
  apiKey?: string
  headers: Record<string, string>
  timeoutMs?: number
  sizes: Partial<Record<ModelSize, string>>
}

export interface ModelEntry {
  modelId?: string
  maxOutputTokens?: number
  size?: ModelSize
}

const SECRET_ONLY = '^\\$\\{secret:[A-Za-z][A-Za-z0-9_-]{0,127}\\}$'

export const providerEntrySchema = {
  type: 'object',
  properties: {
    wireType: { type: 'string', minLength: 1 },
    baseUrl: { type: 'string', pattern: '^https?://' },
    apiKey: { type: 'string', pattern: SECRET_ONLY },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 300_000 },
    sizes: { type: 'object', additionalProperties: false, properties: Object.fromEntries(MODEL_SIZES.map((s) => [s, { type: 'string', pattern: MODEL_PATTERN }])) },
  },
}

export const modelEntrySchema = {
  type: 'object',
  properties: {
    modelId: { type: 'string', minLength: 1, maxLength: 256 },
    maxOutputTokens: { type: 'integer', minimum: 1 },
    size: { enum: MODEL_SIZES },
  },
}

type Parse<T> = { ok: true; entry: T } | { ok: false; issues: Issue[] }

function mapping(text: string, path: string): { ok: true; raw: Record<string, unknown>; parsed: Extract<ReturnType<typeof parseYaml>, { ok: true }>['value'] } | { ok: false; issues: Issue[] } {
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data ?? {}
  if (typeof data !== 'object' || Array.isArray(data)) return { ok: false, issues: [{ path, line: 1, column: 1, message: 'a model catalog document must be a YAML mapping' }] }
  return { ok: true, raw: data as Record<string, unknown>, parsed: parsed.value }
}

export function parseProviderEntry(text: string, path: string): Parse<ProviderEntry> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const issues = [...validateAgainst(providerEntrySchema, m.raw)]
  if (typeof m.raw.apiKey === 'string' && !new RegExp(SECRET_ONLY).test(m.raw.apiKey)) {
    issues.splice(0, issues.length, ...issues.filter((i) => i.pointer !== '/apiKey'), { pointer: '/apiKey', message: 'apiKey must be a secret reference such as ${secret:OPENAI_KEY}, never the key itself' })
  }
  issues.push(...malformedSecretReferences(m.raw.headers ?? {}, '/headers'))
  if (issues.length) return { ok: false, issues: locate(m.parsed, issues, path) }
  const r = m.raw
  return {
    ok: true,
    entry: {
      ...(typeof r.wireType === 'string' ? { wireType: r.wireType } : {}),
      baseUrl: (typeof r.baseUrl === 'string' ? r.baseUrl : (DEFAULT_BASE_URLS[r.wireType as WireType] ?? '')).replace(/\/+$/, ''),
      ...(typeof r.apiKey === 'string' ? { apiKey: r.apiKey } : {}),
      headers: (r.headers as Record<string, string> | undefined) ?? {},
      ...(typeof r.timeoutMs === 'number' ? { timeoutMs: r.timeoutMs } : {}),
      sizes: (r.sizes as ProviderEntry['sizes'] | undefined) ?? {},
    },
  }
}

export function parseModelEntry(text: string, path: string): Parse<ModelEntry> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const issues = validateAgainst(modelEntrySchema, m.raw)
  if (issues.length) return { ok: false, issues: locate(m.parsed, issues, path) }
  const r = m.raw
  return {
    ok: true,
    entry: {
      ...(typeof r.modelId === 'string' ? { modelId: r.modelId } : {}),
      ...(typeof r.maxOutputTokens === 'number' ? { maxOutputTokens: r.maxOutputTokens } : {}),
      ...(typeof r.size === 'string' ? { size: r.size as ModelSize } : {}),
    },
  }
}

/** `instance/model`, or `instance` alone (then a size picks the model). */
export function parseModelName(ref: string): { instance: string; model?: string } | string {
  const slash = ref.indexOf('/')
  const instance = slash < 0 ? ref : ref.slice(0, slash)
  if (!new RegExp(INSTANCE_PATTERN).test(instance)) return `model instance '${instance}' must be lower-case letters, digits, '_' or '-'`
  if (slash < 0) return { instance }
  const model = ref.slice(slash + 1)
  if (!new RegExp(MODEL_PATTERN).test(model) || model.includes('..') || `${model}.yaml` === PROVIDER_FILE) return `'${model}' is not a valid model name (letters, digits, '.', '_', ':', '-')`
  return { instance, model }
}

/** A model resolved for one call. */
export interface ResolvedModel {
  /** `instance/model`, as the catalog names it. */
  ref: string
  instance: string
  model: string
  /** What goes into the request's `model` field. */
  modelId: string
  provider: ProviderEntry & { wireType: WireType }
  entry: ModelEntry
}

export type ModelLookup = { ok: true; model: ResolvedModel } | { ok: false; message: string }

export class ModelCatalog {
  private readonly parses = new BoundedCache<string, Parse<unknown>>(2_000)

  /** Resolves `instance/model` (or `instance` + size) through the cascade. */
  async resolve(scope: { tenant: string; project: string; documents: CascadeReader }, ref: string, size?: ModelSize): Promise<ModelLookup> {
    const { documents } = scope
    const name = parseModelName(ref)
    if (typeof name === 'string') return { ok: false, message: name }
    const providerPath = providerDocPath(name.instance)
    const providerDoc = await documents.read(providerPath)
    if (!providerDoc) return { ok: false, message: `model instance '${name.instance}' is not in the model catalog: there is no ${providerPath} in any layer` }
    const provider = this.parse(scope, providerDoc, parseProviderEntry)
    if (!provider.ok) return { ok: false, message: `${providerPath} (${providerDoc.source} layer) is invalid: ${provider.issues.map((i) => i.message).join('; ')}` }
    const wireType = provider.entry.wireType
    if (!wireType || !(WIRE_TYPES as readonly string[]).includes(wireType)) {
      return { ok: false, message: `${providerPath} (${providerDoc.source} layer) ${wireType ? `has wireType '${wireType}'` : 'has no wireType'}; prompt tools speak ${WIRE_TYPES.join(' and ')}` }
    }
    let model = name.model
    if (!model) {
      const picked = size ? provider.entry.sizes[size] : undefined
      if (!picked) {
        const known = Object.keys(provider.entry.sizes)
        return { ok: false, message: `model instance '${name.instance}' names no ${size ?? ''} model: add sizes.${size ?? 'medium'} to ${providerPath}${known.length ? ` (it has ${known.join(', ')})` : ''}` }
      }
      model = picked
    }
    const modelPath = modelDocPath(name.instance, model)
    const modelDoc = await documents.read(modelPath)
    let entry: ModelEntry = {}
    if (modelDoc) {
      const parsed = this.parse(scope, modelDoc, parseModelEntry)
      if (!parsed.ok) return { ok: false, message: `${modelPath} (${modelDoc.source} layer) is invalid: ${parsed.issues.map((i) => i.message).join('; ')}` }
      entry = parsed.entry
    }
    return { ok: true, model: { ref: `${name.instance}/${model}`, instance: name.instance, model, modelId: entry.modelId ?? model, provider: { ...provider.entry, wireType: wireType as WireType }, entry } }
  }

  private parse<T>(scope: { tenant: string; project: string }, doc: CascadeDocument, parse: (text: string, path: string) => Parse<T>): Parse<T> {
    const layer = doc.source === 'bundled' ? 'bundled' : scopeOf(scope.tenant, doc.source === 'tenant' ? TENANT_LAYER : scope.project)
    const key = `${layer}\u0000${doc.path}\u0000${doc.version}`
    let hit = this.parses.get(key) as Parse<T> | undefined
    if (!hit) hit = this.parses.set(key, parse(doc.body, doc.path)) as Parse<T>
    return hit
  }
}

/** Write-time check for the raw documents API: problems of a model catalog document, with positions; [] for other paths. */
export function checkModelCatalogDocument(path: string, body: string): Issue[] {
  const m = /^models\/([^/]+)\/([^/]+)\.ya?ml$/.exec(path)
  if (!m) return []
  const r = `${m[2]}.yaml` === PROVIDER_FILE ? parseProviderEntry(body, path) : parseModelEntry(body, path)
  return r.ok ? [] : r.issues
}
