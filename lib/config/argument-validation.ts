/**
 * Where a tool call's arguments are validated against its input schema (lib/tools/dispatcher.ts).
 * A tenant writes both the schema (a client tool, an OpenAPI operation, a REST tool) and the call,
 * so one validation may cost its whole budget (WORK_BUDGETS.schemaValidation, 20,000 steps:
 * 1.1–2.8 ms), and a flood of such calls held the shared thread that long once per call: the
 * other tenants' requests waited behind each (issue 21 N8; the victim's p99 under a recursive
 * `anyOf` flood fell from ~5 ms over a plain flood's to ~1.5 ms with a 10,000-step budget, to
 * ~1 ms with 5,000, docs/decisions.md).
 *
 * So a validation runs its first `schemaValidationSlice` steps here, where nearly every call ends
 * (a call's own arguments are a few dozen steps); one that needs more is run again, whole, in a
 * worker (lib/config/yaml-pool.ts: fair places per tenant, a deadline and a heap cap), when its
 * schema and value are cheap to copy there (`validationHandoffNodes`, `validationHandoffBytes`:
 * the copy costs the shared thread ~0.1 µs a node and ~0.3 µs per 100 bytes of text, so at most
 * about what the slice did). That is the costly class: a small value a schema makes expensive (a
 * recursive `anyOf`, many branches). A larger value stays here, budgeted as before: its steps
 * grow with its nodes, which its body's sliced parse already paid for. Either way the answer is
 * the same interpreter's, with the same budget.
 */
import type { ErrorObject } from 'ajv'
import type { Issue } from '../errors'
import { type CallSignal, signalOf } from '../runtime/deferred-signal'
import { countNodes, jsonBytes, WORK_BUDGETS } from './expansion-budget'
import { compile, issuesFromAjv, type JsonSchema, validateAgainst } from './json-schema'

/** What a worker's validation found (the interpreter's result, as plain data). */
export interface ValidationAnswer {
  valid: boolean
  errors: ErrorObject[] | null
  steps: number
}

/**
 * Validations run in a worker (lib/config/yaml-pool.ts). Undefined when the tenant has no place
 * and none to wait in: the caller validates where it is, as before there were workers, rather
 * than refuse a call it can answer (20 parallel calls of one tenant were 11 "busy" errors).
 */
export interface ValidationWorkers {
  validate(schema: JsonSchema, value: unknown, at: { tenant: string; signal?: AbortSignal }): Promise<ValidationAnswer | undefined>
}

/**
 * Whose call it is, and its signal asked for only when a validation waits for a worker: a call's
 * signal is made when something first asks for it (lib/runtime/deferred-signal.ts).
 */
export interface ValidationCall {
  tenant: string
  signal?: CallSignal
}

export interface ArgumentValidation {
  /** The issues of `value` against `schema` (none: valid). Throws SchemaUnusable for a schema that cannot be used. */
  validate(schema: JsonSchema, value: unknown, call: ValidationCall): Promise<Issue[]>
}

/**
 * Arguments found valid against a schema, by the very objects: a tool that checks its arguments
 * again before it runs (a script, a REST call: nothing reaches them unvalidated) does not pay the
 * validation twice on the shared thread — after a handed-over validation, the whole of it.
 */
const validArguments = new WeakMap<object, JsonSchema>()

const found = (schema: JsonSchema, value: unknown, issues: Issue[]): Issue[] => {
  if (issues.length === 0 && value !== null && typeof value === 'object') validArguments.set(value, schema)
  return issues
}

/** The issues of `value` against `schema`: none at once when these arguments were found valid against this schema already. */
export function argumentIssues(schema: JsonSchema, value: unknown): Issue[] {
  if (value !== null && typeof value === 'object' && validArguments.get(value) === schema) return []
  return found(schema, value, validateAgainst(schema, value))
}

/** Every validation whole on the calling thread (tests; a dispatcher built without workers). */
export const INLINE_VALIDATION: ArgumentValidation = {
  validate: async (schema, value) => argumentIssues(schema, value),
}

export interface ArgumentValidationStats {
  /** Validations that ended within their first slice, here. */
  inSlice: number
  /** Validations handed to a worker after their first slice. */
  offThread: number
  /** Validations run whole here after their first slice: schema and value over the handoff size. */
  wholeHere: number
  /** Validations run whole here after their first slice: the tenant's worker places and queue were full. */
  noPlace: number
}

export function offThreadValidation(workers: () => Promise<ValidationWorkers>): ArgumentValidation & { stats(): ArgumentValidationStats } {
  const counts: ArgumentValidationStats = { inSlice: 0, offThread: 0, wholeHere: 0, noPlace: 0 }
  const slice = WORK_BUDGETS.schemaValidationSlice.limit
  const handoffBytes = WORK_BUDGETS.validationHandoffBytes.limit
  const handoffNodes = WORK_BUDGETS.validationHandoffNodes.limit
  // what copying to a worker costs the main thread: ~0.1 µs a node (objects), ~0.3 µs per 100 bytes of text
  const cheapToCopy = (schema: JsonSchema, value: unknown) => {
    const nodes = countNodes(schema, handoffNodes)
    if (nodes + countNodes(value, handoffNodes - nodes) > handoffNodes) return false
    const bytes = jsonBytes(schema, handoffBytes)
    return bytes + jsonBytes(value, handoffBytes - bytes) <= handoffBytes
  }
  return {
    async validate(schema, value, call) {
      const fn = compile(schema)
      // over its slice (or the depth limit, which the whole run meets again): run again whole
      if (fn(value, slice) || !fn.overBudget) {
        counts.inSlice++
        return found(schema, value, fn.errors ? issuesFromAjv(fn.errors, value, '', schema) : [])
      }
      const whole = () => found(schema, value, fn(value) ? [] : issuesFromAjv(fn.errors ?? [], value, '', schema))
      if (!cheapToCopy(schema, value)) {
        counts.wholeHere++
        return whole()
      }
      const answer = await (await workers()).validate(schema, value, { tenant: call.tenant, signal: signalOf(call.signal) })
      if (!answer) {
        counts.noPlace++
        return whole()
      }
      counts.offThread++
      return found(schema, value, answer.valid ? [] : issuesFromAjv(answer.errors ?? [], value, '', schema))
    },
    stats: () => ({ ...counts }),
  }
}
