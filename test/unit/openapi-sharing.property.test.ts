/**
 * Property: whatever an OpenAPI document shares — `required` lists, descriptions, enums, schemas
 * reached through properties, `items`, `allOf`/`anyOf`, parameters in components, `$ref` chains,
 * path items referenced by many paths, parameter lists shared by reference in memory (as YAML
 * aliases make them) — its expansion either ends or is refused with BudgetExceeded, the work it
 * counted stays inside the budgets (a pack budget plus at most one operation's overshoot), and
 * what it produced renders within the byte budgets (issue 21 N2, N3).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BudgetExceeded, EXPANSION_LIMITS, jsonBytes } from '../../lib/config/expansion-budget'
import { type ExtractLimits, type ExtractWork, extractOperations, MAX_PROBLEMS } from '../../lib/tools/types/openapi/operations'

type Json = Record<string, unknown>

const ident = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/)
/** Text a model would read: ASCII without escapes, so rendered bytes equal characters. */
const text = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 40 }).map((s) => s.replace(/[^ -~]|["\\]/g, 'x')),
  fc.nat(40_000).map((n) => 't'.repeat(n)),
)

/** A document built from shared pieces: every reference is drawn from the same small pools. */
const documents = fc
  .record({
    schemaCount: fc.integer({ min: 1, max: 12 }),
    requiredLists: fc.array(fc.nat(3_000), { minLength: 1, maxLength: 3 }),
    enums: fc.array(fc.nat(2_000), { minLength: 1, maxLength: 3 }),
    descriptions: fc.array(text, { minLength: 1, maxLength: 4 }),
    schemaShapes: fc.array(
      fc.record({
        kind: fc.constantFrom('properties', 'items', 'allOf', 'anyOf', 'leaf'),
        fanOut: fc.integer({ min: 1, max: 10 }),
        targets: fc.array(fc.nat(), { minLength: 1, maxLength: 10 }),
        required: fc.option(fc.nat(), { nil: undefined }),
        enumOf: fc.option(fc.nat(), { nil: undefined }),
        description: fc.option(fc.nat(), { nil: undefined }),
      }),
      { minLength: 12, maxLength: 12 },
    ),
    parameters: fc.array(
      fc.record({
        name: fc.oneof(ident, fc.constantFrom('a!', 'a@', 'a#', 'a$', 'a%')),
        in: fc.constantFrom('path', 'query', 'header', 'cookie'),
        schema: fc.nat(),
        chain: fc.nat(50),
      }),
      { maxLength: 30 },
    ),
    sharedParameterList: fc.array(fc.nat(), { maxLength: 400, size: 'medium' }),
    paths: fc.array(
      fc.record({
        template: fc.array(ident, { maxLength: 4 }),
        sharesItem: fc.boolean(),
        usesSharedList: fc.boolean(),
        methods: fc.subarray(['get', 'post', 'put', 'delete'] as const, { minLength: 1 }),
        body: fc.option(fc.nat(), { nil: undefined }),
        params: fc.array(fc.nat(), { maxLength: 20 }),
      }),
      { minLength: 1, maxLength: 300, size: 'medium' },
    ),
  })
  .map((g) => {
    const at = <T>(list: readonly T[], i: number) => list[i % list.length]
    const requiredLists = g.requiredLists.map((n) => Array.from({ length: n }, (_, i) => `field${i}`))
    const enums = g.enums.map((n) => Array.from({ length: n }, (_, i) => `v${i}`))
    const ref = (i: number) => ({ $ref: `#/components/schemas/S${i % g.schemaCount}` })
    const schemas: Json = {}
    for (let s = 0; s < g.schemaCount; s++) {
      const shape = g.schemaShapes[s]
      const refs = Array.from({ length: shape.fanOut }, (_, j) => ref(at(shape.targets, j)))
      const out: Json =
        shape.kind === 'properties'
          ? { type: 'object', properties: Object.fromEntries(refs.map((r, j) => [`p${j}`, r])) }
          : shape.kind === 'items'
            ? { type: 'array', items: refs[0] }
            : shape.kind === 'leaf'
              ? { type: 'string' }
              : { [shape.kind]: refs }
      // the same array object in every schema that names it: shared in memory, as a YAML alias makes it
      if (shape.required !== undefined) out.required = at(requiredLists, shape.required)
      if (shape.enumOf !== undefined) out.enum = at(enums, shape.enumOf)
      if (shape.description !== undefined) out.description = at(g.descriptions, shape.description)
      schemas[`S${s}`] = out
    }
    const parameters: Json = {}
    g.parameters.forEach((p, i) => {
      parameters[`P${i}`] = { name: p.name, in: p.in, schema: ref(p.schema) }
      // a chain of references ending at the parameter
      for (let c = 0; c < p.chain; c++)
        parameters[`P${i}_${c}`] = { $ref: `#/components/parameters/${c === 0 ? `P${i}` : `P${i}_${c - 1}`}` }
    })
    const paramRef = (n: number) => {
      if (!g.parameters.length) return { name: 'q', in: 'query', schema: ref(n) }
      const i = n % g.parameters.length
      const chain = g.parameters[i].chain
      return { $ref: `#/components/parameters/${chain ? `P${i}_${chain - 1}` : `P${i}`}` }
    }
    const sharedList = g.sharedParameterList.map(paramRef)
    const paths: Json = {}
    let shared: string | undefined
    g.paths.forEach((p, i) => {
      const path = `/r${i}${p.template.map((t) => `/{${t}}`).join('')}`
      if (p.sharesItem && shared) {
        paths[path] = { $ref: `#/paths/${shared.replace(/~/g, '~0').replace(/\//g, '~1')}` }
        return
      }
      const item: Json = p.usesSharedList ? { parameters: sharedList } : {}
      for (const m of p.methods)
        item[m] = {
          parameters: p.params.map(paramRef),
          ...(p.body !== undefined ? { requestBody: { content: { 'application/json': { schema: ref(p.body) } } } } : {}),
          responses: { 200: { description: 'ok' } },
        }
      paths[path] = item
      shared ??= path
    })
    return { openapi: '3.1.0', info: { title: 'generated', version: '1' }, paths, components: { schemas, parameters } }
  })

/** The documented budgets, and the same divided by 20 so refusals happen in most runs. */
const SMALL: ExtractLimits = {
  schemaNodes: EXPANSION_LIMITS.schemaNodes / 20,
  packNodes: EXPANSION_LIMITS.packNodes / 20,
  packTools: EXPANSION_LIMITS.packTools / 20,
  schemaBytes: EXPANSION_LIMITS.schemaBytes / 20,
  packBytes: EXPANSION_LIMITS.packBytes / 20,
  operationSteps: EXPANSION_LIMITS.operationSteps / 20,
  packSteps: EXPANSION_LIMITS.packSteps / 20,
}

async function expandWithin(doc: Json, limits: ExtractLimits) {
  const work: ExtractWork = { nodes: 0, bytes: 0, steps: 0, yields: 0 }
  let result: Awaited<ReturnType<typeof extractOperations>> | undefined
  try {
    result = await extractOperations(doc, limits, work)
  } catch (e) {
    // the only way out of an expansion besides a result
    expect(e).toBeInstanceOf(BudgetExceeded)
  }
  expect(work.nodes).toBeLessThanOrEqual(limits.packNodes + limits.schemaNodes + 1)
  expect(work.bytes).toBeLessThanOrEqual(limits.packBytes + limits.schemaBytes + 1)
  expect(work.steps).toBeLessThanOrEqual(limits.packSteps + limits.operationSteps + 1)
  if (!result) return
  expect(result.operations.length).toBeLessThanOrEqual(limits.packTools)
  expect(result.problems.length).toBeLessThanOrEqual(MAX_PROBLEMS + 1)
  let rendered = 0
  for (const op of result.operations) {
    const bytes = JSON.stringify(op.inputSchema).length
    // the meter never counts less than what is rendered
    expect(jsonBytes(op.inputSchema, Number.MAX_SAFE_INTEGER)).toBeGreaterThanOrEqual(bytes)
    expect(bytes).toBeLessThanOrEqual(limits.schemaBytes)
    rendered += bytes
  }
  expect(rendered).toBeLessThanOrEqual(limits.packBytes)
}

describe('expanding OpenAPI documents that share references', () => {
  it('stays within budgets a twentieth of the documented ones, in work counted and bytes rendered', async () => {
    await fc.assert(
      fc.asyncProperty(documents, (doc) => expandWithin(doc, SMALL)),
      { numRuns: 150 },
    )
  }, 120_000)

  it('stays within the documented budgets, in work counted and bytes rendered', async () => {
    await fc.assert(
      fc.asyncProperty(documents, (doc) => expandWithin(doc, EXPANSION_LIMITS)),
      { numRuns: 40 },
    )
  }, 240_000)
})
