/**
 * Operations of an OpenAPI document, each with the tool input schema a model sees and the
 * mapping from tool arguments back to path, query, header parameters and the request body.
 */

import {
  BudgetExceeded,
  EXPANSION_LIMITS,
  ExpansionBudget,
  jsonBytes,
  WORK_BUDGETS,
  yieldToEventLoop,
} from '../../../config/expansion-budget'
import type { JsonSchema } from '../../../config/json-schema'
import { schemaProblem } from '../../../config/schema-interpreter'
import { formatCount } from '../../../runtime/count-format'
import { deref, inlineSchema, type OpenApiDocument, pointersWalked } from './document'
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

/** The budgets of one document's expansion (EXPANSION_LIMITS; tests pass smaller ones). */
export interface ExtractLimits {
  schemaNodes: number
  packNodes: number
  packTools: number
  schemaBytes: number
  packBytes: number
  operationSteps: number
  packSteps: number
  /** Pattern instructions over all operations (WORK_BUDGETS.packPatterns when absent). */
  packPatterns?: number
}

/** Problems kept per document; the rest are counted in one last problem. */
export const MAX_PROBLEMS = 100

/** What one extraction cost, in the units its budgets count. */
export interface ExtractWork {
  /** Nodes produced by schema inlining, every use of a shared node counted. */
  nodes: number
  /** Bytes of the operations' input schemas as rendered JSON. */
  bytes: number
  /** References followed (pointer segments) and parameters merged. */
  steps: number
  /** Turns given back to the event loop. */
  yields: number
  /** Distinct pointers walked (each use is charged to `steps`; the walk is done once per document). */
  walks?: number
  /** Instructions of the distinct patterns compiled for the operations' schemas. */
  patterns?: number
  /** Parameter entries really walked (each list once per document; every use is charged to `steps`). */
  parametersWalked?: number
}

/**
 * Extracts every operation (cookie parameters are not offered; non-JSON bodies other than forms
 * skip the operation). Expansion is budgeted in what it costs, not in what the document looks like
 * (issue 10 F1, issue 21 N2/N3): nodes produced, bytes the schema renders to, and references
 * followed and parameters merged — each use of a shared node, parameter list or path item
 * counted again. An operation over its own budget is left out with a problem; a document whose
 * operations together pass a pack budget throws BudgetExceeded (the caller makes the whole pack a
 * problem). The event loop gets a turn whenever a slice of work passes YIELD_EVERY units or
 * SLICE_MS milliseconds, and one operation's work is bounded by its own budgets, so no slice
 * holds it for long.
 */
