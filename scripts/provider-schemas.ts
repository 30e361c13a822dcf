/**
 * Extracts the tools part of a provider's published request schema into a standalone JSON Schema
 * (test/fixtures/provider-tools/*.schema.json), so the endpoint-profile tests hold our renderings
 * to what the provider publishes rather than to what we believe it publishes.
 *
 *   npx tsx scripts/provider-schemas.ts openapi <spec.json|yaml> <JSON pointer> <out> "<repo> <path> <commit>"
 *   npx tsx scripts/provider-schemas.ts smithy <model.json> <shape id> <out> "<repo> <path> <commit>"
 *   npx tsx scripts/provider-schemas.ts proto <file.proto> <Message or Message[]> <out> "<repo> <path> <commit>"
 *
 * Only what the root reaches is kept. Documentation (descriptions, titles, examples, vendor
 * extensions) is dropped: it constrains nothing, and the fixture stays small enough to read.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { parse as parseYaml } from 'yaml'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Obj = { [k: string]: Json }
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** OpenAPI keywords that are documentation or tooling, not constraints. */
const OPENAPI_DOC_KEYS = new Set(['description', 'title', 'example', 'examples', 'discriminator', 'externalDocs', 'deprecated', 'xml'])
const COMPONENT = '#/components/schemas/'

function resolvePointer(doc: Json, pointer: string): Json {
  let node: Json = doc
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    const next: Json | undefined = Array.isArray(node) ? node[Number(key)] : isObj(node) ? node[key] : undefined
    if (next === undefined) throw new Error(`nothing at ${pointer} (stopped at '${key}')`)
    node = next
  }
  return node
}

/**
 * The schema at `pointer` of an OpenAPI 3.x document as JSON Schema 2020-12: component `$ref`s
 * become `$defs` (only the reachable ones), OpenAPI 3.0 `nullable: true` becomes a type union,
 * documentation keywords and `x-` extensions go, and draft 2019-09's `$recursiveRef: '#'` (a
 * component referring to itself, as OpenAPI 3.1 documents use it) becomes a `$ref` to that
 * component. Property names are kept as they are (a property called `description` is not
 * documentation).
 */
export function openApiToJsonSchema(doc: Json, pointer: string, comment: string): Obj {
  const schemas = isObj(doc) && isObj(doc.components) && isObj(doc.components.schemas) ? doc.components.schemas : {}
  const defs: Obj = {}
  const pending: string[] = []
  let component: string | undefined
  const convert = (node: Json, inProperties = false): Json => {
    if (Array.isArray(node)) return node.map((n) => convert(n))
    if (!isObj(node)) return node
    const out: Obj = {}
    for (const [k, v] of Object.entries(node)) {
      if (!inProperties && (OPENAPI_DOC_KEYS.has(k) || k.startsWith('x-') || k === '$recursiveAnchor')) continue
      if (!inProperties && k === '$recursiveRef') {
        if (v !== '#' || component === undefined) throw new Error(`unsupported $recursiveRef ${JSON.stringify(v)}`)
        out.$ref = `#/$defs/${component}`
        continue
      }
      if (!inProperties && k === '$ref' && typeof v === 'string') {
        if (!v.startsWith(COMPONENT)) throw new Error(`unsupported $ref ${v}`)
        const name = v.slice(COMPONENT.length)
        if (!(name in schemas)) throw new Error(`$ref to a missing component ${v}`)
        if (!(name in defs) && !pending.includes(name)) pending.push(name)
        out.$ref = `#/$defs/${name}`
        continue
      }
      if (!inProperties && k === 'nullable') continue
      // `properties`, `patternProperties` and `$defs` map names to schemas: their keys are data
      out[k] = inProperties ? convert(v) : convert(v, k === 'properties' || k === 'patternProperties')
    }
    if (!inProperties && node.nullable === true) {
      if (typeof out.type === 'string') out.type = [out.type, 'null']
      else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null']
      else if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null]
    }
    return out
  }
  const root = convert(resolvePointer(doc, pointer))
  while (pending.length) {
    const name = pending.shift()!
    component = name
    defs[name] = convert(schemas[name])
  }
  const sorted = Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : 1)))
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $comment: comment,
    ...(isObj(root) ? root : { allOf: [root] }),
    ...(Object.keys(sorted).length ? { $defs: sorted } : {}),
  }
}

