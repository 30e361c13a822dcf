/**
 * The model catalog documents, read in one place for every concern that uses them: the LLM wire
 * clients (endpoint, key, sizes, output cap) and the agent surface (`maxTools` budgets).
 *
 *   # models/<instance>/_provider.yaml — one endpoint (required)
 *   wireType: openai                     # openai (chat completions) | anthropic (messages)
 *   baseUrl: https://api.openai.com/v1   # default per wire type: https://api.openai.com/v1,
 *                                        # https://api.anthropic.com (a gateway: its own instance)
 *   apiKey: ${secret:OPENAI_KEY}         # a secret reference; omit for keyless local servers
 *   headers: { OpenAI-Organization: org-1 }   # optional extra headers (may hold ${secret:…})
 *   timeoutMs: 60000                     # optional default per call
 *   sizes: { small: gpt-4o-mini, large: gpt-4o }   # optional: what `modelSize` picks
 *   maxTools: 128                        # tool limit of every model of the instance (0 = unlimited)
 *   maxToolNameLength: 64                # longest tool name the endpoint accepts
 *   maxSchemaBytes: 400000               # total JSON bytes of the tools the endpoint accepts
 *   strict: { maxTools: 20, maxOptionalParams: 24, maxUnionParams: 16 }   # caps on `strict: true` tools
 *   nativeDeferral: anthropic-tool-search  # the endpoint's own deferred loading: none | anthropic-tool-search | openai-tool-search
 *   deferral: auto                       # auto (native where the endpoint has it) | native | meta (our discovery block)
 *   surface: code                        # the code rendering (issue 27): code | native; absent = the recipe's
 *   codeDeclarationBytes: 16384          # code rendering: the declaration's byte budget for this endpoint
 *
 *   # models/<instance>/<model>.yaml — one model (optional)
 *   modelId: gpt-4o-mini-2024-07-18      # the provider's name (default: the file name)
 *   maxOutputTokens: 16384               # default and cap for a call's max tokens
 *   size: small
 *   maxTools: 64                         # wins over the provider's (0 = explicitly unlimited)
 *   (maxToolNameLength, maxSchemaBytes, strict, nativeDeferral, deferral, surface, codeDeclarationBytes:
 *    as above, each winning over the provider's)
 *
 * Both are tolerant of fields they do not know (pricing or other settings may live there); the
 * fields above are checked on write (`checkModelCatalogDocument`) and again on read. A provider
 * document may leave out `wireType` when only the agent surface uses it; a prompt call then says so.
 */
import { validateAgainst } from '../config/json-schema'
import { ownPattern } from '../config/patterns'
import { closest, locate, type ParsedYaml, parseYaml, type YamlSource } from '../config/yaml'
import type { Issue } from '../errors'
import { malformedSecretReferences } from '../secrets/references'

export const MODELS_PREFIX = 'models/'
export const PROVIDER_FILE = '_provider.yaml'
export const providerPath = (instance: string) => `${MODELS_PREFIX}${instance}/${PROVIDER_FILE}`
export const modelPath = (instance: string, model: string) => `${MODELS_PREFIX}${instance}/${model}.yaml`

export const INSTANCE_PATTERN = ownPattern('^[a-z0-9][a-z0-9_-]{0,63}$')
export const MODEL_PATTERN = ownPattern('^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$')
const INSTANCE = new RegExp(INSTANCE_PATTERN)
const MODEL = new RegExp(MODEL_PATTERN)
export const MODEL_SIZES = ['small', 'medium', 'large'] as const
export type ModelSize = (typeof MODEL_SIZES)[number]
export const WIRE_TYPES = ['openai', 'anthropic'] as const
export type WireType = (typeof WIRE_TYPES)[number]

export const DEFAULT_BASE_URLS: Record<WireType, string> = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' }

export const DEFERRALS = ['auto', 'native', 'meta'] as const
export type Deferral = (typeof DEFERRALS)[number]
/** The rendering an endpoint asks for: its tools in the array (`native`) or one code tool with a typed API (`code`). */
export const ENDPOINT_SURFACES = ['native', 'code'] as const
export type EndpointSurface = (typeof ENDPOINT_SURFACES)[number]
export const NATIVE_DEFERRALS = ['none', 'anthropic-tool-search', 'openai-tool-search'] as const
export type NativeDeferral = (typeof NATIVE_DEFERRALS)[number]

