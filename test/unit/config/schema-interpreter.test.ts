/**
 * The interpreted validator must agree with Ajv (draft-07, ajv-formats) on every schema it claims
 * to support: same validity, same Issues after issuesFromAjv. Each case is run through both.
 */
import { describe, expect, it } from 'vitest'
import { WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { compile, issuesFromAjv, newAjv, validateAgainst } from '../../../lib/config/json-schema'
import { interpret, schemaProblem, supportsSchema } from '../../../lib/config/schema-interpreter'

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
  [
    'uniqueItems over objects, arrays and numbers (keys in any order, -0 and 0)',
    { type: 'array', uniqueItems: true },
    [
      [
        { a: 1, b: [1, { c: 'x' }] },
        { b: [1, { c: 'x' }], a: 1 },
      ],
      [{ a: 1 }, { b: 1 }, { a: '1' }, { a: [1] }, [1], ['1'], [[1]], { a: null }, {}],
      [{ a: 1 }, [1, 2], { b: 2 }, [1, 2], { a: 1 }],
      [0, -0],
      [{ n: 0 }, { n: -0 }],
      ['{"a":1}', { a: 1 }, 'object:{"a":1}'],
      [null, 'null', { x: null }, { x: 'null' }],
    ],
  ],
  [
    'uniqueItems with typed items: objects compare every item, scalars only their own types',
    {
      type: 'object',
      properties: {
        o: { type: 'array', items: { type: 'object' }, uniqueItems: true },
        s: { type: 'array', items: { type: ['string', 'number'] }, uniqueItems: true },
      },
    },
    [{ o: [1, { a: 1 }, 1] }, { s: ['1', 1, true, true, 2] }, { s: ['1', 1, 2, 1.0, '1'] }, { o: [{ a: [] }, { a: {} }] }],
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
    'formats from ajv-formats',
    {
      type: 'object',
      properties: {
        e: { type: 'string', format: 'email' },
        h: { type: 'string', format: 'ipv4' },
        t: { type: 'string', format: 'date-time' },
        u: { type: 'string', format: 'uri' },
      },
    },
    [
      { e: 'a@b.test', h: '10.0.0.1', t: '2024-02-29T10:00:00Z', u: 'https://x.test/a?b' },
      { e: 'not-an-email', h: '300.1.1.1', t: 'yesterday', u: 'no scheme' },
    ],
  ],
  [
    'patternProperties beside properties and additionalProperties',
    {
      type: 'object',
      properties: { id: { type: 'integer' } },
      patternProperties: { '^x-': { type: 'string' }, '\\d$': { type: 'number' } },
      additionalProperties: false,
    },
    [{ id: 1, 'x-a': 'y', n1: 2 }, { 'x-a': 1 }, { 'x-1': 'both' }, { other: true }],
  ],
  [
    'propertyNames and dependencies',
    {
      type: 'object',
      propertyNames: { pattern: '^[a-z]+$', maxLength: 4 },
      dependencies: { card: ['cvc'], ship: { required: ['addr'] } },
    },
    [{ card: 1, cvc: 2 }, { card: 1 }, { ship: 1 }, { Bad: 1 }, { toolong: 1 }],
  ],
  [
    'if, then and else',
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's own keyword
    { if: { type: 'string' }, then: { minLength: 2 }, else: { type: 'number' } },
    ['ab', 'a', 3, null],
  ],
  [
    'tuples with additionalItems, and contains',
    { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: { type: 'boolean' }, contains: { const: 1 } },
    [
      ['a', 1],
      ['a', 1, true],
      ['a', 1, 'x'],
      [1, 'a'],
      ['a', 2],
    ],
  ],
  ['patterns with escapes RE2 spells differently', { type: 'string', pattern: '^\\u0041[\\b]?\\x41\\cJ?$' }, ['AA', 'A\bA', 'A\bA\n', 'B']],
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

  it('refuses, with the place, what it cannot validate: a non-local $ref, a malformed keyword, a backtracking pattern', () => {
    expect(schemaProblem({ properties: { a: { $ref: 'http://example.test/s.json' } } })).toEqual({
      pointer: '/properties/a/$ref',
      message: "only local references (#/…) can be followed, not 'http://example.test/s.json'",
    })
    expect(schemaProblem({ items: { type: 'strung' } })?.pointer).toBe('/items/type')
    expect(schemaProblem({ patternProperties: { '(a)\\1': {} } })?.message).toMatch(/the backreference \\1 at position 4/)
    expect(() => compile({ type: 'string', pattern: '(?=a)a' })).toThrow(
      /the lookahead \(\?= at position 1 cannot be matched in linear time/,
    )
  })

  it('ignores keywords outside draft-07 as annotations, as Ajv does when not strict', () => {
    const schema = { type: 'object', discriminator: { propertyName: 'k' }, 'x-extra': [1], prefixItems: [{ type: 'string' }] }
    expect(supportsSchema(schema)).toBe(true)
    expect(validateAgainst(schema, { k: 1 })).toEqual([])
  })

  it.each([
    [
      'a recursive anyOf of two branches against a value nested 60 deep (2^60 visits unbounded)',
      {
        $defs: {
          n: {
            anyOf: [
              { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, required: ['z'] },
              { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, required: ['y'] },
            ],
          },
        },
        $ref: '#/$defs/n',
      },
      Array.from({ length: 60 }).reduce((v: unknown) => ({ a: v }), {}),
    ],
    [
      'uniqueItems over 2,000 objects that differ only in their last key',
      { type: 'array', uniqueItems: true },
      Array.from({ length: 2_000 }, (_, i) => ({ ...Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, k])), last: i })),
    ],
    ['the N1 pattern against a megabyte', { type: 'string', pattern: '^(a+)+$' }, `${'a'.repeat(1_000_000)}!`],
    [
      '30 anyOf branches each listing the keys of a 10,000-key object',
      { anyOf: Array.from({ length: 30 }, (_, i) => ({ type: 'object', required: [`r${i}`] })) },
      Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
    ],
    ['a format check of a megabyte', { type: 'string', format: 'uri' }, `http://${'a'.repeat(1_000_000)}`],
  ] as [string, JsonSchema, unknown][])('ends %s in a budget error after at most its budget of steps', (_, schema, value) => {
    const validate = interpret(schema)
    expect(validate(value)).toBe(false)
    expect(validate.errors).toEqual([expect.objectContaining({ keyword: 'budget' })])
    expect(validate.steps).toBeGreaterThan(WORK_BUDGETS.schemaValidation.limit)
    expect(issuesFromAjv(validate.errors ?? [], value)[0].message).toMatch(/over the validation budget of 20,000 steps/)
  })

  it('decides uniqueItems over 1,000 distinct objects in steps linear in their nodes (pairwise, a million comparisons)', () => {
    const validate = interpret({ type: 'array', uniqueItems: true })
    const items = Array.from({ length: 1_000 }, (_, i) => ({ id: i, kind: 'x', tags: ['a'] }))
    expect(validate(items)).toBe(true)
    // per item: the array's step, the object, three members and the tag list's item
    expect(validate.steps).toBeLessThanOrEqual(2 + 1_000 * 7)
    expect(validate([...items, { tags: ['a'], kind: 'x', id: 500 }])).toBe(false)
    expect(validate.errors?.[0].params).toEqual({ i: 1_000, j: 500 })
  })

  it('validates what legitimate tool calls send well inside the budget', () => {
    const schema = {
      type: 'object',
      required: ['items'],
      properties: {
        items: {
          type: 'array',
          maxItems: 500,
          items: {
            type: 'object',
            properties: {
              id: { type: 'integer' },
              name: { type: 'string', maxLength: 200, pattern: '^[\\w ]+$' },
              tags: { type: 'array', items: { enum: ['a', 'b', 'c'] } },
            },
          },
        },
      },
    } as JsonSchema
    const validate = interpret(schema)
    const value = { items: Array.from({ length: 500 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })) }
    expect(validate(value)).toBe(true)
    expect(validate.steps).toBeLessThan(WORK_BUDGETS.schemaValidation.limit / 2)
  })

  it('charges an error past the hundredth its step though it keeps only the first hundred', () => {
    const validate = interpret({ type: 'array', items: { type: 'string' } })
    expect(validate(Array.from({ length: 150 }, (_, i) => i))).toBe(false)
    expect(validate.errors).toHaveLength(100)
    expect(validate.errors?.[99]).toMatchObject({ keyword: 'type', instancePath: '/99', schemaPath: '#/items/type' })
    // the array's visit, then per item its visit and its error
    expect(validate.steps).toBe(1 + 150 * 2)
  })

  it('ends a self-referencing schema in a budget error instead of a stall', () => {
    const validate = interpret({ $ref: '#' } as JsonSchema)
    expect(validate({})).toBe(false)
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'budget' })
  })
})

const byPointer = (a: { pointer?: string; message: string }, b: { pointer?: string; message: string }) =>
  `${a.pointer}|${a.message}`.localeCompare(`${b.pointer}|${b.message}`)
