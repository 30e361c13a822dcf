/**
 * The interpreted validator must agree with Ajv (draft-07, ajv-formats) on every schema it claims
 * to support: same validity, same Issues after issuesFromAjv. Each case is run through both.
 */
import { describe, expect, it } from 'vitest'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { compile, issuesFromAjv, newAjv, validateAgainst } from '../../../lib/config/json-schema'
import { interpret, supportsSchema } from '../../../lib/config/schema-interpreter'

const ajv = newAjv({ allErrors: true, strict: false, useDefaults: false })

const cases: [string, JsonSchema, unknown[]][] = [
  [
    'an object with required and typed properties',
    {
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string', minLength: 2, maxLength: 4 }, b: { type: 'integer', minimum: 1, maximum: 3 } },
    },
    [{ a: 'xy' }, {}, { a: 'x', b: 0 }, { a: 'xxxxx', b: 2.5 }, { a: 3 }, [], null, 'x'],
  ],
  [
    'closed objects',
    { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false },
    [{ a: 1 }, { a: 1, b: 2, c: 3 }],
  ],
  ['additionalProperties as a schema', { type: 'object', additionalProperties: { type: 'boolean' } }, [{ x: true }, { x: 1, y: false }]],
  [
    'enum and const',
    { type: 'object', properties: { e: { enum: ['a', 1, null, { k: [1] }] }, c: { const: { x: 1 } } } },
    [{ e: 'a', c: { x: 1 } }, { e: { k: [1] } }, { e: 'b', c: { x: 2 } }],
  ],
  [
    'arrays',
    { type: 'array', items: { type: 'string', pattern: '^a' }, minItems: 1, maxItems: 3, uniqueItems: true },
    [['ab'], [], ['ab', 'ab'], ['b', 'c', 'ad', 'ae'], [{ a: 1 }, { a: 1 }]],
  ],
  ['numbers', { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 10, multipleOf: 0.5 }, [0.5, 0, 10, 3.3, 9.5, Infinity]],
  ['type lists and null', { type: ['string', 'null'] }, ['x', null, 1, {}]],
  ['anyOf with nullable branches', { anyOf: [{ type: 'string' }, { type: 'null' }] }, ['x', null, 3]],
  ['oneOf', { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 2 }] }, [1, 2.5, 3, 'x']],
  ['allOf and not', { allOf: [{ type: 'string' }, { minLength: 2 }], not: { const: 'no' } }, ['yes', 'no', 'y', 5]],
  [
    'local $ref and $defs',
    {
      $defs: {
        item: {
          type: 'object',
          required: ['id'],
          properties: { id: { type: 'integer' }, kids: { type: 'array', items: { $ref: '#/$defs/item' } } },
        },
      },
      $ref: '#/$defs/item',
    },
    [{ id: 1, kids: [{ id: 2 }] }, { id: 1, kids: [{}] }, { kids: [{ id: 'x' }] }],
  ],
  [
    'formats it knows',
    {
      type: 'object',
      properties: { u: { type: 'string', format: 'uuid' }, d: { type: 'string', format: 'date' }, i: { type: 'integer', format: 'int32' } },
    },
    [
      { u: '123e4567-e89b-12d3-a456-426614174000', d: '2024-02-29', i: 5 },
      { u: 'nope', d: '2023-02-29', i: 2 ** 31 },
    ],
  ],
  ['object size limits', { type: 'object', minProperties: 1, maxProperties: 2 }, [{}, { a: 1 }, { a: 1, b: 2, c: 3 }]],
  [
    'annotations only',
    { title: 't', description: 'd', default: 1, examples: [1], $schema: 'http://json-schema.org/draft-07/schema#' },
    [1, 'x', null],
  ],
]

describe('the interpreted JSON Schema validator', () => {
  for (const [what, schema, values] of cases) {
    it(`agrees with Ajv on ${what}`, () => {
      expect(supportsSchema(schema)).toBe(true)
      const ours = interpret(schema)
      const theirs = ajv.compile(schema)
      for (const value of values) {
        const valid = ours(value)
        expect(valid, JSON.stringify(value)).toBe(theirs(value))
        if (!valid)
          expect(issuesFromAjv(ours.errors ?? [], value).sort(byPointer), JSON.stringify(value)).toEqual(
            issuesFromAjv(theirs.errors ?? [], value).sort(byPointer),
          )
      }
    })
  }

  it('leaves schemas with keywords or formats it does not know to Ajv, which still validates them', () => {
    for (const schema of [
      { type: 'string', format: 'email' },
      { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's own keyword
      { if: { type: 'string' }, then: { minLength: 2 } },
      { items: [{ type: 'string' }] },
      { $ref: 'http://example.test/s.json' },
    ] as JsonSchema[]) {
      expect(supportsSchema(schema), JSON.stringify(schema)).toBe(false)
    }
    expect(validateAgainst({ type: 'string', format: 'email' }, 'not-an-email')).toEqual([
      { pointer: '', message: '(root) must match format "email"' },
    ])
    expect(compile({ type: 'string', format: 'email' })('a@b.test')).toBe(true)
  })

  it('ends a self-referencing schema in a budget error instead of a stall', () => {
    const validate = interpret({ $ref: '#' } as JsonSchema)
    expect(validate({})).toBe(false)
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'budget' })
  })
})

const byPointer = (a: { pointer?: string; message: string }, b: { pointer?: string; message: string }) =>
  `${a.pointer}|${a.message}`.localeCompare(`${b.pointer}|${b.message}`)