/** What one endpoint accepts in a tools array beyond the count (the profile the triage enforces). */
export interface EndpointProfile {
  maxToolNameLength?: number
  maxSchemaBytes?: number
  strict?: { maxTools?: number; maxOptionalParams?: number; maxUnionParams?: number }
  nativeDeferral?: NativeDeferral
  deferral?: Deferral
  /** `code`: this endpoint gets the code rendering; `native`: never (a recipe's `surface: code` included). */
  surface?: EndpointSurface
  /** The code declaration's byte budget on this endpoint (the deployment's setting caps it). */
  codeDeclarationBytes?: number
}
const PROFILE_FIELDS = [
  'maxToolNameLength',
  'maxSchemaBytes',
  'strict',
  'nativeDeferral',
  'deferral',
  'surface',
  'codeDeclarationBytes',
] as const

export interface ProviderDocument extends EndpointProfile {
  /** As written; a prompt call insists on one of WIRE_TYPES. */
  wireType?: string
  baseUrl: string
  /** A `${secret:NAME}` reference (never a literal key: documents are readable through the API). */
  apiKey?: string
  headers: Record<string, string>
  timeoutMs?: number
  sizes: Partial<Record<ModelSize, string>>
  /** 0 = explicitly unlimited; absent = no known limit. */
  maxTools?: number
}

export interface ModelDocument extends EndpointProfile {
  modelId?: string
  maxOutputTokens?: number
  size?: ModelSize
  /** 0 = explicitly unlimited, suppressing the provider's; absent = the provider's. */
  maxTools?: number
}

export type CatalogParse<T> = { ok: true; config: T } | { ok: false; issues: Issue[] }

const SECRET_ONLY = ownPattern('^\\$\\{secret:[A-Za-z][A-Za-z0-9_-]{0,127}\\}$')
const maxTools = { type: 'integer', minimum: 0 }
const count = { type: 'integer', minimum: 0 }
const profileProperties = {
  maxToolNameLength: { type: 'integer', minimum: 1, maximum: 1024 },
  maxSchemaBytes: { type: 'integer', minimum: 1 },
  strict: {
    type: 'object',
    additionalProperties: false,
    properties: { maxTools: count, maxOptionalParams: count, maxUnionParams: count },
  },
  nativeDeferral: { enum: NATIVE_DEFERRALS },
  deferral: { enum: DEFERRALS },
  surface: { enum: ENDPOINT_SURFACES },
  codeDeclarationBytes: { type: 'integer', minimum: 1 },
}

const providerSchema = {
  type: 'object',
  properties: {
    wireType: { type: 'string', minLength: 1 },
    baseUrl: { type: 'string', pattern: ownPattern('^https?://') },
    apiKey: { type: 'string', pattern: SECRET_ONLY },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 300_000 },
    sizes: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(MODEL_SIZES.map((s) => [s, { type: 'string', pattern: MODEL_PATTERN }])),
    },
    maxTools,
    ...profileProperties,
  },
}

const modelSchema = {
  type: 'object',
  properties: {
    modelId: { type: 'string', minLength: 1, maxLength: 256 },
    maxOutputTokens: { type: 'integer', minimum: 1 },
    size: { enum: MODEL_SIZES },
    maxTools,
    ...profileProperties,
  },
}

/**
 * The documents tolerate fields they do not know (pricing may live there), so a misspelt limit
 * would be silently no limit: a field one or two edits from a known one is refused with a hint.
 */
function misspeltFields(raw: Record<string, unknown>, schema: { properties: Record<string, unknown> }): Issue[] {
  // only the limits: a pricing field near `maxOutputTokens` is no misspelling of a limit
  const known = ['maxTools', ...PROFILE_FIELDS]
  const issues: Issue[] = []
  for (const key of Object.keys(raw)) {
    if (key in schema.properties) continue
    const hint = closest(key, known)
    if (hint) issues.push({ pointer: `/${key}`, message: `unknown field '${key}' — did you mean '${hint}'?` })
  }
  return issues
}

function profileOf(r: Record<string, unknown>): EndpointProfile {
  const out: Record<string, unknown> = {}
  for (const f of PROFILE_FIELDS) if (r[f] !== undefined) out[f] = r[f]
  return out as EndpointProfile
}

function mapping(
  text: YamlSource,
  path: string,
): { ok: true; raw: Record<string, unknown>; parsed: ParsedYaml } | { ok: false; issues: Issue[] } {
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data ?? {}
  if (typeof data !== 'object' || Array.isArray(data))
    return {
      ok: false,
      issues: [{ path, pointer: '', line: 1, column: 1, message: 'a model catalog document must be a YAML mapping (key: value lines)' }],
    }
  return { ok: true, raw: data as Record<string, unknown>, parsed: parsed.value }
}