export async function extractOperations(
  doc: OpenApiDocument,
  limits: ExtractLimits = EXPANSION_LIMITS,
  /** Filled with what the extraction cost, also when it throws. */
  work: ExtractWork = { nodes: 0, bytes: 0, steps: 0, yields: 0 },
): Promise<ExtractResult> {
  const operations: Operation[] = []
  const problems: string[] = []
  let dropped = 0
  const problem = (p: string) => (problems.length < MAX_PROBLEMS ? problems.push(p) : dropped++)
  const pack = new ExpansionBudget(limits.packNodes, 'the expanded schemas of all operations (nodes)')
  const packBytes = new ExpansionBudget(limits.packBytes, 'the expanded schemas of all operations (bytes)')
  const packSteps = new ExpansionBudget(limits.packSteps, 'the references followed and parameters merged for all operations')
  const tools = new ExpansionBudget(limits.packTools, 'the number of operations')
  const patterns = {
    budget: new ExpansionBudget(limits.packPatterns ?? WORK_BUDGETS.packPatterns.limit, 'the patterns of all operations (instructions)'),
    charged: new Set<string>(),
  }
  let sinceYield = 0
  let sliceStart = performance.now()
  // units bound a slice's work; the clock bounds it on a machine slower than the units assume
  const slice = async (units: number) => {
    sinceYield += units
    if (sinceYield > YIELD_EVERY || performance.now() - sliceStart > SLICE_MS) {
      sinceYield = 0
      work.yields++
      await yieldToEventLoop()
      sliceStart = performance.now()
    }
  }
  try {
    for (const [path, rawItem] of Object.entries<any>(doc.paths ?? {})) {
      const itemProblems: string[] = []
      const itemSteps = packSteps.child(limits.operationSteps, 'the references followed for the path item')
      let item: any
      try {
        item = deref<any>(doc, rawItem, itemProblems, itemSteps)
      } catch (e) {
        if (!(e instanceof BudgetExceeded) || packSteps.used > packSteps.limit) throw e
        itemProblems.push(`${e.message}; the path was left out`)
      }
      for (const p of itemProblems) problem(`${path.slice(0, 200)}: ${p}`)
      await slice(itemSteps.used + 1)
      if (!item || typeof item !== 'object') continue
      for (const m of OPENAPI_METHODS) {
        const op = item[m]
        if (!op || typeof op !== 'object') continue
        tools.spend()
        const method = m.toUpperCase()
        const opProblems: string[] = []
        const label = typeof op.operationId === 'string' ? op.operationId.slice(0, 200) : `${method} ${path.slice(0, 200)}`
        const budget = pack.child(limits.schemaNodes, 'its expanded input schema (nodes)')
        const steps = packSteps.child(limits.operationSteps, 'its references followed and parameters merged')
        const bytes = packBytes.child(limits.schemaBytes, 'its expanded input schema (bytes)')
        let built: Operation | undefined
        try {
          // path-level parameters, then the operation's own (walked in slices, before the build)
          const lists: WalkedParameters[] = []
          for (const list of [item.parameters, op.parameters])
            if (Array.isArray(list)) lists.push(await walkParameters(doc, list, steps.limit, slice))
          built = buildOperation(doc, path, method, op, lists, opProblems, budget, steps)
          // what the schema renders to, every use of a shared node counted; the walk stops at the limit
          if (built) bytes.spend(jsonBytes(built.inputSchema, limits.schemaBytes))
        } catch (e) {
          // the pack's own budgets are the caller's to report; one operation's is this operation's
          if (
            !(e instanceof BudgetExceeded) ||
            pack.used > pack.limit ||
            packBytes.used > packBytes.limit ||
            packSteps.used > packSteps.limit
          )
            throw e
          built = undefined
          opProblems.push(`${e.message}; the operation was left out`)
        }
        // a pattern RE2 cannot run (or another unusable keyword) leaves the operation out, at listing, not at call time
        const unusable = built && schemaProblem(built.inputSchema, patterns)
        if (unusable) {
          opProblems.push(`its input schema cannot be used: ${unusable.message} (at ${unusable.pointer}); the operation was left out`)
          built = undefined
        }
        for (const p of opProblems) problem(`${label}: ${p}`)
        if (built) operations.push(built)
        await slice(budget.used + steps.used + 1)
      }
    }
  } finally {
    Object.assign(work, {
      nodes: pack.used,
      bytes: packBytes.used,
      steps: packSteps.used,
      walks: pointersWalked(doc),
      parametersWalked: parametersWalked.get(doc) ?? 0,
      patterns: patterns.budget.used,
    })
  }
  if (dropped) problems.push(`and ${formatCount(dropped)} more problems`)
  return { operations, problems }
}

/** Units (nodes, steps) of work between two turns of the event loop (a slice then costs a few ms). */
const YIELD_EVERY = 2_000
/** Milliseconds of expansion between two turns of the event loop, whatever the units say. */
const SLICE_MS = 2

/** A parameter list as one walk of it found it: its entries by location and name, what the walk cost, what it found wrong. */
interface WalkedParameters {
  entries: [string, any][]
  /** Steps the walk was charged: one per entry and per pointer segment followed; over `limit` when it stopped there. */
  steps: number
  problems: string[]
  limit: number
}

const walkedLists = new WeakMap<object, WeakMap<object, WalkedParameters>>()
const parametersWalked = new WeakMap<object, number>()

/**
 * Walks a parameter list once per document (lists are never changed once read), stopping past
 * `limit` steps — what one operation may spend — so a list no operation can afford is walked up to
 * its budget once, then refused on its charge alone at every use. It hands the event loop a turn
 * (`between`, charged the steps since the last) every WALK_ENTRIES entries: a shared list of
 * thousands of `$ref`s walked whole held the event loop ~5 ms at once (issue 21 N3).
 */
