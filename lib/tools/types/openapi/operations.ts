/**
 * Operations of an OpenAPI document, each with the tool input schema a model sees and the
 * mapping from tool arguments back to path, query, header parameters and the request body.
 */

import { BudgetExceeded, EXPANSION_LIMITS, ExpansionBudget, yieldToEventLoop } from '../../../config/expansion-budget'
import type { JsonSchema } from '../../../config/json-schema'
import { schemaProblem } from '../../../config/schema-interpreter'
import { deref, inlineSchema, type OpenApiDocument } from './document'
import { derivedOperationId, sanitizeLocalName } from './names'

export const OPENAPI_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

export interface ParameterBinding {
  /** Property name in the tool's input schema. */
  arg: string
  /** Name in the HTTP request. */
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  style?: string
  explode?: boolean
  /** The parameter uses `content` (e.g. JSON-encoded) rather than a schema. */
  json?: boolean
}

export interface BodyBinding {
  arg: string
  mediaType: string
  required: boolean
}

export interface Operation {
  /** As written in the document, or derived from method + path when absent. */
  operationId: string
  derivedId: boolean
  /** operationId made into a tool name part (`.` and other characters → `_`), before shortening. */
  localName: string
  method: string // upper case
  path: string
  summary?: string
  description?: string
  deprecated: boolean
  inputSchema: JsonSchema
  parameters: ParameterBinding[]
  body?: BodyBinding
}

export interface ExtractResult {
  operations: Operation[]
  /** Operations left out or degraded, one sentence each. */
  problems: string[]
}

const ARG_NAME = /^[A-Za-z0-9_.-]{1,64}$/
const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json$/i
const FORM_MEDIA = 'application/x-www-form-urlencoded'

/**
 * Extracts every operation (cookie parameters are not offered; non-JSON bodies other than forms
 * skip the operation). Expansion is budgeted (issue 10 F1): an operation whose schemas pass
 * `schemaNodes` is left out with a problem; a document whose operations together pass `packNodes`
 * or `packTools` throws BudgetExceeded (the caller makes the whole pack a problem). Between
 * operations the event loop gets a turn, so one large document never holds it for long.
 */
export async function extractOperations(
  doc: OpenApiDocument,
  limits: { schemaNodes: number; packNodes: number; packTools: number } = EXPANSION_LIMITS,
): Promise<ExtractResult> {
  const operations: Operation[] = []
  const problems: string[] = []
  const pack = new ExpansionBudget(limits.packNodes, 'the expanded schemas of all operations (nodes)')
  const tools = new ExpansionBudget(limits.packTools, 'the number of operations')
  let sinceYield = 0
  for (const [path, rawItem] of Object.entries<any>(doc.paths ?? {})) {
    const item = deref<any>(doc, rawItem, problems)
    if (!item || typeof item !== 'object') continue
    for (const m of OPENAPI_METHODS) {
      const op = item[m]
      if (!op || typeof op !== 'object') continue
      tools.spend()
      const method = m.toUpperCase()
      const opProblems: string[] = []
      const label = typeof op.operationId === 'string' ? op.operationId : `${method} ${path}`
      const budget = pack.child(limits.schemaNodes, 'its expanded input schema (nodes)')
      let built: Operation | undefined
      try {
        built = buildOperation(doc, path, method, item, op, opProblems, budget)
      } catch (e) {
        // the pack's own budget is the caller's to report; one operation's is this operation's
        if (!(e instanceof BudgetExceeded) || pack.used > pack.limit) throw e
        opProblems.push(`${e.message}; the operation was left out`)
      }
      // a pattern RE2 cannot run (or another unusable keyword) leaves the operation out, at listing, not at call time
      const unusable = built && schemaProblem(built.inputSchema)
      if (unusable) {
        opProblems.push(`its input schema cannot be used: ${unusable.message} (at ${unusable.pointer}); the operation was left out`)
        built = undefined
      }
      for (const p of opProblems) problems.push(`${label}: ${p}`)
      if (built) operations.push(built)
      sinceYield += budget.used + 1
      if (sinceYield > YIELD_EVERY_NODES) {
        sinceYield = 0
        await yieldToEventLoop()
      }
    }
  }
  return { operations, problems }
}

/** Nodes expanded between two turns of the event loop (a slice then costs a few ms). */
const YIELD_EVERY_NODES = 2_000

