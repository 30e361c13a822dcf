/**
 * The one place that names every piece of CPU work a tenant's input can drive, with its budget
 * (issue 21 build item 1; issue 10 F1 before it). Depth and size limits alone do not bound work:
 * nine schemas of nine properties that each `$ref` the next are 3.9 KB of OpenAPI and 43 million
 * leaves once inlined; a 1.3 KB schema with `pattern: "^(a+)+$"` cost 4.6 s per call. So every
 * work item counts what it *produces or does* — nodes produced (each use of a shared node
 * counted), bytes rendered, references followed, steps taken — and stops when the count passes
 * its limit, long before the work is noticeable. Over budget is an ordinary problem of that
 * input (a 4xx naming the limit, a listing `problem`, a tool error on call), never a stall.
 *
 * docs/reference/limits.md lists these numbers for tenants; a test checks that every entry here
 * is listed there with its number.
 */
import { formatCount } from '../runtime/count-format'
import { nextTurn } from '../runtime/turns'

/** One work item: its limit, the unit it counts and where the count is taken. */
export interface WorkBudget {
  readonly limit: number
  /** What one unit is — always output or work done, never the shape of the input alone. */
  readonly counts: string
  /** What the tenant sees when it is spent. */
  readonly refusal: string
}

/**
 * Every budget a tenant's input can hit. Code charges against an entry by name
 * (`budgetFor('schemaValidation')` or `WORK_BUDGETS.x.limit`), so a number lives here only.
 */
