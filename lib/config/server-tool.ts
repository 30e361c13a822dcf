/**
 * The server-tool document (spec §2): schema, name rules, parsing with positions, defaults.
 * Strict on write (unknown fields are errors), lenient on read (unknown fields are warnings),
 * because documents also arrive through the raw documents API and older tenant layers.
 */
import type { Issue } from '../errors'
import { type JsonSchema, validateAgainst } from './json-schema'
import { closest, keyPosition, locate, notAMapping, parseYaml, type YamlResult, type YamlSource } from './yaml'

export const PACK_SEPARATOR = '__'
/** The capability floor (spec §13.1) and invoke_tool: never configurable. */
export const RESERVED_TOOL_NAMES = ['tool_list', 'tool_description', 'invoke_tool'] as const

export interface ServerToolConfig<P = Record<string, unknown>> {
  name: string
  type: string
  description: string
  enabled: boolean
  primary: boolean
  labels: string[]
  disabledSubTools: string[]
  defaultDeferred: boolean
  promptHint?: string
  searchHint?: string
  parameters: P
}

/** What parsing a config needs from its tool type: the rules for `parameters`. */
export interface ToolParameters<P = any> {
  typeId: string
  /** JSON Schema of `parameters`, validated on write (422) and again on lookup. */
  parametersSchema: JsonSchema
  /** Rules the JSON Schema can't say (unique names, exactly-one-of); pointers relative to `parameters`. */
  check?(parameters: P, at?: CheckContext): { pointer: string; message: string }[]
}

/** What a type's check may know of where it runs. */
export interface CheckContext {
  /** A write is judged; a read re-reads what a write already judged (a check may skip costly work then). */
  mode: 'write' | 'read'
  /** A YAML text of the parameters as the write parsed it (YamlSource `nested`), if it did. */
  parsedText(text: string): YamlResult | undefined
}

/** Where a tool document's parameters hold YAML text of their own: parsed ahead by the write (checkDocumentWrite). */
export const NESTED_YAML_FIELDS = ['specInline'] as const

export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/
export const MAX_TOOL_NAME_LENGTH = 48
export const SERVER_TOOLS_PREFIX = 'server-tools/'

export const serverToolPath = (name: string) => `${SERVER_TOOLS_PREFIX}${name}.yaml`
export const nameFromPath = (path: string) => path.slice(SERVER_TOOLS_PREFIX.length).replace(/\.ya?ml$/, '')

/**
 * Why a name can't name a server tool, or undefined when it can. Names are taken as written: an
 * upper-case or padded name is refused, not quietly folded onto another tool's name.
 */
export function toolNameProblem(name: string): string | undefined {
  if (!name) return 'a tool name must not be empty'
  if (name !== name.toLowerCase())
    return `tool name '${name}' must be lower case: tool names are lower case (did you mean '${name.toLowerCase()}'?)`
  if (name.length > MAX_TOOL_NAME_LENGTH) return `tool name '${name}' is longer than ${MAX_TOOL_NAME_LENGTH} characters`
  if (name.includes('@')) return `tool name '${name}' must not contain '@' (it marks label selectors)`
  if (name.includes(PACK_SEPARATOR))
    return `tool name '${name}' must not contain '${PACK_SEPARATOR}' (it separates a pack from its sub-tools)`
  if (!TOOL_NAME_PATTERN.test(name)) return `tool name '${name}' must start with a letter and contain only a-z, 0-9, '_' and '-'`
  return undefined
}

export const isReservedToolName = (name: string) => (RESERVED_TOOL_NAMES as readonly string[]).includes(name)

/**
 * The write-time judgement of a tool document, whichever route writes it (the admin route, the raw
 * documents route, the CLI's apply): a YAML file directly inside server-tools/ is read as a tool,
 * so a write that the admin route would refuse is refused everywhere — otherwise a broken copy in
 * a project would hide the tenant's working tool of that name. Undefined for paths that hold no
 * tool (notes beside the tools, subfolders).
 */
export function checkServerToolWrite(path: string, body: YamlSource, types: TypeLookup): ConfigResult | undefined {
  if (!path.startsWith(SERVER_TOOLS_PREFIX)) return undefined
  const rest = path.slice(SERVER_TOOLS_PREFIX.length)
  if (rest.includes('/') || !/\.ya?ml$/.test(rest)) return undefined
  const name = nameFromPath(path)
  const refuse = (pointer: string, message: string): ConfigResult => ({ ok: false, issues: [{ path, pointer, message }] })
  if (serverToolPath(name) !== path) return refuse('/path', `a tool document is named ${serverToolPath(name)} (.yaml, not .yml)`)
  const nameProblem = toolNameProblem(name)
  if (nameProblem) return refuse('/path', nameProblem)
  if (isReservedToolName(name))
    return refuse(
      '/name',
      `'${name}' is a reserved tool name: the capability floor (tool_list, tool_description) and invoke_tool are not configurable`,
    )
  return parseServerTool(body, name, { mode: 'write', types, path })
}

