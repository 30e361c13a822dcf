/**
 * OpenAPI documents whose size is in what they share, not in what they say (issue 21 N2, N3):
 * one node referenced from many places is one object in memory and a copy in every rendering.
 * Plain data, shared by the hostile rows, the property test and the bench.
 */

type Json = Record<string, unknown>

const info = { title: 'sharing', version: '1' }
const servers = [{ url: 'https://api.example.test' }]

/** `count` POST operations, each with the body schema `bodyRef`. */
function operations(count: number, bodyRef: string): Json {
  const paths: Json = {}
  for (let i = 0; i < count; i++)
    paths[`/op${i}`] = {
      post: {
        operationId: `op${i}`,
        requestBody: { content: { 'application/json': { schema: { $ref: bodyRef } } } },
        responses: { 200: { description: 'ok' } },
      },
    }
  return paths
}

const names = (n: number, prefix = 'field_') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`)

/**
 * N2 as reported: one `required` list of `names` entries (~12 bytes each) shared by every property
 * of `Obj`, which is the body of `ops` operations. Small to write, every use rendered in full.
 */
export function sharedRequired(opts: { names?: number; props?: number; ops?: number } = {}) {
  const { names: n = 5_000, props = 40, ops = 200 } = opts
  const R = { type: 'object', required: names(n) }
  const Obj = {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: props }, (_, i) => [`p${i}`, { $ref: '#/components/schemas/R' }])),
  }
  return { openapi: '3.0.3', info, servers, paths: operations(ops, '#/components/schemas/Obj'), components: { schemas: { R, Obj } } }
}

/** Variant: one long description (the schema's only text) shared through `items` by many array properties. */
export function sharedDescriptionViaItems(opts: { chars?: number; props?: number; ops?: number } = {}) {
  const { chars = 60_000, props = 60, ops = 100 } = opts
  const D = { type: 'string', description: 'd'.repeat(chars) }
  const Obj = {
    type: 'object',
    properties: Object.fromEntries(
      Array.from({ length: props }, (_, i) => [`p${i}`, { type: 'array', items: { $ref: '#/components/schemas/D' } }]),
    ),
  }
  return { openapi: '3.0.3', info, servers, paths: operations(ops, '#/components/schemas/Obj'), components: { schemas: { D, Obj } } }
}

/**
 * Variant: a `$ref` diamond — each level references the next twice (through `allOf` and a
 * property), so the bottom is used 2^depth times in one schema; the bottom carries a shared
 * `required` list.
 */
export function refDiamond(opts: { depth?: number; names?: number; ops?: number } = {}) {
  const { depth = 6, names: n = 2_000, ops = 60 } = opts
  const schemas: Json = {}
  for (let i = 0; i < depth; i++)
    schemas[`L${i}`] = {
      allOf: [{ $ref: `#/components/schemas/L${i + 1}` }],
      properties: { again: { $ref: `#/components/schemas/L${i + 1}` } },
    }
  schemas[`L${depth}`] = { type: 'object', required: names(n) }
  return { openapi: '3.1.0', info, servers, paths: operations(ops, '#/components/schemas/L0'), components: { schemas } }
}

/**
 * Variant: parameters in components (a query and a header on every operation) whose schema is one
 * shared schema with a long `title`: a handful of nodes, every use a copy of the text.
 */
export function sharedParameterTitle(opts: { chars?: number; params?: number; ops?: number } = {}) {
  const { chars = 60_000, params = 8, ops = 200 } = opts
  const parameters: Json = {}
  for (let i = 0; i < params; i++)
    parameters[`Q${i}`] = { name: `q${i}`, in: i % 2 ? 'header' : 'query', schema: { $ref: '#/components/schemas/T' } }
  const paths: Json = {}
  for (let i = 0; i < ops; i++)
    paths[`/op${i}`] = {
      get: {
        operationId: `op${i}`,
        parameters: Object.keys(parameters).map((k) => ({ $ref: `#/components/parameters/${k}` })),
        responses: { 200: { description: 'ok' } },
      },
    }
  return {
    openapi: '3.0.3',
    info,
    servers,
    paths,
    components: { schemas: { T: { type: 'string', title: 't'.repeat(chars) } }, parameters },
  }
}

/**
 * N3 as reported: every path is a `$ref` to one shared path item whose path-level `parameters` are
 * `params` references to components; the names differ only in characters a tool argument cannot
 * hold, so every one collides after sanitising.
 */
export function sharedPathItemParameters(opts: { params?: number; paths?: number } = {}) {
  const { params = 3_000, paths: count = 125 } = opts
  const parameters: Json = {}
  const list: Json[] = []
  for (let i = 0; i < params; i++) {
    parameters[`P${i}`] = { name: `x${String.fromCharCode(0x100 + i)}`, in: 'header', schema: { type: 'string' } }
    list.push({ $ref: `#/components/parameters/P${i}` })
  }
  const shared = {
    parameters: list,
    get: { responses: { 200: { description: 'ok' } } },
    post: { responses: { 200: { description: 'ok' } } },
  }
  const paths: Json = { '/shared': shared }
  for (let i = 0; i < count; i++) paths[`/p${i}`] = { $ref: '#/paths/~1shared' }
  return { openapi: '3.1.0', info, servers, paths, components: { parameters } }
}