export const WORK_BUDGETS = {
  yamlBytes: {
    limit: 64 * 1024,
    counts: 'characters of YAML text handed to the parser (JSON of any size up to 1 MiB is parsed natively instead)',
    refusal: '400 (bodies) / 422 (documents) saying to send JSON',
  },
  yamlDepth: {
    limit: 100,
    counts:
      "nesting levels of JSON (a linear bracket scan) or YAML (counted on the `yaml` package's own lexer tokens, so quoting and continuation lines read as the parser reads them), before any parser runs",
    refusal: '400 / 422 with line and column',
  },
  yamlNodes: {
    limit: 100_000,
    counts:
      'units of the parsed data: one per node plus one per 16 characters of a string or key, every use of an anchor (alias) counted again with all it holds',
    refusal: '400 / 422 naming the limit',
  },
  // Texts over a few KiB are parsed in a worker thread (lib/config/yaml-parsing.ts): these bound
  // what one parse may hold there, so no parse holds a worker (or its memory) without end.
  yamlParseMs: {
    limit: 10_000,
    counts:
      'milliseconds (wall clock) one parse of a text over 2 KiB may hold a parse worker (the worst 64 KiB layouts measured: 180–350 ms of CPU, over 3 s of wall clock on the 2-core test machine under load 17); the worker is terminated at the deadline and replaced',
    refusal: '400 (bodies) / 422 (documents) naming the limit',
  },
  yamlParseHeap: {
    limit: 128,
    counts: 'MiB of heap (V8 old generation) of a parse worker while it parses one text; the worker dies at the cap and is replaced',
    refusal: '400 (bodies) / 422 (documents) naming the limit',
  },
  // A large JSON text is not one native parse: one JSON.parse of 1 MiB holds the shared thread
  // ~10 ms (issue 21 N5, N8). These bound each stretch of it (lib/config/json-slices.ts).
  jsonParseChunk: {
    limit: 16 * 1024,
    counts:
      'characters of JSON structure one native JSON.parse reads: a body, stored document or spec longer than this is scanned once (the depth counted) and its large containers parsed a run of members at a time (a single string or number longer than this is parsed whole)',
    refusal: 'nothing is refused: the text is parsed in pieces, its value exactly the one JSON.parse gives',
  },
  jsonParseSlice: {
    limit: 64 * 1024,
    counts: 'characters of JSON scanned between two turns given back to the event loop, a character parsed counting 4',
    refusal: 'nothing is refused: the parse pauses, and other requests run',
  },
  // An answer of megabytes was one JSON.stringify and one socket write (issue 21 D2, D3): 1 MiB
  // of tool descriptions held the shared thread ~5 ms at once. This bounds each stretch of it.
  jsonRenderSlice: {
    limit: 64 * 1024,
    counts:
      'characters of a JSON answer rendered and written between two turns given back to the event loop (answers longer than this are streamed: lib/config/json-render.ts)',
    refusal: 'nothing is refused: the answer is written in pieces, its bytes exactly those of one JSON.stringify',
  },
  schemaNodes: {
    limit: 2_000,
    counts: "nodes of one tool's input or output schema after `$ref`s are inlined (compile work is linear in them)",
    refusal: 'OpenAPI operation / MCP tool left out with a problem; `outputSchema` 422 at write; client tool refused',
  },
  packNodes: {
    limit: 100_000,
    counts: 'schema nodes over all the tools of one pack (an OpenAPI document, an MCP catalog), each inlined copy counted',
    refusal: 'the pack is a listing problem; its calls are tool errors naming the budget',
  },
  packTools: {
    limit: 1_000,
    counts: 'sub-tools of one pack (OpenAPI operations, remote MCP tools)',
    refusal: 'the pack is a listing problem',
  },
  schemaValidation: {
    limit: 20_000,
    counts:
      'steps of one validation of a value against a schema: one per keyword visit, per value node compared (enum, const) or hashed (uniqueItems: one pass, equal hashes compared node by node), per object key examined, per error, per 32 characters measured, per 8 characters format-checked; a pattern match costs characters × (program instructions + 64) / 256',
    refusal: "the call's arguments (or the tool's output) are refused as too costly to validate, naming this budget",
  },
  // 20,000 steps held the shared thread 1.1–2.8 ms at once, once per call of a flood (issue 21 N8):
  // a call's validation runs this many steps there, and the rest of it in a worker
  // (lib/config/argument-validation.ts)
  schemaValidationSlice: {
    limit: 2_000,
    counts:
      "steps of a tool call's argument validation run on the thread that serves requests; one that needs more is run again, whole, in a worker",
    refusal: 'nothing is refused: the validation goes on in a worker, within the same schemaValidation budget',
  },
  // copying to a worker costs the shared thread ~0.1 µs a node (2,000: about what the slice costs)
  validationHandoffNodes: {
    limit: 2_000,
    counts:
      'nodes of the schema and the arguments of a validation handed to a worker together; larger ones are validated whole where the call is served, within schemaValidation',
    refusal: 'nothing is refused',
  },
  validationHandoffBytes: {
    limit: 64 * 1024,
    counts:
      'bytes (as rendered JSON) of the schema and the arguments of a validation handed to a worker together; larger ones are validated whole where the call is served, within schemaValidation',
    refusal: 'nothing is refused',
  },
  schemaDepth: {
    limit: 256,
    counts: 'nested schema visits in one validation (a `$ref` cycle nests without consuming the value)',
    refusal: 'as schemaValidation',
  },
  patternProgram: {
    limit: 512,
    counts:
      'instructions of one compiled `pattern` / `patternProperties` key (RE2 semantics, linear-time matching; `^[a-z]{1,120}$` is 243, the model-name pattern of the catalog 390); compiling costs about linearly in the instructions (the quadratic one-pass analysis of re2js is skipped: lib/config/patterns.ts)',
    refusal: '422 at write naming the pattern and the position; a remote schema with one: that tool is a problem',
  },
  schemaPatterns: {
    limit: 4_096,
    counts: 'instructions of all the distinct patterns of one schema together',
    refusal: 'as patternProgram',
  },
  // Each schema's patterns are bounded, but a pack has up to 1,000 schemas: 2,400 distinct patterns
  // of 246 instructions in a 261 KB spec took 3.8 CPU s to compile per expansion.
  packPatterns: {
    limit: 16_384,
    counts:
      "instructions of all the distinct patterns of one OpenAPI document's operations, or of one process's client tools, together, charged as each is compiled",
    refusal:
      'the pack is a listing problem (its calls are tool errors naming the budget); client tools: 400 at spawn / PUT naming the budget',
  },
  promptChars: {
    limit: 1_000_000,
    counts: 'characters of a rendered prompt (`prompt_template` prefix with its inputs filled in), added up before it is built',
    refusal: 'tool error',
  },
  // Nodes alone miss what sharing costs: one `required` list or description referenced from many
  // places is one object in memory and a copy in every rendering (issue 21 N2).
  schemaBytes: {
    limit: 256 * 1024,
    counts: "bytes of one OpenAPI operation's input schema as rendered JSON, every use of a shared node counted",
    refusal: 'the operation is left out with a problem',
  },
  packBytes: {
    limit: 4 * 1024 * 1024,
    counts: 'bytes of all the expanded input schemas of one OpenAPI document as rendered JSON',
    refusal: 'the pack is a listing problem; its calls are tool errors naming the budget',
  },
  // A path item or parameter list shared by `$ref` is followed again at every use (issue 21 N3).
  operationSteps: {
    limit: 5_000,
    counts:
      "steps of one OpenAPI operation's extraction: one per pointer segment of each `$ref` followed, per parameter merged, per argument-name collision, per path-template variable",
    refusal: 'the operation (or the path item) is left out with a problem',
  },
  packSteps: {
    limit: 200_000,
    counts: 'the same steps over all the operations of one OpenAPI document',
    refusal: 'the pack is a listing problem; its calls are tool errors naming the budget',
  },
  manifestBytes: {
    limit: 8 * 1024 * 1024,
    counts: 'bytes of one tools array (manifest in any format, MCP tools/list) as rendered, measured before rendering',
    refusal: '422 naming the budget',
  },
  // The discovery meta-tools answer from the whole visible set, which no limit bounds (tools per
  // tenant, 1,000 sub-tools per pack, descriptions up to a document's 1 MiB): a 1,000-operation
  // pack made one tool_list answer name 1,010 tools and write 1,010 usage counters; 25 tools of
  // 500 KB descriptions made one tool_description answer 12 MB (issue 21, third pass).
  listedNames: {
    limit: 200,
    counts:
      'names one `tool_list` answer shows (`inContext` and `available` together); each shown name is also one usage counter (`listedHits`) written',
    refusal: 'the answer holds the first 200 and `nextOffset`; the next call with `offset` shows the next ones',
  },
  describedBytes: {
    limit: 1024 * 1024,
    counts:
      "bytes of one `tool_description` answer's descriptions and schemas as rendered JSON (counted twice in code mode, where each is declared as TypeScript too), measured before it is rendered",
    refusal: 'the tools that do not fit are `skipped` with the budget named; one that alone does not fit is a tool error naming it',
  },
  // A layer holds any number of documents of up to 1 MiB each: 20 of them made one export
  // answer 19.5 MB (139 CPU ms) and every further document added to every export.
  documentBodies: {
    limit: 2 * 1024 * 1024,
    counts: 'bytes (UTF-8) of the document bodies one `GET …/documents?bodies=true` answer carries, taken in path order while they fit',
    refusal:
      'the documents that do not fit are listed without `body`, with `bodyOmitted: true`; read each at `GET …/documents/{path}` (the CLI does)',
  },
  // Every turn of a process reads the catalog and the learned limit of each entry (issue 21 N5).
  modelChain: {
    limit: 16,
    counts: 'entries of one model chain (spawn and preview `models`, a recipe `models` list)',
    refusal: '400 (spawn, preview) / 422 (recipe document) naming the limit',
  },
} as const satisfies Record<string, WorkBudget>

