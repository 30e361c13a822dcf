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
import { validateAgainst } from '../../config/json-schema'
import { BoundedCache } from '../../runtime/bounded-cache'
import type { SecretStore } from '../../secrets/ports'
import { malformedSecretReferences, secretInUrlHostMessage, secretNamesIn, secretsBeforeUrlPath, substituteSecrets, type SecretValues } from '../../secrets/references'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { JsonSchema } from '../../config/json-schema'
import type { ServerToolConfig } from '../../config/server-tool'
import { toolError } from '../../calls/outcome'
import { BudgetExceeded } from '../../config/expansion-budget'
import { readOpenApi, serverUrl, type OpenApiDocument } from './openapi/document'
import { appendQuery, extractOperations, headerParams, renderPath, renderRequestBody, type Operation } from './openapi/operations'
import { fitLocalName, globToRegExp, matchesAny, shortHash } from './openapi/names'
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  headerNameProblem,
  labelsForMethod,
  MAX_RESPONSE_BYTES,
  MAX_TIMEOUT_MS,
  performCall,
  secretsFor,
  setHeader,
  unsafeHeaderValue,
  type RestDeps,
} from './rest'

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
    specInline: { description: 'the OpenAPI 3.0/3.1 document itself (YAML/JSON value, or its text)' },
    specPath: { type: 'string', minLength: 1, pattern: '^(?!/)(?!.*(^|/)\\.\\.(/|$)).+$', description: 'document path in the cascade, e.g. apis/petstore.yaml' },
    baseUrl: { type: 'string', minLength: 1, maxLength: 2048, description: "default: the document's servers[0].url" },
    auth: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: {
        type: { enum: ['none', 'bearer', 'basic', 'apiKey'] },
        token: { type: 'string' },
        username: { type: 'string' },
        password: { type: 'string' },
        in: { enum: ['header', 'query'] },
        name: { type: 'string', minLength: 1 },
        value: { type: 'string' },
      },
    },
    headers: { type: 'object', additionalProperties: { type: 'string', maxLength: 8192 } },
    include: globList,
    exclude: globList,
    labelOverrides: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string', minLength: 1, pattern: '^[^@\\s]+$' } } },
    deferredOverrides: { type: 'object', additionalProperties: { type: 'boolean' } },
    timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_MS },
    maxResponseBytes: { type: 'integer', minimum: 1, maximum: MAX_RESPONSE_BYTES },
  },
}

const AUTH_FIELDS: Record<RestApiAuth['type'], string[]> = { none: [], bearer: ['token'], basic: ['username', 'password'], apiKey: ['in', 'name', 'value'] }