async function walkParameters(
  doc: OpenApiDocument,
  list: unknown[],
  limit: number,
  between: (units: number) => Promise<void>,
): Promise<WalkedParameters> {
  let lists = walkedLists.get(doc)
  if (!lists) walkedLists.set(doc, (lists = new WeakMap()))
  const known = lists.get(list)
  if (known && known.limit === limit) return known
  const steps = new ExpansionBudget(limit, 'the parameter list')
  const walked: WalkedParameters = { entries: [], steps: 0, problems: [], limit }
  let charged = 0
  try {
    // walked in place, not copied: a shared list of 20,000 stops at the step budget, not after a copy
    for (let i = 0; i < list.length; i++) {
      steps.spend()
      parametersWalked.set(doc, (parametersWalked.get(doc) ?? 0) + 1)
      const p = deref<any>(doc, list[i], walked.problems, steps)
      if (p && typeof p.name === 'string' && typeof p.in === 'string') walked.entries.push([`${p.in}\u0000${p.name}`, p])
      if ((i + 1) % WALK_ENTRIES === 0) {
        await between(steps.used - charged)
        charged = steps.used
      }
    }
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e
  }
  walked.steps = steps.used
  lists.set(list, walked)
  return walked
}

/** Entries of a parameter list walked between two chances to yield (each entry a few µs: a pointer followed per `$ref`). */
const WALK_ENTRIES = 200

function buildOperation(
  doc: OpenApiDocument,
  path: string,
  method: string,
  op: any,
  parameterLists: WalkedParameters[],
  problems: string[],
  budget: ExpansionBudget,
  steps: ExpansionBudget,
): Operation | undefined {
  const hasId = typeof op.operationId === 'string' && op.operationId.trim() !== ''
  const operationId = hasId ? op.operationId.trim() : derivedOperationId(method, path)
  const localName = sanitizeLocalName(operationId) || sanitizeLocalName(derivedOperationId(method, path))

  // path-level parameters, overridden by operation-level ones with the same name and location;
  // each entry is charged, the ones a shared path item brings along included (issue 21 N3), but a
  // list is walked once per document: every later use is charged the same steps without the walk
  const merged = new Map<string, any>()
  for (const walked of parameterLists) {
    problems.push(...walked.problems)
    steps.spendAll(walked.steps)
    for (const [key, p] of walked.entries) merged.set(key, p)
  }

  const properties: Record<string, JsonSchema> = {}
  const required: string[] = []
  const bindings: ParameterBinding[] = []
  const taken = new Set<string>()
  const argFor = (name: string, location: string) => {
    const safe = name.replace(/[^A-Za-z0-9_.-]/g, '_')
    let arg = safe.slice(0, 64) || location
    if (taken.has(arg)) arg = `${location}_${arg}`.slice(0, 64)
    let n = 2
    while (taken.has(arg)) {
      steps.spend()
      arg = `${location}_${safe}_${n++}`.slice(0, 64)
    }
    taken.add(arg)
    return arg
  }

  // path parameters first: they are the identity of the call
  const params = [...merged.values()].sort((a, b) => (a.in === 'path' ? 0 : 1) - (b.in === 'path' ? 0 : 1))
  for (const p of params) {
    steps.spend()
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
    if (p.schema !== undefined) schema = inlineSchema(doc, p.schema, problems, { budget, steps })
    else if (p.content && typeof p.content === 'object') {
      const [, media] = Object.entries<any>(p.content)[0] ?? []
      if (media?.schema !== undefined) schema = inlineSchema(doc, media.schema, problems, { budget, steps })
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
  const declared = new Set(bindings.filter((b) => b.in === 'path').map((b) => b.name))
  // matched lazily, so a path of 30,000 variables stops at the step budget
  for (const [, bare] of path.matchAll(/\{([^}]+)\}/g)) {
    steps.spend()
    if (!declared.has(bare)) {
      declared.add(bare)
      // an undeclared template variable: still callable, as a required string
      const arg = argFor(bare, 'path')
      properties[arg] = { type: 'string', description: `path parameter ${bare} (not declared by the API document)` }
      required.push(arg)
      bindings.push({ arg, name: bare, in: 'path', required: true })
    }
  }

  let body: BodyBinding | undefined
  if (op.requestBody !== undefined) {
    const rb = deref<any>(doc, op.requestBody, problems, steps)
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
        content[mediaType]?.schema !== undefined
          ? inlineSchema(doc, content[mediaType].schema, problems, { drop: 'readOnly', budget, steps })
          : {}
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