type Shape = {
  type: string
  members?: Record<string, { target: string; traits?: Obj }>
  member?: { target: string; traits?: Obj }
  traits?: Obj
}
const SMITHY_PRELUDE: Record<string, Obj> = {
  'smithy.api#String': { type: 'string' },
  'smithy.api#Boolean': { type: 'boolean' },
  'smithy.api#Integer': { type: 'integer' },
  'smithy.api#Long': { type: 'integer' },
  'smithy.api#Float': { type: 'number' },
  'smithy.api#Double': { type: 'number' },
  'smithy.api#Document': {},
}

/** Smithy's constraint traits as JSON Schema keywords for a value of the given JSON Schema type. */
function traitKeywords(traits: Obj | undefined, type: string | undefined): Obj {
  const out: Obj = {}
  if (!traits) return out
  const length = traits['smithy.api#length']
  if (isObj(length)) {
    const [min, max] =
      type === 'array' ? ['minItems', 'maxItems'] : type === 'object' ? ['minProperties', 'maxProperties'] : ['minLength', 'maxLength']
    if (typeof length.min === 'number') out[min] = length.min
    if (typeof length.max === 'number') out[max] = length.max
  }
  const range = traits['smithy.api#range']
  if (isObj(range)) {
    if (typeof range.min === 'number') out.minimum = range.min
    if (typeof range.max === 'number') out.maximum = range.max
  }
  const pattern = traits['smithy.api#pattern']
  if (typeof pattern === 'string') out.pattern = pattern
  return out
}

/**
 * The shape `root` of a Smithy 2.0 JSON AST model as JSON Schema 2020-12, as its JSON protocols
 * (restJson1) put it on the wire: a structure is an object of its members (`@required` ones
 * required, no others), a union an object with exactly one of its members, a list an array, an
 * enum its values, a document any JSON. Member traits (length, range, pattern) apply at the member.
 */
export function smithyToJsonSchema(model: Json, root: string, comment: string): Obj {
  const shapes = (isObj(model) && isObj(model.shapes) ? model.shapes : {}) as unknown as Record<string, Shape>
  const defs: Obj = {}
  const pending: string[] = []
  const local = (id: string) => id.slice(id.indexOf('#') + 1)
  const ref = (target: string, traits?: Obj): Json => {
    const prelude = SMITHY_PRELUDE[target]
    if (prelude) return { ...prelude, ...traitKeywords(traits, prelude.type as string | undefined) }
    const shape = shapes[target]
    if (!shape) throw new Error(`no shape ${target}`)
    if (!(local(target) in defs) && !pending.includes(target)) pending.push(target)
    const keywords = traitKeywords(traits, jsonType(shape))
    const to = { $ref: `#/$defs/${local(target)}` }
    return Object.keys(keywords).length ? { ...to, ...keywords } : to
  }
  const jsonType = (shape: Shape): string | undefined =>
    ({ structure: 'object', union: 'object', map: 'object', list: 'array', string: 'string', enum: 'string', boolean: 'boolean' })[
      shape.type
    ] ??
    (['integer', 'long', 'short', 'byte', 'intEnum'].includes(shape.type)
      ? 'integer'
      : ['float', 'double'].includes(shape.type)
        ? 'number'
        : undefined)
  const convert = (shape: Shape): Obj => {
    const own = traitKeywords(shape.traits, jsonType(shape))
    switch (shape.type) {
      case 'structure': {
        const members = Object.entries(shape.members ?? {})
        const required = members.filter(([, m]) => isObj(m.traits) && 'smithy.api#required' in m.traits).map(([n]) => n)
        return {
          type: 'object',
          properties: Object.fromEntries(members.map(([n, m]) => [n, ref(m.target, m.traits)])),
          ...(required.length ? { required } : {}),
          additionalProperties: false,
          ...own,
        }
      }
      case 'union': {
        const members = Object.entries(shape.members ?? {})
        return {
          type: 'object',
          properties: Object.fromEntries(members.map(([n, m]) => [n, ref(m.target, m.traits)])),
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
        }
      }
      case 'list':
        return { type: 'array', items: ref(shape.member!.target, shape.member!.traits), ...own }
      case 'enum':
        return {
          type: 'string',
          enum: Object.entries(shape.members ?? {}).map(([n, m]) => {
            const v = isObj(m.traits) ? m.traits['smithy.api#enumValue'] : undefined
            return typeof v === 'string' ? v : n
          }),
        }
      case 'document':
        return {}
      default: {
        const type = jsonType(shape)
        if (!type) throw new Error(`unsupported shape type ${shape.type}`)
        return { type, ...own }
      }
    }
  }
  const top = ref(root)
  while (pending.length) {
    const id = pending.shift()!
    defs[local(id)] = convert(shapes[id])
  }
  const sorted = Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : 1)))
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $comment: comment, ...(top as Obj), $defs: sorted }
}

