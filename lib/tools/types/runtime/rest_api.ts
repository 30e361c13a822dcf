/**
 * The expanding and calling half of `rest_api` (lib/tools/types/rest_api.ts holds its definition
 * and its caches of parsed specs): an OpenAPI document's operations as sub-tools, each a request
 * sent through rest's performCall.
 */

import { toolError } from '../../../calls/outcome'
import { argumentIssues } from '../../../config/argument-validation'
import { BudgetExceeded } from '../../../config/expansion-budget'
import { precompilePatterns } from '../../../config/patterns'
import type { ServerToolConfig } from '../../../config/server-tool'
import {
  type SecretValues,
  secretInUrlHostMessage,
  secretNamesIn,
  secretsBeforeUrlPath,
  substituteSecrets,
} from '../../../secrets/references'
import type { FactoryEnv, ToolSpec } from '../../contracts'
import { type OpenApiDocument, readOpenApiInSlices, serverUrl } from '../openapi/document'
import { fitLocalName, globToRegExp, matchesAny, shortHash } from '../openapi/names'
import { appendQuery, extractOperations, headerParams, type Operation, renderPath, renderRequestBody } from '../openapi/operations'
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, labelsForMethod, type RestDeps } from '../rest'
import type { RestApiAuth, RestApiParameters } from '../rest_api'
import { performCall, secretsFor, setHeader, unsafeHeaderValue } from './rest'

export interface ParsedSpec {
  ok: boolean
  message?: string
  doc?: OpenApiDocument
  operations: Operation[]
  problems: string[]
}

/** Reads a document and expands its operations; a document that expands too far is a listing problem, not a throw. */
export async function parseSpec(input: unknown): Promise<ParsedSpec> {
  const read = await readOpenApiInSlices(input)
  if (!read.ok) return { ok: false, message: read.message, operations: [], problems: [] }
  // the operations' schemas are checked synchronously: their patterns compiled first, one per turn, up to the pack's budget
  await precompilePatterns(read.doc)
  try {
    const { operations, problems } = await extractOperations(read.doc)
    return { ok: true, doc: read.doc, operations, problems }
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e
    return {
      ok: false,
      message: `the OpenAPI document expands too far: ${e.message} (see "Limits a tenant can rely on")`,
      operations: [],
      problems: [],
    }
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

/** The sub-tools of one `rest_api` configuration, from its parsed spec (or why there are none, as listing problems). */
export function restApiTools(
  config: ServerToolConfig<RestApiParameters>,
  env: FactoryEnv,
  spec: ParsedSpec | string,
  deps: RestDeps,
): ToolSpec[] {
  const p = config.parameters
  const report = (m: string) => env.problem(`${config.name}: ${m}`)
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
        const issues = argumentIssues(inputSchema, params)
        if (issues.length)
          return toolError(`Invalid arguments for '${toolName}': ${issues.map((i) => i.message).join('; ')}.`, { errors: issues })
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