const stringList = { type: 'array', items: { type: 'string', minLength: 1 } }

export const serverToolSchema = {
  type: 'object',
  required: ['type', 'description'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', minLength: 1 },
    description: { type: 'string', minLength: 1 },
    enabled: { type: 'boolean' },
    primary: { type: 'boolean' },
    labels: stringList,
    disabledSubTools: stringList,
    defaultDeferred: { type: 'boolean' },
    promptHint: { type: 'string' },
    searchHint: { type: 'string' },
    parameters: { type: 'object' },
  },
}

export const SERVER_TOOL_FIELDS = Object.keys(serverToolSchema.properties)

export interface TypeLookup {
  find(typeId: string): ToolParameters | undefined
  typeIds(): string[]
}

export type ConfigResult = { ok: true; config: ServerToolConfig; warnings: string[] } | { ok: false; issues: Issue[] }

/**
 * Parses and validates one server-tool document. Every problem is reported at once, each with
 * its JSON pointer and, where the text has one, its line and column.
 */
export function parseServerTool(
  text: YamlSource,
  name: string,
  opts: { mode: 'write' | 'read'; types: TypeLookup; path?: string },
): ConfigResult {
  const path = opts.path ?? serverToolPath(name)
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, issues: [notAMapping(data, path, 'a server tool', 'type and description')] }
  }
  const raw = { ...(data as Record<string, unknown>) }
  const issues: Issue[] = []
  const warnings: string[] = []

  for (const key of Object.keys(raw)) {
    if (SERVER_TOOL_FIELDS.includes(key)) continue
    const hint = closest(key, SERVER_TOOL_FIELDS)
    const message = `unknown field '${key}'${hint ? ` — did you mean '${hint}'?` : ''}`
    if (opts.mode === 'write') {
      const pos = keyPosition(parsed.value, key)
      issues.push({ path, pointer: `/${key}`, ...pos, message })
    } else warnings.push(message)
    delete raw[key]
  }

  issues.push(...locate(parsed.value, validateAgainst(serverToolSchema, raw), path))

  // A YAML `name` is compared folded, as documents written before names were strict spelled it.
  if (typeof raw.name === 'string' && raw.name.trim().toLowerCase() !== name) {
    issues.push(
      ...locate(
        parsed.value,
        [{ pointer: '/name', message: `name '${raw.name}' in the document does not match '${name}' from the path` }],
        path,
      ),
    )
  }

  const factory = typeof raw.type === 'string' ? opts.types.find(raw.type) : undefined
  if (typeof raw.type === 'string' && raw.type && !factory) {
    const known = opts.types.typeIds()
    const hint = closest(raw.type, known)
    issues.push(
      ...locate(
        parsed.value,
        [
          {
            pointer: '/type',
            message: `unknown type '${raw.type}'${hint ? ` — did you mean '${hint}'?` : ''}; known types: ${known.join(', ')}`,
          },
        ],
        path,
      ),
    )
  }

  const parameters = (raw.parameters ?? {}) as Record<string, unknown>
  if (factory && parameters && typeof parameters === 'object' && !Array.isArray(parameters)) {
    const paramIssues = validateAgainst(factory.parametersSchema, parameters, '/parameters')
    if (!paramIssues.length && factory.check) {
      const nested = typeof text === 'string' ? undefined : text.nested
      const at: CheckContext = { mode: opts.mode, parsedText: (t) => nested?.get(t) }
      paramIssues.push(...factory.check(parameters, at).map((p) => ({ pointer: `/parameters${p.pointer}`, message: p.message })))
    }
    issues.push(...locate(parsed.value, paramIssues, path))
  }

  if (issues.length) return { ok: false, issues }
  return { ok: true, warnings, config: withDefaults(name, raw) }
}

function withDefaults(name: string, raw: Record<string, unknown>): ServerToolConfig {
  return {
    name,
    type: raw.type as string,
    description: raw.description as string,
    enabled: (raw.enabled as boolean | undefined) ?? true,
    primary: (raw.primary as boolean | undefined) ?? false,
    labels: (raw.labels as string[] | undefined) ?? [],
    disabledSubTools: (raw.disabledSubTools as string[] | undefined) ?? [],
    defaultDeferred: (raw.defaultDeferred as boolean | undefined) ?? false,
    ...(raw.promptHint !== undefined ? { promptHint: raw.promptHint as string } : {}),
    ...(raw.searchHint !== undefined ? { searchHint: raw.searchHint as string } : {}),
    parameters: (raw.parameters as Record<string, unknown> | undefined) ?? {},
  }
}
