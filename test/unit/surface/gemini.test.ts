/**
 * JSON Schema to Gemini's `parameters` (lib/surface/gemini.ts), held to the Schema message of
 * Google's published protobuf (test/fixtures/provider-tools/gemini-tools.schema.json): what the
 * subset carries, what it cannot and says so, and that the walk costs at most its node budget
 * whatever the schema's size as JSON.
 */
import { readFileSync } from 'node:fs'
import Ajv2020 from 'ajv/dist/2020'
import { describe, expect, it } from 'vitest'
import { toGeminiSchema } from '../../../lib/surface/gemini'

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/provider-tools/gemini-tools.schema.json', import.meta.url), 'utf8'))
const schemaMessage = new Ajv2020({ strict: false, allErrors: true }).compile({
  ...fixture,
  type: undefined,
  items: undefined,
  $ref: '#/$defs/Schema',
})
const valid = (schema: unknown) => {
  const ok = schemaMessage(schema)
  expect(ok, JSON.stringify(schemaMessage.errors?.slice(0, 3))).toBe(true)
}

describe('JSON Schema to Gemini parameters', () => {
  it('carries types, nullability, string enums, arrays, bounds and required properties in the subset', () => {
    const { schema, dropped } = toGeminiSchema({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City.' },
        unit: { enum: ['C', 'F'] },
        days: { type: ['integer', 'null'], minimum: 1, maximum: 14, format: 'int32' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5 },
      },
      required: ['city', 'ghost'],
    })
    valid(schema)
    expect(dropped).toEqual([])
    expect(schema).toEqual({
      type: 'OBJECT',
      properties: {
        city: { type: 'STRING', description: 'City.' },
        unit: { type: 'STRING', enum: ['C', 'F'], format: 'enum' },
        days: { type: 'INTEGER', nullable: true, format: 'int32', minimum: 1, maximum: 14 },
        tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: '1', maxItems: '5' },
      },
      required: ['city'],
    })
  })

  it('names by JSON pointer every keyword the subset cannot carry, and still renders a valid schema', () => {
    const { schema, dropped } = toGeminiSchema({
      type: 'object',
      additionalProperties: false,
      properties: {
        code: { type: 'string', pattern: '^[A-Z]{3}$', minLength: 3, format: 'uri' },
        level: { enum: [1, 2, 3], type: 'integer' },
        'a/b': { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        both: { allOf: [{ type: 'string' }] },
      },
    })
    valid(schema)
    expect(dropped.sort()).toEqual([
      '/additionalProperties',
      '/properties/a~1b/anyOf/1',
      '/properties/both/allOf',
      '/properties/code/format',
      '/properties/code/minLength',
      '/properties/code/pattern',
      '/properties/level/enum',
    ])
    expect((schema.properties as Record<string, unknown>)['a/b']).toEqual({ type: 'STRING' })
  })

  it('keeps a union whose branches share a type, and turns a null branch into nullable', () => {
    const { schema, dropped } = toGeminiSchema({
      type: 'object',
      properties: {
        id: {
          oneOf: [
            { type: 'string', format: 'date-time' },
            { type: 'string', enum: ['now'] },
          ],
        },
        note: { anyOf: [{ type: 'string' }, { type: 'null' }], description: 'Optional note.' },
      },
    })
    valid(schema)
    expect(dropped).toEqual([])
    expect(schema.properties).toEqual({
      id: {
        type: 'STRING',
        anyOf: [
          { type: 'STRING', format: 'date-time' },
          { type: 'STRING', enum: ['now'], format: 'enum' },
        ],
      },
      note: { type: 'STRING', description: 'Optional note.', nullable: true },
    })
  })

  it('follows references inside the schema and reports the ones it cannot follow', () => {
    const { schema, dropped } = toGeminiSchema({
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } } } },
      properties: { at: { $ref: '#/$defs/point' }, far: { $ref: 'https://example.invalid/s.json' } },
    })
    valid(schema)
    expect((schema.properties as Record<string, unknown>).at).toEqual({ type: 'OBJECT', properties: { x: { type: 'NUMBER' } } })
    expect(dropped).toEqual(['/properties/far/$ref'])
  })

  it('visits at most its node budget, however many times shared nodes are used', () => {
    let node: Record<string, unknown> = { type: 'string' }
    // 2^20 uses of one leaf through sharing; a self-reference on top
    for (let i = 0; i < 20; i++) node = { type: 'object', properties: { a: node, b: node } }
    const loop = { type: 'object', properties: { self: { $ref: '#' }, tree: node } }
    const { schema, dropped } = toGeminiSchema(loop, 500)
    valid(schema)
    // one typed output node per node visited: the budget bounds them all
    const typed = (s: unknown): number =>
      typeof s === 'object' && s !== null ? ('type' in s ? 1 : 0) + Object.values(s).reduce((n: number, v) => n + typed(v), 0) : 0
    expect(typed(schema)).toBeLessThanOrEqual(500)
    expect(dropped.some((d) => d.endsWith('(over 500 nodes)'))).toBe(true)
  })

  it('costs at most its budget on a node of many keys, a long union and a long enum', () => {
    const wide: Record<string, unknown> = {}
    for (let i = 0; i < 100_000; i++) wide[`p${i}`] = { type: 'string' }
    const many = Array.from({ length: 100_000 }, (_, i) => ({ type: 'string', const: `v${i}` }))
    const enumOf = Array.from({ length: 100_000 }, (_, i) => `e${i}`)
    for (const input of [
      { type: 'object', properties: wide },
      { type: 'object', properties: { u: { anyOf: many } } },
      { type: 'object', properties: { e: { type: 'string', enum: enumOf } } },
      { type: 'object', ...Object.fromEntries(Object.keys(wide).map((k) => [`x-${k}`, 1])) },
    ]) {
      const { schema, dropped } = toGeminiSchema(input, 500)
      valid(schema)
      expect(JSON.stringify(schema).length).toBeLessThan(500 * 60)
      expect(dropped.length).toBeLessThanOrEqual(501)
      expect(dropped.filter((d) => d.includes('(over 500 nodes)'))).toHaveLength(1)
    }
  })

  it('gives a function whose parameters are not an object an empty object, and says so', () => {
    const { schema, dropped } = toGeminiSchema({ type: 'string' })
    expect(schema).toEqual({ type: 'OBJECT' })
    expect(dropped).toEqual(['/type'])
  })
})