function buildOperation(
  doc: OpenApiDocument,
  path: string,
  method: string,
  item: any,
  op: any,
  problems: string[],
  budget: ExpansionBudget,
): Operation | undefined {
  const hasId = typeof op.operationId === 'string' && op.operationId.trim() !== ''
  const operationId = hasId ? op.operationId.trim() : derivedOperationId(method, path)
  const localName = sanitizeLocalName(operationId) || sanitizeLocalName(derivedOperationId(method, path))

  // path-level parameters, overridden by operation-level ones with the same name and location
  const merged = new Map<string, any>()
  for (const raw of [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    const p = deref<any>(doc, raw, problems)
    if (!p || typeof p.name !== 'string' || typeof p.in !== 'string') continue
    merged.set(`${p.in}\u0000${p.name}`, p)
  }

  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  const bindings: ParameterBinding[] = []
  const taken = new Set<string>()
  const argFor = (name: string, location: string) => {
    let arg = name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || location
    if (taken.has(arg)) arg = `${location}_${arg}`.slice(0, 64)
    let n = 2
    while (taken.has(arg)) arg = `${location}_${name.replace(/[^A-Za-z0-9_.-]/g, '_')}_${n++}`.slice(0, 64)
    taken.add(arg)
    return arg
  }

  // path parameters first: they are the identity of the call
  const params = [...merged.values()].sort((a, b) => (a.in === 'path' ? 0 : 1) - (b.in === 'path' ? 0 : 1))
  for (const p of params) {
    if (p.in === 'cookie') continue
    if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') {
      problems.push(`parameter '${p.name}' has unknown location '${p.in}' and was left out`)
      continue
    }
    if (p.in === 'header' && ['accept', 'content-type', 'authorization'].includes(p.name.toLowerCase())) continue // set by the tool
    if (p.in === 'path' && !path.includes(`{${p.name}}`)) {
      problems.push(`path parameter '${p.name}' does not appear in ${path}`)
      continue
    }
    let schema: JsonSchema = {}
    let json = false
    if (p.schema !== undefined) schema = inlineSchema(doc, p.schema, problems, { budget })
    else if (p.content && typeof p.content === 'object') {
      const [, media] = Object.entries<any>(p.content)[0] ?? []
      if (media?.schema !== undefined) schema = inlineSchema(doc, media.schema, problems, { budget })
      json = true
    }
    const description = [p.description, p.in === 'path' ? undefined : `(${p.in} parameter${p.in === 'header' ? ` ${p.name}` : ''})`]
      .filter(Boolean)
      .join(' ')
    const arg = argFor(p.name, p.in)
    properties[arg] = description && typeof schema === 'object' ? { ...schema, description: schema.description ?? description } : schema
    const isRequired = p.in === 'path' || p.required === true
    if (isRequired) required.push(arg)
    bindings.push({
      arg,
      name: p.name,
      in: p.in,
      required: isRequired,
      ...(typeof p.style === 'string' ? { style: p.style } : {}),
      ...(typeof p.explode === 'boolean' ? { explode: p.explode } : {}),
      ...(json ? { json } : {}),
    })
  }
  for (const name of path.match(/\{([^}]+)\}/g) ?? []) {
    const bare = name.slice(1, -1)
    if (!bindings.some((b) => b.in === 'path' && b.name === bare)) {
      // an undeclared template variable: still callable, as a required string
      const arg = argFor(bare, 'path')
      properties[arg] = { type: 'string', description: `path parameter ${bare} (not declared by the API document)` }
      required.push(arg)
      bindings.push({ arg, name: bare, in: 'path', required: true })
    }
  }

  let body: BodyBinding | undefined
  if (op.requestBody !== undefined) {
    const rb = deref<any>(doc, op.requestBody, problems)
    const content = rb?.content && typeof rb.content === 'object' ? (rb.content as Record<string, any>) : {}
    const types = Object.keys(content)
    const mediaType =
      types.find((t) => JSON_MEDIA.test(t)) ??
      types.find((t) => t.toLowerCase() === FORM_MEDIA) ??
      (types.includes('*/*') ? '*/*' : undefined)
    if (!mediaType) {
      if (types.length) {
        problems.push(
          `request body media type${types.length > 1 ? 's' : ''} ${types.join(', ')} ${types.length > 1 ? 'are' : 'is'} not supported (JSON and forms are); the operation was left out`,
        )
        return undefined
      }
    } else {
      const arg = taken.has('body') ? argFor('requestBody', 'body') : argFor('body', 'body')
      const schema =
        content[mediaType]?.schema !== undefined ? inlineSchema(doc, content[mediaType].schema, problems, { drop: 'readOnly', budget }) : {}
      const description = typeof rb.description === 'string' ? rb.description : 'Request body'
      properties[arg] = { ...schema, description: schema.description ?? description }
      const isRequired = rb.required === true
      if (isRequired) required.push(arg)
      body = { arg, mediaType: mediaType === '*/*' ? 'application/json' : mediaType, required: isRequired }
    }
  }

  for (const arg of Object.keys(properties)) if (!ARG_NAME.test(arg)) problems.push(`argument name '${arg}' is unusual`)
  const inputSchema: JsonSchema = { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }
  return {
    operationId,
    derivedId: !hasId,
    localName,
    method,
    path,
    ...(typeof op.summary === 'string' && op.summary.trim() ? { summary: op.summary.trim() } : {}),
    ...(typeof op.description === 'string' && op.description.trim() ? { description: op.description.trim() } : {}),
    deprecated: op.deprecated === true,
    inputSchema,
    parameters: bindings,
    ...(body ? { body } : {}),
  }
}