function checkRestApi(p: RestApiParameters): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = []
  const hasInline = p.specInline !== undefined
  const hasPath = p.specPath !== undefined
  if (hasInline === hasPath) problems.push({ pointer: hasInline ? '/specPath' : '', message: 'exactly one of specInline and specPath is required' })
  if (hasInline) {
    const read = readOpenApi(p.specInline)
    if (!read.ok) problems.push({ pointer: '/specInline', message: read.message })
  }
  if (p.auth) {
    const a = p.auth as Record<string, unknown>
    const wanted = AUTH_FIELDS[p.auth.type] ?? []
    for (const f of wanted) if (a[f] === undefined) problems.push({ pointer: `/auth/${f}`, message: `auth type ${p.auth.type} needs ${f}` })
    for (const f of Object.keys(a)) if (f !== 'type' && !wanted.includes(f)) problems.push({ pointer: `/auth/${f}`, message: `auth type ${p.auth.type} does not use ${f}` })
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
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') problems.push({ pointer: '/baseUrl', message: `baseUrl must use http or https, not ${url.protocol.replace(':', '')}` })
    if (url && (url.username || url.password)) problems.push({ pointer: '/baseUrl', message: 'baseUrl must not carry credentials; use auth' })
  }
  for (const name of Object.keys(p.headers ?? {})) {
    const bad = headerNameProblem(name)
    if (bad) problems.push({ pointer: `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: bad })
  }
  for (const field of ['baseUrl', 'auth', 'headers'] as const) if (p[field] !== undefined) problems.push(...malformedSecretReferences(p[field], `/${field}`))
  return problems
}

interface ParsedSpec {
  ok: boolean
  message?: string
  doc?: OpenApiDocument
  operations: Operation[]
  problems: string[]
}

async function parseSpec(input: unknown): Promise<ParsedSpec> {
  const read = readOpenApi(input)
  if (!read.ok) return { ok: false, message: read.message, operations: [], problems: [] }
  try {
    const { operations, problems } = await extractOperations(read.doc)
    return { ok: true, doc: read.doc, operations, problems }
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e
    return { ok: false, message: `the OpenAPI document expands too far: ${e.message} (see "Limits a tenant can rely on")`, operations: [], problems: [] }
  }
}

const MAX_DESCRIPTION = 1024

function describeOperation(op: Operation): string {
  const parts = [op.summary, op.description && op.description !== op.summary ? op.description : undefined].filter(Boolean) as string[]
  let text = parts.join('\n\n')
  if (text.length > MAX_DESCRIPTION) text = `${text.slice(0, MAX_DESCRIPTION - 1)}…`
  const route = `${op.method} ${op.path}${op.deprecated ? ' (deprecated)' : ''}`
  return text ? `${text}\n\n${route}` : route
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
    private readonly deps: RestDeps,
    opts: { maxCachedSpecs?: number; maxCachedSpecBytes?: number } = {},
  ) {
    this.byKey = new BoundedCache(opts.maxCachedSpecs ?? 200, { maxBytes: opts.maxCachedSpecBytes ?? 256 * 1024 * 1024 })
  }

  check(parameters: RestApiParameters) {
    return checkRestApi(parameters)
  }

  private cached(key: string, input: () => string): Promise<ParsedSpec> {
    const hit = this.byKey.get(key)
    if (hit) return hit
    this.parses++
    const text = input()
    // weighed by the text: a parsed, dereferenced spec and its operations take ~10 bytes a character
    return this.byKey.set(key, parseSpec(text), 10 * text.length)
  }

  private async spec(p: RestApiParameters, env: FactoryEnv): Promise<ParsedSpec | string> {
    if (p.specPath !== undefined) {
      const doc = await env.documents.read(p.specPath)
      if (!doc) return `the spec document '${p.specPath}' does not exist in project '${env.project}', the tenant layer or the bundled defaults`
      const scope = doc.source === 'bundled' ? '' : doc.source === 'tenant' ? env.tenant : `${env.tenant}#${env.project}`
      return this.cached(`${doc.source}|${scope}|${doc.path}|${doc.version}`, () => doc.body)
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
    if (typeof inline === 'string') return this.cached(`inline|${shortHash(inline)}|${inline.length}`, () => inline)
    return 'exactly one of specInline and specPath is required'
  }

  async create(config: ServerToolConfig<RestApiParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const p = config.parameters
    const report = (m: string) => env.problem(`${config.name}: ${m}`)
    const spec = await this.spec(p, env)
    if (typeof spec === 'string') {
      report(spec)
      return []
    }
    if (!spec.ok) {
      report(spec.message!)
      return []
    }
    for (const m of spec.problems) report(m)

    const baseTemplate = p.baseUrl ?? (spec.doc ? serverUrl(spec.doc) : undefined)
    if (!baseTemplate) {
      report('no baseUrl is configured and the document has no servers entry')
      return []
    }
    // the spec's servers entry is a document of its own, not seen when the configuration is written
    const hostSecrets = secretsBeforeUrlPath(baseTemplate)
    if (hostSecrets.length) {
      report(`the server URL cannot be used: ${secretInUrlHostMessage(hostSecrets)}`)
      return []
    }
    try {
      const probe = new URL(substituteSecrets(baseTemplate, new Map([...secretNamesIn(baseTemplate)].map((n) => [n, 'x']))))
      if (probe.protocol !== 'http:' && probe.protocol !== 'https:') throw new Error('scheme')
    } catch {
      report(`the server URL '${baseTemplate}' is not an absolute http(s) URL; set baseUrl`)
      return []
    }

    const include = (p.include ?? []).map(globToRegExp)
    const exclude = (p.exclude ?? []).map(globToRegExp)
    const labelOverrides = Object.entries(p.labelOverrides ?? {}).map(([g, labels]) => [globToRegExp(g), labels] as const)
    const deferredOverrides = Object.entries(p.deferredOverrides ?? {}).map(([g, d]) => [globToRegExp(g), d] as const)

    // names first: duplicates (after sanitizing) get a hash of method + path, and are reported
    const counts = new Map<string, number>()
    for (const op of spec.operations) counts.set(op.localName.toLowerCase(), (counts.get(op.localName.toLowerCase()) ?? 0) + 1)
    const named = spec.operations.map((op) => {
      let local = op.localName
      if ((counts.get(local.toLowerCase()) ?? 0) > 1) {
        local = `${local}_${shortHash(`${op.method} ${op.path}`)}`
        report(`operation name '${op.localName}' is used more than once; ${op.method} ${op.path} is published as '${local}'`)
      }
      const short = fitLocalName(config.name, local)
      return { op, local, short, candidates: [op.operationId, local, short] }
    })

    const secretNames = [...secretNamesIn([baseTemplate, p.auth ?? null, p.headers ?? {}])]
    const sensitiveHeaders = [
      ...Object.entries(p.headers ?? {})
        .filter(([, v]) => secretNamesIn(v).size > 0)
        .map(([k]) => k),
      ...(p.auth?.type === 'apiKey' && p.auth.in === 'header' ? [p.auth.name] : []),
    ]
    const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const maxBytes = p.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    const deps = this.deps

    const specs: ToolSpec[] = []
    for (const { op, local, short, candidates } of named) {
      if (include.length && !matchesAny(include, candidates)) continue
      if (exclude.length && matchesAny(exclude, candidates)) continue
      if (config.disabledSubTools.some((d) => candidates.includes(d))) continue
      const override = labelOverrides.find(([g]) => candidates.some((c) => g.test(c)))
      const deferred = deferredOverrides.find(([g]) => candidates.some((c) => g.test(c)))
      const toolName = `${config.name}__${short}`
      const inputSchema = op.inputSchema
      specs.push({
        localName: short,
        ...(short !== local ? { aliases: [local] } : {}),
        description: describeOperation(op),
        inputSchema,
        extraLabels: override ? ['rest', ...override[1].filter((l) => l !== 'rest')] : labelsForMethod(op.method),
        ...(op.summary ? { searchHint: op.summary } : {}),
        ...(deferred ? { deferred: deferred[1] } : {}),
        async invoke(params, ctx) {
          const issues = validateAgainst(inputSchema, params)
          if (issues.length) return toolError(`Invalid arguments for '${toolName}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
          const loaded = await secretsFor(deps.secrets, env.tenant, secretNames, toolName)
          if (!loaded.ok) return loaded.outcome
          const { values, scrubber } = loaded
          try {
            const base = substituteSecrets(baseTemplate, values).replace(/\/+$/, '')
            const url = new URL(base + renderPath(op, params))
            appendQuery(url, op, params)
            const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5' }
            for (const [k, v] of Object.entries(headerParams(op, params))) setHeader(headers, k, v)
            for (const [k, v] of Object.entries(p.headers ?? {})) setHeader(headers, k, substituteSecrets(v, values))
            applyAuth(p.auth, values, headers, url, scrubber)
            for (const [k, v] of Object.entries(headers)) {
              if (unsafeHeaderValue(v)) return scrubber.scrub(toolError(`Header '${k}' would contain a line break; the call was not made.`))
            }
            const body = renderRequestBody(op, params)
            if (body) setHeader(headers, 'content-type', body.contentType)
            return await performCall(
              deps.http,
              {
                tenant: env.tenant,
                tool: toolName,
                method: op.method,
                url: url.href,
                headers,
                ...(body ? { body: body.text } : {}),
                timeoutMs,
                maxBytes,
                sensitiveHeaders,
                ...(ctx?.signal ? { signal: ctx.signal } : {}),
              },
              scrubber,
            )
          } catch (e) {
            return scrubber.scrub(toolError(`Tool '${toolName}' could not build its request: ${(e as Error).message}`))
          }
        },
      })
    }
    return specs
  }
}

function applyAuth(
  auth: RestApiAuth | undefined,
  values: SecretValues,
  headers: Record<string, string>,
  url: URL,
  scrubber: { addDerived(name: string, text: string): void },
) {
  if (!auth || auth.type === 'none') return
  const sub = (s: string) => substituteSecrets(s, values)
  switch (auth.type) {
    case 'bearer':
      setHeader(headers, 'authorization', `Bearer ${sub(auth.token)}`)
      break
    case 'basic': {
      const encoded = Buffer.from(`${sub(auth.username)}:${sub(auth.password)}`, 'utf8').toString('base64')
      // the credential is derived from the secrets: it must not come back either
      for (const name of secretNamesIn([auth.username, auth.password])) scrubber.addDerived(name, encoded)
      setHeader(headers, 'authorization', `Basic ${encoded}`)
      break
    }
    case 'apiKey':
      if (auth.in === 'header') setHeader(headers, auth.name, sub(auth.value))
      else url.searchParams.set(auth.name, sub(auth.value))
      break
  }
}