/** Variant: path-level cookie parameters (left out at once, never inlined) shared by every path item. */
export function sharedCookieParameters(opts: { params?: number; paths?: number } = {}) {
  const { params = 20_000, paths: count = 500 } = opts
  const list = Array.from({ length: params }, (_, i) => ({ name: `c${i}`, in: 'cookie' }))
  const shared = { parameters: list, get: { responses: { 200: { description: 'ok' } } } }
  const paths: Json = { '/shared': shared }
  for (let i = 0; i < count; i++) paths[`/p${i}`] = { $ref: '#/paths/~1shared' }
  return { openapi: '3.1.0', info, servers, paths }
}

/** Variant: a chain of `length` parameter `$ref`s (P0 → P1 → … → a header), used by every operation. */
export function parameterRefChain(opts: { length?: number; ops?: number } = {}) {
  const { length = 5_000, ops = 400 } = opts
  const parameters: Json = {}
  for (let i = 0; i < length; i++) parameters[`P${i}`] = { $ref: `#/components/parameters/P${i + 1}` }
  parameters[`P${length}`] = { name: 'h', in: 'header', schema: { type: 'string' } }
  const paths: Json = {}
  for (let i = 0; i < ops; i++)
    paths[`/op${i}`] = {
      get: { operationId: `op${i}`, parameters: [{ $ref: '#/components/parameters/P0' }], responses: { 200: { description: 'ok' } } },
    }
  return { openapi: '3.0.3', info, servers, paths, components: { parameters } }
}

/**
 * Variant: one path with `vars` undeclared template variables: each becomes a required string
 * argument, and finding whether each was declared used to scan all the others.
 */
export function templateVariables(opts: { vars?: number } = {}) {
  const { vars = 30_000 } = opts
  const template = Array.from({ length: vars }, (_, i) => `{v${i}}`).join('/')
  return { openapi: '3.0.3', info, servers, paths: { [`/a/${template}`]: { get: { responses: { 200: { description: 'ok' } } } } } }
}

/**
 * Variant: `ops` paths sharing one path item through a 6-segment pointer, whose `params` cookie
 * parameters are each reached through a 7-segment pointer with `~1`, `~0` and percent escapes
 * (`#/x-deep/a~1b/c%20d/e~0f/g/h/P0`): every use is charged its length, and the walk through the
 * escapes is the costly part of following one.
 */
export function deepEscapedPointers(opts: { ops?: number; params?: number } = {}) {
  const { ops = 800, params = 40 } = opts
  const leaf: Json = {}
  // cookie parameters are charged and never inlined: the cost is in following the pointers alone
  for (let i = 0; i < params; i++) leaf[`P${i}`] = { name: `c${i}`, in: 'cookie', schema: { type: 'string' } }
  const item = {
    parameters: Array.from({ length: params }, (_, i) => ({ $ref: `#/x-deep/a~1b/c%20d/e~0f/g/h/P${i}` })),
    get: { responses: { 200: { description: 'ok' } } },
  }
  const deep = { 'a/b': { 'c d': { 'e~f': { g: { h: leaf, item } } } } }
  const paths: Json = {}
  for (let i = 0; i < ops; i++) paths[`/op${i}`] = { $ref: '#/x-deep/a~1b/c%20d/e~0f/g/item' }
  return { openapi: '3.0.3', info, servers, paths, 'x-deep': deep }
}

/**
 * Variant (patterns, not sharing): `ops` operations of `params` query parameters, each with its
 * own anchored pattern of bounded repeats (~246 RE2 instructions): every schema is inside its own
 * pattern budgets, and compiling them all cost 3.8 CPU s per expansion at 300 × 8.
 */
export function distinctPatterns(opts: { ops?: number; params?: number } = {}) {
  const { ops = 300, params = 8 } = opts
  const paths: Json = {}
  for (let i = 0; i < ops; i++)
    paths[`/op${i}`] = {
      get: {
        operationId: `op${i}`,
        parameters: Array.from({ length: params }, (_, k) => ({
          name: `q${k}`,
          in: 'query',
          schema: { type: 'string', pattern: `^[a-z]{1,60}-${i}-${k}[0-9]{1,60}$` },
        })),
        responses: { 200: { description: 'ok' } },
      },
    }
  return { openapi: '3.0.3', info, servers, paths }
}

/**
 * Variant: `items` path items, each with a parameter list of its own (`params` $refs to shared
 * header components; walking one costs just under an operation's step budget), each path item
 * `$ref`'d by `uses` paths — many shared lists, not one.
 */
export function distinctSharedLists(opts: { items?: number; params?: number; uses?: number } = {}) {
  const { items = 12, params = 1_200, uses = 10 } = opts
  const parameters: Json = {}
  for (let i = 0; i < params; i++) parameters[`P${i}`] = { name: `h${i}`, in: 'header', schema: { type: 'string' } }
  const paths: Json = {}
  for (let t = 0; t < items; t++) {
    const list = Array.from({ length: params }, (_, i) => ({ $ref: `#/components/parameters/P${(i + t) % params}` }))
    paths[`/item${t}`] = { parameters: list, get: { responses: { 200: { description: 'ok' } } } }
    for (let u = 0; u < uses; u++) paths[`/item${t}/use${u}`] = { $ref: `#/paths/~1item${t}` }
  }
  return { openapi: '3.1.0', info, servers, paths, components: { parameters } }
}