/**
 * A protobuf file's message as the JSON its proto3 JSON mapping accepts (what a REST endpoint
 * such as Google's generateContent parses): fields under their lowerCamelCase names, `repeated`
 * as arrays, `map<string, V>` as objects, enums by value name, 64-bit integers as integers or
 * digit strings, `google.protobuf.Value` as anything and `Struct` as any object. Fields marked
 * `(google.api.field_behavior) = REQUIRED` are required; unknown fields are refused (Google's
 * parser answers "Unknown name"). A `oneof`'s members are optional like any other field. Only
 * the file's own messages are read: a reference to another file's message is an error, not a
 * guess. `Message[]` as the root means an array of that message.
 */
export function protoToJsonSchema(text: string, root: string, comment: string): Obj {
  const tokens = text.replace(/\/\/[^\n]*/g, ' ').match(/"[^"]*"|[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?|[{}[\]()<>=;,]/g) ?? []
  type Field = { name: string; type: string; repeated: boolean; map?: [string, string]; required: boolean }
  const messages = new Map<string, Field[]>()
  const enums = new Map<string, string[]>()
  let i = 0
  const expect = (t: string) => {
    if (tokens[i] !== t) throw new Error(`expected '${t}' at token ${i}, found '${tokens[i]}'`)
    i++
  }
  const skipStatement = () => {
    let depth = 0
    while (i < tokens.length) {
      const t = tokens[i++]
      if (t === '{') depth++
      else if (t === '}') {
        if (--depth <= 0) return
      } else if (t === ';' && depth === 0) return
    }
  }
  const readEnum = (scope: string) => {
    const name = `${scope}${tokens[i++]}`
    expect('{')
    const values: string[] = []
    while (tokens[i] !== '}') {
      if (tokens[i] === 'option' || tokens[i] === 'reserved') skipStatement()
      else {
        values.push(tokens[i])
        skipStatement()
      }
    }
    i++
    enums.set(name, values)
  }
  const readField = (fields: Field[], label?: string) => {
    let map: [string, string] | undefined
    let type = tokens[i++]
    if (type === 'map') {
      expect('<')
      const k = tokens[i++]
      expect(',')
      map = [k, tokens[i++]]
      expect('>')
      type = 'map'
    }
    const name = tokens[i++]
    expect('=')
    i++
    let required = false
    if (tokens[i] === '[') {
      while (tokens[i] !== ']') {
        if (tokens[i] === 'google.api.field_behavior' && tokens[i + 3] === 'REQUIRED') required = true
        i++
      }
      i++
    }
    expect(';')
    fields.push({ name, type, repeated: label === 'repeated', ...(map ? { map } : {}), required })
  }
  const readMessage = (scope: string) => {
    const name = `${scope}${tokens[i++]}`
    expect('{')
    const fields: Field[] = []
    while (tokens[i] !== '}') {
      const t = tokens[i]
      if (t === 'message') {
        i++
        readMessage(`${name}.`)
      } else if (t === 'enum') {
        i++
        readEnum(`${name}.`)
      } else if (t === 'oneof') {
        i += 2
        expect('{')
        while (tokens[i] !== '}') readField(fields)
        i++
      } else if (t === 'option' || t === 'reserved' || t === 'extensions') skipStatement()
      else if (t === 'optional' || t === 'repeated') {
        i++
        readField(fields, t)
      } else readField(fields)
    }
    i++
    messages.set(name, fields)
  }
  while (i < tokens.length) {
    const t = tokens[i++]
    if (t === 'message') readMessage('')
    else if (t === 'enum') readEnum('')
    else if (t !== ';') {
      i--
      skipStatement()
    }
  }

  const SCALARS: Record<string, Obj> = {
    string: { type: 'string' },
    bytes: { type: 'string' },
    bool: { type: 'boolean' },
    double: { type: 'number' },
    float: { type: 'number' },
    'google.protobuf.Value': {},
    'google.protobuf.Struct': { type: 'object' },
    'google.protobuf.ListValue': { type: 'array' },
  }
  for (const n of ['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']) SCALARS[n] = { type: 'integer' }
  for (const n of ['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'])
    SCALARS[n] = { anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^-?[0-9]+$' }] }
  const defs: Obj = {}
  const pending: string[] = []
  const resolve = (type: string, scope: string): string => {
    // innermost scope first, as protoc resolves names
    const parts = scope.split('.')
    for (let n = parts.length; n >= 0; n--) {
      const candidate = [...parts.slice(0, n), type].join('.')
      if (messages.has(candidate) || enums.has(candidate)) return candidate
    }
    throw new Error(`type '${type}' (in ${scope || 'the file'}) is not defined in this file`)
  }
  const ref = (type: string, scope: string): Obj => {
    if (SCALARS[type]) return SCALARS[type]
    const full = resolve(type, scope)
    if (!(full in defs) && !pending.includes(full)) pending.push(full)
    return { $ref: `#/$defs/${full}` }
  }
  const camel = (n: string) => n.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
  const top = root.endsWith('[]') ? { type: 'array', items: ref(root.slice(0, -2), '') } : ref(root, '')
  while (pending.length) {
    const full = pending.shift()!
    if (enums.has(full)) {
      defs[full] = { enum: enums.get(full)! }
      continue
    }
    const properties: Obj = {}
    const required: string[] = []
    for (const f of messages.get(full)!) {
      const value = f.map ? { type: 'object', additionalProperties: ref(f.map[1], full) } : ref(f.type, full)
      properties[camel(f.name)] = f.repeated ? { type: 'array', items: value } : value
      if (f.required) required.push(camel(f.name))
    }
    defs[full] = { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }
  }
  const sorted = Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : 1)))
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $comment: comment, ...top, $defs: sorted } as Obj
}