export function parseProviderDocument(text: YamlSource, path: string): CatalogParse<ProviderDocument> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const issues = [...validateAgainst(providerSchema, m.raw), ...misspeltFields(m.raw, providerSchema)]
  if (typeof m.raw.apiKey === 'string' && !new RegExp(SECRET_ONLY).test(m.raw.apiKey)) {
    issues.splice(0, issues.length, ...issues.filter((i) => i.pointer !== '/apiKey'), {
      pointer: '/apiKey',
      message: 'apiKey must be a secret reference such as ${secret:OPENAI_KEY}, never the key itself',
    })
  }
  issues.push(...malformedSecretReferences(m.raw.headers ?? {}, '/headers'))
  if (issues.length) return { ok: false, issues: locate(m.parsed, issues, path) }
  const r = m.raw
  return {
    ok: true,
    config: {
      ...(typeof r.wireType === 'string' ? { wireType: r.wireType } : {}),
      baseUrl: (typeof r.baseUrl === 'string' ? r.baseUrl : (DEFAULT_BASE_URLS[r.wireType as WireType] ?? '')).replace(/\/+$/, ''),
      ...(typeof r.apiKey === 'string' ? { apiKey: r.apiKey } : {}),
      headers: (r.headers as Record<string, string> | undefined) ?? {},
      ...(typeof r.timeoutMs === 'number' ? { timeoutMs: r.timeoutMs } : {}),
      sizes: (r.sizes as ProviderDocument['sizes'] | undefined) ?? {},
      ...(typeof r.maxTools === 'number' ? { maxTools: r.maxTools } : {}),
      ...profileOf(r),
    },
  }
}

export function parseModelDocument(text: YamlSource, path: string): CatalogParse<ModelDocument> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const issues = [...validateAgainst(modelSchema, m.raw), ...misspeltFields(m.raw, modelSchema)]
  if (issues.length) return { ok: false, issues: locate(m.parsed, issues, path) }
  const r = m.raw
  return {
    ok: true,
    config: {
      ...(typeof r.modelId === 'string' ? { modelId: r.modelId } : {}),
      ...(typeof r.maxOutputTokens === 'number' ? { maxOutputTokens: r.maxOutputTokens } : {}),
      ...(typeof r.size === 'string' ? { size: r.size as ModelSize } : {}),
      ...(typeof r.maxTools === 'number' ? { maxTools: r.maxTools } : {}),
      ...profileOf(r),
    },
  }
}

const isModelName = (model: string) => MODEL.test(model) && !model.includes('..') && `${model}.yaml` !== PROVIDER_FILE

/** `instance/model`, or `instance` alone (then a size picks the model): a prompt tool's `model`. */
export function parseModelName(ref: string): { instance: string; model?: string } | string {
  const slash = ref.indexOf('/')
  const instance = slash < 0 ? ref : ref.slice(0, slash)
  if (!INSTANCE.test(instance)) return `model instance '${instance}' must be lower-case letters, digits, '_' or '-'`
  if (slash < 0) return { instance }
  const model = ref.slice(slash + 1)
  if (!isModelName(model)) return `'${model}' is not a valid model name (letters, digits, '.', '_', ':', '-')`
  return { instance, model }
}

/** `instance/model` (both required): an entry of a recipe's model chain. */
export function parseModelRef(ref: string): { instance: string; model: string } | string {
  const slash = ref.indexOf('/')
  if (slash < 0) return `model '${ref}' must be written 'instance/model' (e.g. 'openai/gpt-4o')`
  const instance = ref.slice(0, slash)
  const model = ref.slice(slash + 1)
  if (!INSTANCE.test(instance)) return `model '${ref}': instance '${instance}' must be lower-case letters, digits, '_' or '-'`
  if (!isModelName(model)) return `model '${ref}': '${model}' is not a valid model name (letters, digits, '.', '_', ':', '-')`
  return { instance, model }
}

/** The instance (and model) a catalog path names, or undefined for other paths. */
export function catalogDocumentOf(
  path: string,
): { kind: 'provider'; instance: string } | { kind: 'model'; instance: string; model: string } | undefined {
  const m = /^models\/([^/]+)\/([^/]+)\.ya?ml$/.exec(path)
  if (!m) return undefined
  return m[2] === PROVIDER_FILE.replace(/\.yaml$/, '')
    ? { kind: 'provider', instance: m[1] }
    : { kind: 'model', instance: m[1], model: m[2] }
}

/** Write-time check for the raw documents API: problems of a model catalog document, with positions; [] for other paths. */
export function checkModelCatalogDocument(path: string, body: YamlSource): Issue[] {
  const doc = catalogDocumentOf(path)
  if (!doc) return []
  if (doc.kind === 'model') {
    const r = parseModelDocument(body, path)
    return r.ok ? [] : r.issues
  }
  const nameProblem: Issue[] = INSTANCE.test(doc.instance)
    ? []
    : [{ path, pointer: '', message: `model instance name '${doc.instance}' must be lower-case letters, digits, '_' or '-' (at most 64)` }]
  const r = parseProviderDocument(body, path)
  return [...nameProblem, ...(r.ok ? [] : r.issues)]
}