// ───────────── building a request from arguments ─────────────

const scalar = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v))

/** Path with its `{name}` variables replaced (simple style, percent-encoded). */
export function renderPath(op: Operation, args: Record<string, unknown>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const b = op.parameters.find((p) => p.in === 'path' && p.name === name)
    const v = b ? args[b.arg] : undefined
    if (Array.isArray(v)) return v.map((x) => encodeURIComponent(scalar(x))).join(',')
    if (v && typeof v === 'object') {
      if (b?.json) return encodeURIComponent(JSON.stringify(v))
      const explode = b?.explode === true
      return Object.entries(v)
        .map(([k, x]) =>
          explode
            ? `${encodeURIComponent(k)}=${encodeURIComponent(scalar(x))}`
            : `${encodeURIComponent(k)},${encodeURIComponent(scalar(x))}`,
        )
        .join(',')
    }
    return encodeURIComponent(scalar(v))
  })
}

/** Appends query parameters per their style: form (explode by default), spaceDelimited, pipeDelimited, deepObject, or JSON content. */
export function appendQuery(url: URL, op: Operation, args: Record<string, unknown>) {
  for (const b of op.parameters) {
    if (b.in !== 'query') continue
    const v = args[b.arg]
    if (v === undefined || v === null) continue
    if (b.json) {
      url.searchParams.append(b.name, JSON.stringify(v))
      continue
    }
    const style = b.style ?? 'form'
    const explode = b.explode ?? style === 'form'
    if (Array.isArray(v)) {
      if (explode && style === 'form') for (const x of v) url.searchParams.append(b.name, scalar(x))
      else url.searchParams.append(b.name, v.map(scalar).join(style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ','))
    } else if (typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>)
      if (style === 'deepObject') for (const [k, x] of entries) url.searchParams.append(`${b.name}[${k}]`, scalar(x))
      else if (explode) for (const [k, x] of entries) url.searchParams.append(k, scalar(x))
      else url.searchParams.append(b.name, entries.flatMap(([k, x]) => [k, scalar(x)]).join(','))
    } else url.searchParams.append(b.name, scalar(v))
  }
}

export function headerParams(op: Operation, args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const b of op.parameters) {
    if (b.in !== 'header') continue
    const v = args[b.arg]
    if (v === undefined || v === null) continue
    out[b.name] = b.json ? JSON.stringify(v) : Array.isArray(v) ? v.map(scalar).join(',') : scalar(v)
  }
  return out
}

/** The request body as text, or undefined when there is none. */
export function renderRequestBody(op: Operation, args: Record<string, unknown>): { text: string; contentType: string } | undefined {
  if (!op.body) return undefined
  const v = args[op.body.arg]
  if (v === undefined) return undefined
  if (op.body.mediaType.toLowerCase() === FORM_MEDIA) {
    const form = new URLSearchParams()
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (Array.isArray(x)) for (const item of x) form.append(k, scalar(item))
        else if (x !== undefined) form.append(k, scalar(x))
      }
    }
    return { text: form.toString(), contentType: FORM_MEDIA }
  }
  return { text: JSON.stringify(v), contentType: op.body.mediaType }
}