export type WorkItem = keyof typeof WORK_BUDGETS

/** A fresh counter for one run of a work item. */
export const budgetFor = (item: WorkItem, what: string = WORK_BUDGETS[item].counts): ExpansionBudget =>
  new ExpansionBudget(WORK_BUDGETS[item].limit, what)

/** The expansion limits by their earlier names (the callers of issue 10 use these): views of WORK_BUDGETS. */
const EXPANSION_ITEMS = [
  'schemaNodes',
  'packNodes',
  'packTools',
  'promptChars',
  'schemaBytes',
  'packBytes',
  'operationSteps',
  'packSteps',
  'manifestBytes',
  'modelChain',
] as const satisfies readonly WorkItem[]
export const EXPANSION_LIMITS = Object.fromEntries(EXPANSION_ITEMS.map((k) => [k, WORK_BUDGETS[k].limit])) as Readonly<
  Record<(typeof EXPANSION_ITEMS)[number], number>
>

export class BudgetExceeded extends Error {
  readonly limit: number
  readonly what: string

  constructor(limit: number, what: string) {
    // a tenant's refusal, not a fault: no stack to capture (an expansion may refuse once per operation)
    const depth = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    super(`${what} is over its budget of ${formatCount(limit)}`)
    Error.stackTraceLimit = depth
    this.limit = limit
    this.what = what
    this.name = 'BudgetExceeded'
  }
}

/** A counter that throws BudgetExceeded when spent past its limit; a parent is charged alike. */
export class ExpansionBudget {
  used = 0

