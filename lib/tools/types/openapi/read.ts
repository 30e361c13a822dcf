/**
 * Reading an OpenAPI 3.0/3.1 document (JSON or YAML text, or an already parsed value): what a
 * `rest_api` configuration's check needs of it. Expanding its operations is ./document and
 * ./operations, loaded with the tool runtimes.
 */
import { jsonTooDeep, yamlTooDeep } from '../../../config/nesting'
import { MAX_YAML_BYTES, yamlModule } from '../../../config/yaml'

export type OpenApiDocument = Record<string, any>

export type ReadResult = { ok: true; doc: OpenApiDocument } | { ok: false; message: string }

/** Parses and sanity-checks a document: `openapi: 3.0.x | 3.1.x` and a `paths` object. */
export function readOpenApi(input: unknown): ReadResult {
  let doc: unknown = input
  if (typeof input === 'string') {
    // the shape before any parser: JSON natively (far cheaper than YAML), YAML only when it is not JSON
    const json = /^\s*[[{]/.test(input)
    const deep = json ? jsonTooDeep(input) : yamlTooDeep(input)
    if (deep) return { ok: false, message: `the OpenAPI document is ${deep.message}` }
    if (!json && input.length > MAX_YAML_BYTES)
      return {
        ok: false,
        message: `a YAML OpenAPI document may be at most ${MAX_YAML_BYTES / 1024} KiB (this one is ${Math.ceil(input.length / 1024)} KiB); store larger specs as JSON`,
      }
    try {
      doc = json ? JSON.parse(input) : yamlModule().parse(input, { maxAliasCount: 100 })
    } catch (e) {
      return { ok: false, message: `the OpenAPI document does not parse: ${(e as Error).message.split('\n')[0]}` }
    }
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return { ok: false, message: 'the OpenAPI document must be an object' }
  const d = doc as OpenApiDocument
  if (typeof d.swagger === 'string')
    return { ok: false, message: `Swagger ${d.swagger} documents are not supported; convert to OpenAPI 3 first` }
  if (typeof d.openapi !== 'string' || !/^3\.[01]\.\d+/.test(d.openapi)) {
    return { ok: false, message: `the document must declare openapi 3.0.x or 3.1.x (found ${JSON.stringify(d.openapi ?? null)})` }
  }
  if (d.paths !== undefined && (typeof d.paths !== 'object' || d.paths === null || Array.isArray(d.paths)))
    return { ok: false, message: 'paths must be an object' }
  return { ok: true, doc: d }
}
