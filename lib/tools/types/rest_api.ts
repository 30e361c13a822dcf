/**
 * `rest_api`: a whole HTTP API as a pack, one sub-tool per OpenAPI operation.
 *
 *   type: rest_api
 *   labels: [petstore]
 *   promptHint: Prices are in cents.
 *   parameters:
 *     specPath: apis/petstore.yaml        # or specInline: <the document, as YAML/JSON or text>
 *     baseUrl: https://petstore.example.com/v1   # default: the document's servers[0]
 *     auth: { type: bearer, token: "${secret:PETSTORE_TOKEN}" }
 *     include: ["*Pet*"]                  # operationId globs (* ? , case-insensitive)
 *     exclude: [deletePet]                # applied after include
 *     labelOverrides: { searchPets: [read-only] }
 *     deferredOverrides: { "list*": false }
 *
 * Naming: `<pack>__<operationId>`, `.` and other characters a model API refuses → `_`; an
 * operation without operationId gets `<method>_<path segments>`. When the full name would pass 64
 * characters, the sub-tool is PUBLISHED under a shortened local name (cut + `_` + 6 hex of the
 * SHA-256 of the long name: stable) and the long name is its alias: the manifest only ever shows
 * names every model API accepts, and both names resolve. Globs, overrides and disabledSubTools
 * match the operationId, the long local name or the short one.
 *
 * Labels: the pack's labels ∪ `rest` ∪ `read-only` (GET/HEAD/OPTIONS) or `write` + `side-effect`;
 * a labelOverrides entry replaces the method-derived part (`rest` stays). The first matching
 * entry of labelOverrides / deferredOverrides wins.
 *
 * The factory is `dynamic` (a specPath document can change without the config changing): it keeps
 * its own cache of parsed, dereferenced documents keyed by the document's layer, path and version.
 */

import type { JsonSchema } from '../../config/json-schema'
import { parseJsonInSlices } from '../../config/json-slices'
import { ownPattern, RELATIVE_PATH_PATTERN } from '../../config/patterns'
import type { CheckContext, ServerToolConfig } from '../../config/server-tool'
import type { YamlParsing } from '../../config/yaml'
import { BoundedCache } from '../../runtime/bounded-cache'
import {
  malformedSecretReferences,
  secretInUrlHostMessage,
  secretNamesIn,
  secretsBeforeUrlPath,
  substituteSecrets,
} from '../../secrets/references'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import { shortHash } from './openapi/names'
import { isLongYaml, readOpenApi, readOpenApiVia, readParsedOpenApi } from './openapi/read'
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  headerNameProblem,
  MAX_RESPONSE_BYTES,
  MAX_TIMEOUT_MS,
  type RestDeps,
} from './rest'
import type { ParsedSpec } from './runtime/rest_api'

type ParseSpec = (input: unknown) => Promise<ParsedSpec>

/** RestDeps, and where long YAML specs are parsed (the YAML parse workers); without it, on the calling thread. */
export type RestApiDeps = RestDeps & { yaml?: YamlParsing }

export type RestApiAuth =
  | { type: 'none' }
  | { type: 'bearer'; token: string }
  | { type: 'basic'; username: string; password: string }
  | { type: 'apiKey'; in: 'header' | 'query'; name: string; value: string }

export interface RestApiParameters {
  specInline?: unknown
  specPath?: string
  baseUrl?: string
  auth?: RestApiAuth
  /** Static headers sent with every operation (may reference secrets). */
  headers?: Record<string, string>
  include?: string[]
  exclude?: string[]
  labelOverrides?: Record<string, string[]>
  deferredOverrides?: Record<string, boolean>
  timeoutMs?: number
  maxResponseBytes?: number
}

const globList = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 } }