  constructor(
    readonly limit: number,
    readonly what: string,
    private readonly parent?: ExpansionBudget,
  ) {}

  spend(units = 1): void {
    this.used += units
    this.parent?.spend(units)
    if (this.used > this.limit) throw new BudgetExceeded(this.limit, this.what)
  }

  /**
   * `units` charged at once for work done once and reused (a memoised walk), stopping where
   * spending them one at a time would have stopped: every budget of the chain ends as it would.
   */
  spendAll(units: number): void {
    if (units <= 0) return
    let room = Number.POSITIVE_INFINITY
    for (let b: ExpansionBudget | undefined = this; b; b = b.parent) room = Math.min(room, b.limit - b.used)
    this.spend(Math.min(units, Math.max(1, room + 1)))
  }

  /** A child budget for one part (one operation's schema) that also charges this one. */
  child(limit: number, what: string): ExpansionBudget {
    return new ExpansionBudget(limit, what, this)
  }
}

/**
 * Nodes in a JSON value, counted without recursion and without looking past `limit` (so the
 * count of a huge value costs no more than the limit). Returns limit + 1 when there are more.
 */
export function countNodes(value: unknown, limit: number): number {
  if (limit < 1) return 1
  let count = 0
  const stack: unknown[] = [value]
  while (stack.length) {
    const v = stack.pop()
    count++
    if (v && typeof v === 'object') {
      if (Array.isArray(v)) {
        for (const item of v) if (count + stack.push(item) > limit) return limit + 1
      } else {
        for (const key in v) if (Object.hasOwn(v, key) && count + stack.push((v as Record<string, unknown>)[key]) > limit) return limit + 1
      }
    }
  }
  return count
}

/**
 * The size of a JSON value as its consumers will walk it: one unit per node plus one per 16
 * characters of each string, a shared node counted at every use; counted without recursion and
 * without looking past `limit` (a cycle or a huge expansion costs no more than the limit).
 * Returns limit + 1 when there is more.
 */
export function expandedSize(value: unknown, limit: number): number {
  let units = 0
  const stack: unknown[] = [value]
  while (stack.length) {
    const v = stack.pop()
    units += typeof v === 'string' ? 1 + (v.length >> 4) : 1
    if (units > limit) return limit + 1
    if (v && typeof v === 'object') {
      if (Array.isArray(v)) {
        for (const item of v) if (units + stack.push(item) > limit) return limit + 1
      } else {
        for (const key in v) {
          if (!Object.hasOwn(v, key)) continue
          units += key.length >> 4
          if (units + stack.push((v as Record<string, unknown>)[key]) > limit) return limit + 1
        }
      }
    }
  }
  return units
}

/** Undefined when a schema a tenant wrote (or a remote server sent) is within the schema budget. */
export function schemaOverBudget(schema: unknown, limit: number = EXPANSION_LIMITS.schemaNodes): string | undefined {
  return countNodes(schema, limit) > limit ? `the schema has more than ${formatCount(limit)} nodes` : undefined
}

/**
 * Bytes of a JSON value as JSON.stringify would render it (string escapes counted as one
 * character each), walking every use of a shared node, without recursion and without looking past
 * `limit`. Returns limit + 1 when there are more, so measuring a huge value costs at most the limit.
 */
export function jsonBytes(value: unknown, limit: number): number {
  let bytes = 0
  const stack: unknown[] = [value]
  while (stack.length) {
    const v = stack.pop()
    if (typeof v === 'string') bytes += v.length + 2
    else if (typeof v === 'number' || typeof v === 'boolean') bytes += String(v).length
    else if (v === null || v === undefined) bytes += 4
    else if (Array.isArray(v)) {
      bytes += 2 + v.length
      if (bytes > limit) return limit + 1
      for (const item of v) stack.push(item)
    } else if (typeof v === 'object') {
      bytes += 2
      for (const key in v)
        if (Object.hasOwn(v, key)) {
          bytes += key.length + 4
          if (bytes > limit) return limit + 1
          stack.push((v as Record<string, unknown>)[key])
        }
    }
    if (bytes > limit) return limit + 1
  }
  return bytes
}

/** Lets other work run between slices of a long expansion (each slice stays within the budget); a held tenant's slice may also wait (lib/runtime/turns.ts). */
export const yieldToEventLoop = nextTurn
