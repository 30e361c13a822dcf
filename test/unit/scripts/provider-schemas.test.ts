/**
 * The converter that extracts the tools part of a provider's published request schema
 * (scripts/provider-schemas.ts), on small documents invented here: what it keeps, what it
 * rewrites, and that the result validates what the source document allows and nothing else.
 */
import Ajv2020 from 'ajv/dist/2020'
import { describe, expect, it } from 'vitest'
import { openApiToJsonSchema, protoToJsonSchema, smithyToJsonSchema } from '../../../scripts/provider-schemas'

const compile = (schema: object) => new Ajv2020({ strict: false, allErrors: true }).compile(schema)

describe('OpenAPI to JSON Schema', () => {
  const spec = {
    openapi: '3.0.3',
    components: {
      schemas: {
        Request: { type: 'object', properties: { tools: { type: 'array', items: { $ref: '#/components/schemas/Tool' } } } },
        Tool: {
          type: 'object',
          description: 'a tool',
          'x-stainless-const': true,
          discriminator: { propertyName: 'kind' },
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', pattern: '^[a-z]+$', title: 'Name' },
            description: { type: 'string', nullable: true },
            params: { $ref: '#/components/schemas/Params' },
          },
        },
        Params: { type: 'object', additionalProperties: true },
        Unreached: { type: 'string' },
      },
    },
  }
  const schema = openApiToJsonSchema(spec, '/components/schemas/Request/properties/tools', 'source')

  it('keeps only the definitions the root reaches, under $defs, with the references rewritten', () => {
    expect(Object.keys(schema.$defs as object)).toEqual(['Params', 'Tool'])
    expect(schema.items).toEqual({ $ref: '#/$defs/Tool' })
    expect(schema.$comment).toBe('source')
  })

  it('drops documentation and vendor keywords but keeps a property that is called description', () => {
    const tool = (schema.$defs as Record<string, Record<string, unknown>>).Tool
    expect(Object.keys(tool).sort()).toEqual(['additionalProperties', 'properties', 'required', 'type'])
    expect(Object.keys(tool.properties as object)).toEqual(['name', 'description', 'params'])
  })

  it('turns nullable into a type union, so null validates where the source allowed it', () => {
    const validate = compile(schema)
    expect(validate([{ name: 'abc', description: null, params: { q: 1 } }])).toBe(true)
    expect(validate([{ name: 'ABC' }])).toBe(false)
    expect(validate([{ name: 'abc', extra: 1 }])).toBe(false)
  })

  it('turns a component that refers to itself ($recursiveRef) into a reference to that component', () => {
    const filters = {
      components: {
        schemas: {
          Filter: {
            $recursiveAnchor: true,
            type: 'object',
            required: ['op'],
            properties: { op: { enum: ['and', 'eq'] }, of: { type: 'array', items: { $recursiveRef: '#' } } },
          },
          Root: { $ref: '#/components/schemas/Filter' },
        },
      },
    }
    const nested = openApiToJsonSchema(filters, '/components/schemas/Root', 's')
    const validate = compile(nested)
    expect(validate({ op: 'and', of: [{ op: 'eq' }, { op: 'and', of: [{ op: 'eq' }] }] })).toBe(true)
    expect(validate({ op: 'and', of: [{ op: 'eq' }, { of: [] }] })).toBe(false)
  })

  it('names a reference it cannot follow instead of producing a schema that accepts anything', () => {
    const broken = { components: { schemas: { A: { $ref: '#/components/schemas/Missing' } } } }
    expect(() => openApiToJsonSchema(broken, '/components/schemas/A', 's')).toThrow(/Missing/)
    expect(() => openApiToJsonSchema(spec, '/components/schemas/Nope', 's')).toThrow(/Nope/)
  })
})