export const restApiParametersSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    specInline: {
      description: 'the OpenAPI 3.0/3.1 document itself (YAML/JSON value, or its text); exactly one of specInline and specPath',
    },
    specPath: {
      type: 'string',
      minLength: 1,
      pattern: RELATIVE_PATH_PATTERN,
      description: 'document path in the cascade, e.g. apis/petstore.yaml',
    },
    baseUrl: { type: 'string', minLength: 1, maxLength: 2048, description: "default: the document's servers[0].url" },
    auth: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      description: 'how every operation authenticates; ${secret:NAME} references a tenant secret',
      properties: {
        type: { enum: ['none', 'bearer', 'basic', 'apiKey'], description: 'the fields each type needs, and no others' },
        token: { type: 'string', description: 'bearer' },
        username: { type: 'string', description: 'basic' },
        password: { type: 'string', description: 'basic' },
        in: { enum: ['header', 'query'], description: 'apiKey' },
        name: { type: 'string', minLength: 1, description: 'apiKey: the header or query parameter name' },
        value: { type: 'string', description: 'apiKey' },
      },
    },
    headers: {
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 8192 },
      description: 'sent with every operation; ${secret:NAME} allowed',
    },
    include: { ...globList, description: 'operations to publish, by operationId or sub-tool name (globs with * and ?); all when absent' },
    exclude: { ...globList, description: 'operations to leave out (globs), applied after include' },
    labelOverrides: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string', minLength: 1, pattern: ownPattern('^[^@\\s]+$') } },
      description: "glob → labels: the matching operations get these labels (and 'rest') instead of the method's",
    },
    deferredOverrides: {
      type: 'object',
      additionalProperties: { type: 'boolean' },
      description: 'glob → deferred: the matching operations start deferred (true) or primary (false)',
    },
    timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS, description: `per call; default ${DEFAULT_TIMEOUT_MS}` },
    maxResponseBytes: { type: 'integer', minimum: 1, maximum: MAX_RESPONSE_BYTES, description: `default ${DEFAULT_MAX_RESPONSE_BYTES}` },
  },
}

const AUTH_FIELDS: Record<RestApiAuth['type'], string[]> = {
  none: [],
  bearer: ['token'],
  basic: ['username', 'password'],
  apiKey: ['in', 'name', 'value'],
}