const SOURCE_NOTE =
  'Extracted by scripts/provider-schemas.ts (reachable definitions only; descriptions, titles, examples and vendor extensions dropped).'

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [kind, file, root, out, source] = process.argv.slice(2)
  if (!['openapi', 'smithy', 'proto'].includes(kind) || !file || !root || !out || !source) {
    console.error('usage: provider-schemas.ts openapi|smithy|proto <file> <pointer|shape id|message> <out> "<repo> <path> <commit>"')
    process.exit(2)
  }
  const text = readFileSync(file, 'utf8')
  const [repo, path, commit] = source.split(' ')
  const what = kind === 'openapi' ? `${root} of` : kind === 'smithy' ? `Shape ${root} of` : `Message ${root} of`
  const comment = `${what} github.com/${repo}, ${path} at commit ${commit}. ${SOURCE_NOTE}`
  const parse = () => (file.endsWith('.yaml') || file.endsWith('.yml') ? parseYaml(text) : JSON.parse(text)) as Json
  const schema =
    kind === 'proto'
      ? protoToJsonSchema(text, root, comment)
      : kind === 'openapi'
        ? openApiToJsonSchema(parse(), root, comment)
        : smithyToJsonSchema(parse(), root, comment)
  writeFileSync(out, `${JSON.stringify(schema, null, 2)}\n`)
  console.log(`${out}: ${Object.keys((schema.$defs as Obj | undefined) ?? {}).length} definitions`)
}
