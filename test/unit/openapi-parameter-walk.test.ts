/**
 * A path item's parameter list is walked once per document, up to an operation's steps, and in
 * slices (lib/tools/types/openapi/operations.ts): the event loop gets turns during the walk, not
 * only between operations. Counted through the turn port (lib/runtime/turns.ts), not timed.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { EXPANSION_LIMITS } from '../../lib/config/expansion-budget'
import { useTurnWait } from '../../lib/runtime/turns'
import { type ExtractWork, extractOperations } from '../../lib/tools/types/openapi/operations'

afterEach(() => useTurnWait(undefined))

/** One path whose shared path item holds `n` parameters, each a `$ref` to its own component. */
function sharedParameters(n: number, paths = 1) {
  const parameters = Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`p${i}`, { name: `q${i}`, in: 'query', schema: { type: 'string' } }]),
  )
  const item = {
    parameters: Array.from({ length: n }, (_, i) => ({ $ref: `#/components/parameters/p${i}` })),
    get: { responses: { 200: { description: 'ok' } } },
  }
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: Object.fromEntries(Array.from({ length: paths }, (_, i) => [`/r${i}`, { $ref: '#/components/pathItems/shared' }])),
    components: { parameters, pathItems: { shared: item } },
  } as any
}

describe('a shared parameter list of thousands of $refs', () => {
  it('is walked in slices: the event loop turns during the walk of the one operation that walks it', async () => {
    let turns = 0
    useTurnWait(() => {
      turns++
      return undefined
    })
    const work: ExtractWork = { nodes: 0, bytes: 0, steps: 0, yields: 0 }
    const { operations, problems } = await extractOperations(sharedParameters(3_000), EXPANSION_LIMITS, work)
    // its 5,000 steps end the walk: the operation is left out, as before
    expect(operations).toEqual([])
    expect(problems.join('\n')).toMatch(/over its budget of 5,000/)
    // ≥ 2,000 steps between yields at most (YIELD_EVERY): a 5,000-step walk turns at least twice before the operation ends
    expect(turns).toBeGreaterThanOrEqual(3)
    expect(work.yields).toBe(turns)
  })

  it('is walked once for all the paths that share it, each operation charged its steps', async () => {
    const work: ExtractWork = { nodes: 0, bytes: 0, steps: 0, yields: 0 }
    await extractOperations(sharedParameters(3_000, 30), EXPANSION_LIMITS, work)
    // the walk stops at an operation's 5,000 steps (≈ 2,500 entries of a $ref each): walked once, not 30 times
    expect(work.parametersWalked).toBeLessThanOrEqual(EXPANSION_LIMITS.operationSteps)
    expect(work.steps).toBeGreaterThan(30 * EXPANSION_LIMITS.operationSteps)
  })
})
