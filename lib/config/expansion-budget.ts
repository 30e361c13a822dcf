/**
 * Budgets on what a tenant's document may expand into (issue 10 F1). Depth limits alone do not
 * bound work: nine schemas of nine properties that each `$ref` the next are 3.9 KB of OpenAPI and
 * 43 million leaves once inlined. So every expansion of tenant-written structure — OpenAPI
 * `$ref` inlining, remote MCP catalogs, JSON Schemas handed to ajv, rendered prompts — counts
 * what it produces and stops when the count passes a limit, long before the work is noticeable.
 * Over budget is an ordinary problem of that document (a listing `problem`, a tool error on call),
 * never a stall.
 */

/** Limits a tenant can rely on (README "Limits a tenant can rely on"). */
export const EXPANSION_LIMITS = {
  /**
   * Nodes (objects, arrays, array items, values) in one tool's input or output schema, after
   * `$ref`s are inlined. ajv turns every node into generated code (tens of µs each), so this
   * bounds the first validation of a tool too.
   */
  schemaNodes: 2_000,
  /** Nodes over all the schemas of one pack (an OpenAPI document's operations, an MCP catalog). */
  packNodes: 100_000,
  /** Sub-tools in one pack (OpenAPI operations, remote MCP tools). */
  packTools: 1_000,
  /** Characters of a rendered prompt (`prompt_template` prefix with its inputs filled in). */
  promptChars: 1_000_000,
} as const

export class BudgetExceeded extends Error {
  constructor(
    readonly limit: number,
    readonly what: string,
  ) {
    super(`${what} is over its budget of ${limit.toLocaleString('en-US')}`)
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

/** Undefined when a schema a tenant wrote (or a remote server sent) is within the schema budget. */
export function schemaOverBudget(schema: unknown, limit: number = EXPANSION_LIMITS.schemaNodes): string | undefined {
  return countNodes(schema, limit) > limit ? `the schema has more than ${limit.toLocaleString('en-US')} nodes` : undefined
}

/** Lets other work run between slices of a long expansion (each slice stays within the budget). */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))