describe('Smithy to JSON Schema', () => {
  const model = {
    smithy: '2.0',
    shapes: {
      'ns#Tools': { type: 'list', member: { target: 'ns#Tool' }, traits: { 'smithy.api#length': { max: 3 } } },
      'ns#Tool': { type: 'union', members: { spec: { target: 'ns#Spec' }, marker: { target: 'ns#Marker' } } },
      'ns#Spec': {
        type: 'structure',
        members: {
          name: { target: 'ns#Name', traits: { 'smithy.api#required': {} } },
          schema: { target: 'smithy.api#Document', traits: { 'smithy.api#required': {} } },
          note: { target: 'smithy.api#String', traits: { 'smithy.api#length': { min: 1 } } },
        },
      },
      'ns#Marker': { type: 'enum', members: { DEFAULT: { target: 'smithy.api#Unit', traits: { 'smithy.api#enumValue': 'default' } } } },
      'ns#Name': { type: 'string', traits: { 'smithy.api#length': { min: 1, max: 8 }, 'smithy.api#pattern': '^[a-z_]+$' } },
    },
  }
  const validate = compile(smithyToJsonSchema(model, 'ns#Tools', 'source'))

  it('accepts what the model allows: a union member, a document of any JSON, member traits', () => {
    expect(validate([{ spec: { name: 'ab_c', schema: { anything: [1, 'x'] }, note: 'n' } }, { marker: 'default' }])).toBe(true)
  })

  for (const [what, value] of [
    ['a union with two members set', [{ spec: { name: 'a', schema: {} }, marker: 'default' }]],
    ['a union with none', [{}]],
    ['a structure without a required member', [{ spec: { name: 'a' } }]],
    ['a structure with a member the model does not have', [{ spec: { name: 'a', schema: {}, extra: 1 } }]],
    ['a string over its length trait', [{ spec: { name: 'abcdefghi', schema: {} } }]],
    ['a string outside its pattern', [{ spec: { name: 'A', schema: {} } }]],
    ['a member under its own length trait', [{ spec: { name: 'a', schema: {}, note: '' } }]],
    ['a value outside an enum', [{ marker: 'other' }]],
    ['a list over its length trait', Array.from({ length: 4 }, () => ({ marker: 'default' }))],
  ] as const) {
    it(`refuses ${what}`, () => {
      expect(validate(value)).toBe(false)
    })
  }
})

describe('protobuf to JSON Schema (the proto3 JSON mapping)', () => {
  const proto = `
    syntax = "proto3";
    package acme.v1;
    import "google/api/field_behavior.proto";
    option java_package = "com.acme"; // a comment { with braces }
    enum Kind { KIND_UNSPECIFIED = 0; RED = 1; }
    message Box {
      message Inner { string note = 1; }
      enum Shape { SHAPE_UNSPECIFIED = 0; ROUND = 1; }
      string item_name = 1 [(google.api.field_behavior) = REQUIRED];
      repeated Kind kinds = 2 [(google.api.field_behavior) = OPTIONAL];
      optional Shape shape = 3;
      map<string, Box> children = 4;
      int64 max_count = 5;
      oneof payload { Inner inner = 6; google.protobuf.Value any = 7; }
      reserved 9;
    }
    message Unreached { bool flag = 1; }
  `
  const schema = protoToJsonSchema(proto, 'Box[]', 'source')
  const validate = compile(schema)

  it('keeps the messages and enums the root reaches, nested ones under their qualified names', () => {
    expect(Object.keys(schema.$defs as object)).toEqual(['Box', 'Box.Inner', 'Box.Shape', 'Kind'])
    expect(schema.$comment).toBe('source')
  })

  it('accepts what the mapping allows: camelCase names, enum names, maps, 64-bit integers as digit strings, any Value', () => {
    expect(
      validate([
        {
          itemName: 'a',
          kinds: ['RED'],
          shape: 'ROUND',
          children: { x: { itemName: 'b', maxCount: 3 } },
          maxCount: '12',
          inner: { note: 'n' },
          any: [1, { x: null }],
        },
      ]),
    ).toBe(true)
  })

  for (const [what, value] of [
    ['a missing REQUIRED field', [{ kinds: [] }]],
    ['an unknown field', [{ itemName: 'a', extra: 1 }]],
    ['a field under its proto name instead of its JSON name', [{ itemName: 'a', max_count: 1 }]],
    ['a value outside an enum', [{ itemName: 'a', shape: 'SQUARE' }]],
    ['a 64-bit integer as a non-numeric string', [{ itemName: 'a', maxCount: 'ten' }]],
    ['a map value that is not the message', [{ itemName: 'a', children: { x: 1 } }]],
  ] as const) {
    it(`refuses ${what}`, () => {
      expect(validate(value)).toBe(false)
    })
  }

  it('refuses to guess a type another file defines', () => {
    expect(() => protoToJsonSchema('message A { other.v1.B b = 1; }', 'A', 's')).toThrow("type 'other.v1.B'")
  })
})
