/**
 * Extracts the tools part of a provider's published request schema into a standalone JSON Schema
 * (test/fixtures/provider-tools/*.schema.json), so the endpoint-profile tests hold our renderings
 * to what the provider publishes rather than to what we believe it publishes.
 *
 *   npx tsx scripts/provider-schemas.ts openapi <spec.json|yaml> <JSON pointer> <out> "<repo> <path> <commit>"
 *   npx tsx scripts/provider-schemas.ts smithy <model.json> <shape id> <out> "<repo> <path> <commit>"
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

const SOURCE_NOTE =
  'Extracted by scripts/provider-schemas.ts (reachable definitions only; descriptions, titles, examples and vendor extensions dropped).'

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [kind, file, root, out, source] = process.argv.slice(2)
  if (!['openapi', 'smithy'].includes(kind) || !file || !root || !out || !source) {
    console.error('usage: provider-schemas.ts openapi|smithy <file> <pointer|shape id> <out> "<repo> <path> <commit>"')
    process.exit(2)
  }
  const text = readFileSync(file, 'utf8')
  const doc = (file.endsWith('.yaml') || file.endsWith('.yml') ? parseYaml(text) : JSON.parse(text)) as Json
  const [repo, path, commit] = source.split(' ')
  const comment = `${kind === 'openapi' ? `${root} of` : `Shape ${root} of`} github.com/${repo}, ${path} at commit ${commit}. ${SOURCE_NOTE}`
  const schema = kind === 'openapi' ? openApiToJsonSchema(doc, root, comment) : smithyToJsonSchema(doc, root, comment)
  writeFileSync(out, `${JSON.stringify(schema, null, 2)}\n`)
  console.log(`${out}: ${Object.keys((schema.$defs as Obj | undefined) ?? {}).length} definitions`)
}
