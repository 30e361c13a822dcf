/**
 * Reading an OpenAPI 3.0/3.1 document (JSON or YAML text, or an already parsed value): what a
 * `rest_api` configuration's check needs of it. Expanding its operations is ./document and
 * ./operations, loaded with the tool runtimes.
 *
 * A YAML text costs the `yaml` package up to ~300 ms at 64 KiB, so the service never parses a long
 * one here: a write has it parsed with the document (YamlSource `nested`, in a parse worker), an
 * expansion through the YAML parse port (`readOpenApiVia`). `readOpenApi` parses texts on the
 * calling thread: short ones, and every one for a caller with no other tenant to stall (the CLI's
 * offline validate, tests).
 */
import { CHUNK_CHARS, parseJsonInSlices } from '../../../config/json-slices'
import { jsonTooDeep, yamlTooDeep } from '../../../config/nesting'
import { MAX_YAML_BYTES, parsedHere, type YamlParsing, type YamlResult, yamlModule } from '../../../config/yaml'
import { INLINE_YAML_CHARS } from '../../../config/yaml-parsing'

export type OpenApiDocument = Record<string, any>

export type ReadResult = { ok: true; doc: OpenApiDocument } | { ok: false; message: string }

const looksLikeJson = (text: string) => /^\s*[[{]/.test(text)

/** A YAML text the service parses through the YAML parse port rather than on the thread that serves requests. */
export const isLongYaml = (text: string) => text.length > INLINE_YAML_CHARS && !looksLikeJson(text)

const tooLargeYaml = (text: string): ReadResult => ({
  ok: false,
  message: `a YAML OpenAPI document may be at most ${MAX_YAML_BYTES / 1024} KiB (this one is ${Math.ceil(text.length / 1024)} KiB); store larger specs as JSON`,
})

/** Parses (on this thread) and sanity-checks a document: `openapi: 3.0.x | 3.1.x` and a `paths` object. */
export function readOpenApi(input: unknown): ReadResult {
  if (typeof input !== 'string') return checkOpenApi(input)
  // the shape before any parser: JSON natively (far cheaper than YAML), YAML only when it is not JSON
  const json = looksLikeJson(input)
  // the size first: a text refused for its size is not lexed for its depth
  if (!json && input.length > MAX_YAML_BYTES) return tooLargeYaml(input)
  const deep = json ? jsonTooDeep(input) : yamlTooDeep(input)
  if (deep) return { ok: false, message: `the OpenAPI document is ${deep.message}` }
  let doc: unknown
  try {
    if (json) doc = JSON.parse(input)
    else {
      parsedHere.documents++
      parsedHere.characters += input.length
      doc = yamlModule().parse(input, { maxAliasCount: 100 })
    }
  } catch (e) {
    return { ok: false, message: `the OpenAPI document does not parse: ${(e as Error).message.split('\n')[0]}` }
  }
  return checkOpenApi(doc)
}

/** A YAML text parsed elsewhere (a parse worker), checked as readOpenApi checks the text it parses. */
export function readParsedOpenApi(parsed: YamlResult): ReadResult {
  if (parsed.ok) return checkOpenApi(parsed.value.data)
  const [issue] = parsed.issues
  const where = issue?.line ? ` at line ${issue.line}, column ${issue.column}` : ''
  const message = issue?.message ?? 'unknown error'
  return /^nested deeper/.test(message)
    ? { ok: false, message: `the OpenAPI document is ${message}` }
    : { ok: false, message: `the OpenAPI document does not parse: ${message}${message.includes(' at line ') ? '' : where}` }
}

/**
 * readOpenApi with a long YAML text parsed through `yaml` (a parse worker, shared fairly between
 * tenants) instead of on this thread.
 */
export async function readOpenApiVia(input: unknown, yaml: YamlParsing, at: { tenant: string; path?: string }): Promise<ReadResult> {
  if (typeof input !== 'string' || !isLongYaml(input)) return readOpenApiInSlices(input)
  if (input.length > MAX_YAML_BYTES) return tooLargeYaml(input)
  return readParsedOpenApi(await yaml.parse(input, at))
}

/**
 * readOpenApi with a long JSON text (a stored spec, up to 1 MiB) parsed in slices
 * (lib/config/json-slices.ts), so reading it holds the event loop no longer than a chunk at a time.
 */
export async function readOpenApiInSlices(input: unknown): Promise<ReadResult> {
  if (typeof input !== 'string' || input.length <= CHUNK_CHARS || !looksLikeJson(input)) return readOpenApi(input)
  const parsed = await parseJsonInSlices(input)
  if (parsed.ok) return checkOpenApi(parsed.value)
  if (!('issue' in parsed)) return { ok: false, message: 'the OpenAPI document does not parse' }
  return parsed.tooDeep
    ? { ok: false, message: `the OpenAPI document is ${parsed.issue.message}` }
    : { ok: false, message: `the OpenAPI document does not parse: ${parsed.issue.message}` }
}

function checkOpenApi(doc: unknown): ReadResult {
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
