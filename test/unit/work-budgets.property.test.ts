/**
 * Property tests (fast-check) for the work budgets of lib/config/expansion-budget.ts: random
 * schemas with shared `$ref`s, random patterns and random values; random YAML with anchors and
 * aliases. The work is measured independently of the code's own counters — reads of the value
 * through a Proxy, a naive walk of the parsed data — and must stay inside the documented budgets.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WORK_BUDGETS } from '../../lib/config/expansion-budget'
import type { JsonSchema } from '../../lib/config/json-schema'
import { compilePattern, isPatternProblem } from '../../lib/config/patterns'
import { interpret, schemaProblem } from '../../lib/config/schema-interpreter'
import { parseYaml } from '../../lib/config/yaml'

const STEPS = WORK_BUDGETS.schemaValidation.limit

/** Patterns with nested quantifiers and overlapping alternations, the shapes that backtrack. */
const pattern = fc
  .array(
    fc.oneof(
      fc.constantFrom('a', 'b', '.', '\\d', '[ab]', 'a|aa', '(a+)', '(a|ab)', '(a*)*', '(?:a|b)+'),
      fc.constantFrom('+', '*', '?', '{1,3}'),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((parts) => `^${parts.join('')}$`)
  .filter((p) => {
    try {
      new RegExp(p, 'u')
      return true
    } catch {
      return false
    }
  })

const refs = ['#/$defs/d0', '#/$defs/d1', '#/$defs/d2']

/** A schema whose subschemas may `$ref` three shared definitions (which may refer to each other). */
const schemaArb: fc.Arbitrary<JsonSchema> = fc.letrec<{ node: JsonSchema }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ type: fc.constantFrom('string', 'number', 'object', 'array') }),
    fc.record({ type: fc.constant('string'), pattern, minLength: fc.nat(5) }, { requiredKeys: ['type', 'pattern'] }),
    fc.record({ $ref: fc.constantFrom(...refs) }),
    fc.record({ enum: fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 4 }) }),
    fc.record({ anyOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ type: fc.constant('array'), items: tie('node'), uniqueItems: fc.boolean() }),
    fc.record({ type: fc.constant('object'), properties: fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }) }),
    fc.record({ patternProperties: fc.dictionary(pattern, tie('node'), { maxKeys: 2 }), additionalProperties: tie('node') }),
  ),
})).node

const rooted = fc
  .tuple(schemaArb, schemaArb, schemaArb, schemaArb)
  .map(([root, d0, d1, d2]) => ({ ...root, $defs: { d0, d1, d2 } }) as JsonSchema)

/** Values that nest (so recursive schemas have something to recurse into) with long strings. */
const valueArb = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 40 }),
    fc.constantFrom('a'.repeat(5_000), `${'a'.repeat(29)}!`, 'ab'.repeat(2_000)),
    fc.integer(),
    fc.array(tie('v'), { maxLength: 6 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c', 'aa', 'ab'), tie('v'), { maxKeys: 5 }),
  ),
})).v

/** The value behind a Proxy that counts every property read and every key listed. */
function counted(value: unknown, counter: { reads: number }): unknown {
  if (!value || typeof value !== 'object') return value
  const cache = new Map<PropertyKey, unknown>()
  return new Proxy(value as object, {
    get(target, key, receiver) {
      counter.reads++
      if (!cache.has(key)) cache.set(key, counted(Reflect.get(target, key, receiver), counter))
      return cache.get(key)
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target)
      counter.reads += keys.length
      return keys
    },
  })
}

describe('work budgets under random input (fast-check)', () => {
  it('schema validation reads the value at most a small multiple of its step budget, whatever the schema', () => {
    fc.assert(
      fc.property(rooted, valueArb, (schema, value) => {
        fc.pre(schemaProblem(schema) === undefined)
        const counter = { reads: 0 }
        const validate = interpret(schema)
        validate(counted(value, counter))
        // every read belongs to a charged step: a visit reads a handful of keywords' values
        expect(counter.reads).toBeLessThanOrEqual(8 * STEPS)
        // a validation that finished spent at most its budget; one that did not ended at the step or depth budget
        if (validate.errors?.[0]?.keyword !== 'budget') expect(validate.steps).toBeLessThanOrEqual(STEPS)
      }),
      { numRuns: 300 },
    )
  })

  it('every pattern compiles to a program within its budget or is refused with a position inside it', () => {
    fc.assert(
      fc.property(pattern, (p) => {
        const compiled = compilePattern(p)
        if (isPatternProblem(compiled)) {
          expect(compiled.position).toBeGreaterThanOrEqual(1)
          expect(compiled.position).toBeLessThanOrEqual(p.length)
        } else expect(compiled.size).toBeLessThanOrEqual(WORK_BUDGETS.patternProgram.limit)
      }),
      { numRuns: 300 },
    )
  })

  /** YAML mappings whose values are flow collections of scalars and aliases of earlier anchors. */
  const yamlArb = fc
    .array(
      fc.record({
        width: fc.integer({ min: 1, max: 12 }),
        depth: fc.integer({ min: 0, max: 4 }),
        aliases: fc.array(fc.nat(), { maxLength: 12 }),
        text: fc.nat(200),
      }),
      { minLength: 1, maxLength: 12 },
    )
    .map((anchors) =>
      anchors
        .map(({ width, depth, aliases, text }, i) => {
          const items = Array.from({ length: width }, (_, j) =>
            i > 0 && j < aliases.length ? `*a${aliases[j] % i}` : `"${'x'.repeat(text)}"`,
          )
          return `k${i}: &a${i} ${'['.repeat(depth)}[${items.join(', ')}]${']'.repeat(depth)}`
        })
        .join('\n'),
    )

  /** Units of the data walked naively: every use of a shared node again, a string one per 16 characters. */
  function naiveUnits(v: unknown, cap: number): number {
    let n = 0
    const walk = (x: unknown, depth: number) => {
      if (n > cap || depth > 200) {
        n = cap + 1
        return
      }
      n += typeof x === 'string' ? 1 + (x.length >> 4) : 1
      if (Array.isArray(x)) for (const y of x) walk(y, depth + 1)
      else if (x && typeof x === 'object')
        for (const [k, y] of Object.entries(x)) {
          n += k.length >> 4
          walk(y, depth + 1)
        }
    }
    walk(v, 0)
    return n
  }
  const depthOf = (v: unknown): number =>
    v && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf)) : 0

  it('a parsed YAML document with anchors stays inside the data budget and the nesting limit, or is refused', () => {
    fc.assert(
      fc.property(yamlArb, (text) => {
        const result = parseYaml(text)
        if (!result.ok) return
        expect(naiveUnits(result.value.data, WORK_BUDGETS.yamlNodes.limit)).toBeLessThanOrEqual(WORK_BUDGETS.yamlNodes.limit)
        expect(depthOf(result.value.data)).toBeLessThanOrEqual(WORK_BUDGETS.yamlDepth.limit)
      }),
      { numRuns: 300 },
    )
  })
})