function checkRestApi(p: RestApiParameters, at?: CheckContext): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = []
  const hasInline = p.specInline !== undefined
  const hasPath = p.specPath !== undefined
  if (hasInline === hasPath)
    problems.push({ pointer: hasInline ? '/specPath' : '', message: 'exactly one of specInline and specPath is required' })
  if (hasInline) {
    const read = readInline(p.specInline, at)
    if (read && !read.ok) problems.push({ pointer: '/specInline', message: read.message })
  }
  if (p.auth) {
    const a = p.auth as Record<string, unknown>
    const wanted = AUTH_FIELDS[p.auth.type] ?? []
    for (const f of wanted) if (a[f] === undefined) problems.push({ pointer: `/auth/${f}`, message: `auth type ${p.auth.type} needs ${f}` })
    for (const f of Object.keys(a))
      if (f !== 'type' && !wanted.includes(f))
        problems.push({ pointer: `/auth/${f}`, message: `auth type ${p.auth.type} does not use ${f}` })
    if (p.auth.type === 'apiKey' && p.auth.in === 'header' && p.auth.name) {
      const bad = headerNameProblem(p.auth.name)
      if (bad) problems.push({ pointer: '/auth/name', message: bad })
    }
  }
  if (p.baseUrl !== undefined) {
    const hostSecrets = secretsBeforeUrlPath(p.baseUrl)
    if (hostSecrets.length) problems.push({ pointer: '/baseUrl', message: secretInUrlHostMessage(hostSecrets) })
    const probe = substituteSecrets(p.baseUrl, new Map([...secretNamesIn(p.baseUrl)].map((n) => [n, 'x'])))
    let url: URL | undefined
    try {
      url = new URL(probe)
    } catch {
      problems.push({ pointer: '/baseUrl', message: 'baseUrl must be an absolute http or https URL' })
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
      problems.push({ pointer: '/baseUrl', message: `baseUrl must use http or https, not ${url.protocol.replace(':', '')}` })
    if (url && (url.username || url.password))
      problems.push({ pointer: '/baseUrl', message: 'baseUrl must not carry credentials; use auth' })
  }
  for (const name of Object.keys(p.headers ?? {})) {
    const bad = headerNameProblem(name)
    if (bad) problems.push({ pointer: `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: bad })
  }
  for (const field of ['baseUrl', 'auth', 'headers'] as const)
    if (p[field] !== undefined) problems.push(...malformedSecretReferences(p[field], `/${field}`))
  return problems
}

/**
 * The inline spec as the check reads it: a long YAML text as the write parsed it (a parse
 * worker), never parsed again on this thread when a read re-checks what a write judged (its
 * expansion reads it through the parse workers and lists what is wrong as a problem).
 */
function readInline(spec: unknown, at?: CheckContext) {
  if (typeof spec !== 'string' || !isLongYaml(spec)) return readOpenApi(spec)
  const parsed = at?.parsedText(spec)
  if (parsed) return readParsedOpenApi(parsed)
  return at?.mode === 'read' ? undefined : readOpenApi(spec)
}

export class RestApiToolFactory implements ToolFactory<RestApiParameters> {
  readonly typeId = 'rest_api'
  readonly kind = 'pack' as const
  readonly dynamic = true
  readonly parametersSchema = restApiParametersSchema
  private readonly inlineByObject = new WeakMap<object, Promise<ParsedSpec>>()
  /** Parsed specs by document version: at most `maxCachedSpecs` (200) and about 256 MiB. */
  private readonly byKey: BoundedCache<string, Promise<ParsedSpec>>
  /** Parses performed (tests prove that a cached version is not parsed again). */
  parses = 0

  constructor(
    private readonly deps: RestApiDeps,
    opts: { maxCachedSpecs?: number; maxCachedSpecBytes?: number } = {},
  ) {
    this.byKey = new BoundedCache(opts.maxCachedSpecs ?? 200, { maxBytes: opts.maxCachedSpecBytes ?? 256 * 1024 * 1024 })
  }

  check(parameters: RestApiParameters, at?: CheckContext) {
    return checkRestApi(parameters, at)
  }

  private cached(key: string, input: () => { text: string; json?: string }, parseSpec: ParseSpec, env: FactoryEnv): Promise<ParsedSpec> {
    const hit = this.byKey.get(key)
    if (hit) return hit
    this.parses++
    const { text, json } = input()
    // weighed by the text: a parsed, dereferenced spec and its operations take ~10 bytes a character
    return this.byKey.set(key, this.parseText(text, json, parseSpec, env), 10 * text.length)
  }

  /**
   * A spec's text to its operations: the stored JSON form when the document has one (JSON.parse is
   * native), a long YAML text through the parse workers; only what remains is read on this thread.
   */
  private async parseText(text: string, json: string | undefined, parseSpec: ParseSpec, env: FactoryEnv): Promise<ParsedSpec> {
    if (json !== undefined) {
      // in slices (lib/config/json-slices.ts): a stored JSON form is up to 1 MiB
      const parsed = await parseJsonInSlices(json)
      // not JSON after all: the text is the truth
      if (parsed.ok) return parseSpec(parsed.value)
    }
    const yaml = this.deps.yaml
    if (!yaml || !isLongYaml(text)) return parseSpec(text)
    const read = await readOpenApiVia(text, yaml, { tenant: env.tenant })
    return read.ok ? parseSpec(read.doc) : { ok: false, message: read.message, operations: [], problems: [] }
  }

  /** The caches live here, with the factory: the runtime only parses (tests count `parses`). */
  private async spec(p: RestApiParameters, env: FactoryEnv, parseSpec: ParseSpec): Promise<ParsedSpec | string> {
    if (p.specPath !== undefined) {
      const doc = await env.documents.read(p.specPath)
      if (!doc)
        return `the spec document '${p.specPath}' does not exist in project '${env.project}', the tenant layer or the bundled defaults`
      const scope = doc.source === 'bundled' ? '' : doc.source === 'tenant' ? env.tenant : `${env.tenant}#${env.project}`
      return this.cached(`${doc.source}|${scope}|${doc.path}|${doc.version}`, () => ({ text: doc.body, json: doc.json }), parseSpec, env)
    }
    const inline = p.specInline
    if (inline && typeof inline === 'object') {
      let hit = this.inlineByObject.get(inline)
      if (!hit) {
        this.parses++
        hit = parseSpec(inline)
        this.inlineByObject.set(inline, hit)
      }
      return hit
    }
    if (typeof inline === 'string')
      return this.cached(`inline|${shortHash(inline)}|${inline.length}`, () => ({ text: inline }), parseSpec, env)
    return 'exactly one of specInline and specPath is required'
  }
  /** An inline spec is the config's own; a specPath one is named by its document's layer, path and version. */
  async dependencyToken(config: ServerToolConfig<RestApiParameters>, env: FactoryEnv): Promise<string | undefined> {
    const path = config.parameters.specPath
    if (path === undefined) return ''
    const doc = await env.documents.read(path)
    return doc ? `${doc.source}|${doc.path}|${doc.version}` : `absent|${path}`
  }

  /** The operations become sub-tools in the runtime, loaded by the first expansion (lib/tools/types/runtime). */
  async create(config: ServerToolConfig<RestApiParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const runtimes = await this.deps.load()
    return runtimes.restApiTools(config, env, await this.spec(config.parameters, env, runtimes.parseSpec), this.deps)
  }
}
