/**
 * Which tools may be sent strict (lib/surface/strict.ts): each provider's strict subset, judged at
 * a bounded cost, and the per-request caps filled in rank order.
 */
import { describe, expect, it } from 'vitest'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { judgeStrict, planStrict, STRICT_WALK_NODES, strictestCaps } from '../../../lib/surface/strict'
import { tool } from './helpers'

const closed = (properties: Record<string, unknown>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
})
const withSchema = (name: string, inputSchema: JsonSchema) => ({ ...tool(name), inputSchema })

describe('the strict subsets', () => {
  it('takes a closed object whose every property is required, for both providers', () => {
    const schema = closed({ city: { type: 'string' }, days: { type: 'integer' } })
    expect(judgeStrict(schema, 'openai')).toEqual({ ok: true, cost: { optionalParams: 0, unionParams: 0 } })
    expect(judgeStrict(schema, 'anthropic').ok).toBe(true)
  })

  it('refuses an optional property for OpenAI and counts it for Anthropic', () => {
    const schema = closed({ city: { type: 'string' }, unit: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, ['city'])
    expect(judgeStrict(schema, 'openai')).toEqual({
      ok: false,
      reason: '/properties/unit is optional (strict needs every property required)',
    })
    expect(judgeStrict(schema, 'anthropic')).toEqual({ ok: true, cost: { optionalParams: 1, unionParams: 1 } })
  })

  for (const [what, schema, reason] of [
    [
      'an open object',
      { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      '/ does not set additionalProperties: false',
    ],
    [
      'a nested open object',
      closed({ filter: { type: 'object', properties: {} } }),
      '/properties/filter does not set additionalProperties: false',
    ],
    ['a keyword outside the subset', closed({ q: { type: 'string', not: { const: '' } } }), "/properties/q uses 'not'"],
    ['a schema that is not an object', { type: 'string' }, 'the input schema is not an object schema'],
    [
      'a reference outside the schema',
      closed({ q: { $ref: 'https://example.invalid/s.json' } }),
      '/properties/q refers outside the schema',
    ],
  ] as const) {
    it(`refuses ${what}, saying where`, () => {
      expect(judgeStrict(schema as JsonSchema, 'openai')).toEqual({ ok: false, reason })
    })
  }

  it('refuses length and numeric constraints for Anthropic but not for OpenAI', () => {
    const schema = closed({ n: { type: 'integer', minimum: 1 } })
    expect(judgeStrict(schema, 'openai').ok).toBe(true)
    expect(judgeStrict(schema, 'anthropic')).toEqual({ ok: false, reason: "/properties/n uses 'minimum'" })
  })

  it('stops judging a schema of shared nodes after a bounded walk, whatever its size as JSON', () => {
    let node: Record<string, unknown> = { type: 'string' }
    // 2^30 uses of one node through sharing
    for (let i = 0; i < 30; i++) node = closed({ a: node, b: node }) as Record<string, unknown>
    expect(judgeStrict(node as JsonSchema, 'anthropic')).toEqual({
      ok: false,
      reason: `the schema is larger than ${STRICT_WALK_NODES} nodes`,
    })
  })
})

describe('the strict caps of one request', () => {
  const optional = (name: string, n: number) =>
    withSchema(name, closed(Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, { type: 'string' }])), []))

  it('fills the caps in rank order and lets a later, smaller tool take the room a larger one could not', () => {
    const ranked = [optional('a', 10), optional('b', 10), optional('c', 10), optional('d', 4), optional('e', 1)]
    const plan = planStrict(ranked, 'anthropic', { maxOptionalParams: 24 })
    expect([...plan.strict].map((t) => t.name)).toEqual(['a', 'b', 'd'])
    expect(plan.notStrict).toEqual({
      c: 'maxOptionalParams: 24 optional parameters across strict tools',
      e: 'maxOptionalParams: 24 optional parameters across strict tools',
    })
  })

  it('stops at the strict tool count, naming the cap for every tool past it', () => {
    const ranked = Array.from({ length: 25 }, (_, i) => withSchema(`t${String(i).padStart(2, '0')}`, closed({})))
    const plan = planStrict(ranked, 'anthropic', { maxTools: 20 })
    expect(plan.strict.size).toBe(20)
    expect(Object.keys(plan.notStrict)).toEqual(['t20', 't21', 't22', 't23', 't24'])
  })

  it('takes the strictest cap of a model chain', () => {
    expect(strictestCaps([{ maxTools: 20, maxUnionParams: 16 }, undefined, { maxTools: 10 }])).toEqual({ maxTools: 10, maxUnionParams: 16 })
    expect(strictestCaps([undefined])).toBeUndefined()
  })
})
