/**
 * Recipe and engine documents (issue 6 §1): schemas, parsing with positions, defaults. They are
 * strict (an unknown field is an error: a typo such as `allowedToolAdd` must not silently drop a
 * rule). The model catalog documents they name are read by lib/models.
 */
import { EXPANSION_LIMITS } from '../config/expansion-budget'
import { validateAgainst } from '../config/json-schema'
import { closest, keyPosition, locate, type ParsedYaml, parseYaml, type YamlSource } from '../config/yaml'
import type { Issue } from '../errors'
import { parseModelRef } from '../models/documents'
import { modelChainTooLong } from './spawn-limits'

export { modelChainTooLong } from './spawn-limits'

export const RECIPES_PREFIX = 'recipes/'
export const ENGINES_PREFIX = 'engines/'

export const recipePath = (name: string) => `${RECIPES_PREFIX}${name}.yaml`
export const enginePath = (name: string) => `${ENGINES_PREFIX}${name}.yaml`

/** Recipe and engine names (the same rule as model instances). */
export const DOC_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
const TOOL_ENTRY = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/
const PREFIX_ENTRY = /^[A-Za-z0-9][A-Za-z0-9_.-]*\*$/

export const DEFAULT_ACTIVATION_TTL = '15m'

/** A parsed entry of an allowedTools*-list. */
export type ToolEntry =
  | { kind: 'name'; name: string }
  | { kind: 'label'; label: string }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'nothing' }

export interface EngineConfig {
  name: string
  description?: string
  /** Empty = unrestricted (every tool of the project at spawn time). */
  allowedTools: string[]
  roles: string[]
}

export interface RecipeConfig {
  name: string
  description?: string
  engine: string
  allowedToolsAdd: string[]
  allowedToolsRemove: string[]
  allowedToolsDefer: string[]
  allowedToolsKeep: string[]
  allowedToolsDropFirst: string[]
  /** Model chain, primary first: `instance/model`. */
  models: string[]
  activationTtl: string
  activationTtlMs: number
  /**
   * `native`: tools in the manifest; `code`: the floor and one code tool with a typed API (issue 27).
   * Absent: as the model chain's endpoint profiles say, else native (lib/surface/surface.ts codeChoice).
   */
  surface?: RecipeSurface
  /** Code mode: tools labelled `destructive` may be called from code (default false). */
  codeAllowDestructive: boolean
}

export const RECIPE_SURFACES = ['native', 'code'] as const
export type RecipeSurface = (typeof RECIPE_SURFACES)[number]

export type DocResult<T> = { ok: true; config: T } | { ok: false; issues: Issue[] }

const stringList = { type: 'array', items: { type: 'string', minLength: 1 } }

const engineSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    allowedTools: stringList,
    roles: stringList,
  },
}

const recipeSchema = {
  type: 'object',
  required: ['engine'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    engine: { type: 'string', minLength: 1 },
    allowedToolsAdd: stringList,
    allowedToolsRemove: stringList,
    allowedToolsDefer: stringList,
    allowedToolsKeep: stringList,
    allowedToolsDropFirst: stringList,
    models: stringList,
    activationTtl: { type: 'string', minLength: 1 },
    surface: { enum: [...RECIPE_SURFACES] },
    codeAllowDestructive: { type: 'boolean' },
  },
}

/** `@label`, `name`, and (where `prefixes`) `prefix*`; a lone `*` is accepted and matches nothing. */
export function parseEntry(raw: string, prefixes: boolean): ToolEntry | string {
  if (raw.startsWith('@')) {
    const label = raw.slice(1)
    return label && !/\s/.test(label)
      ? { kind: 'label', label }
      : `'${raw}' is not a label selector ('@' followed by a label without spaces)`
  }
  if (raw === '*')
    return prefixes ? { kind: 'nothing' } : `'*' is not allowed here (only allowedToolsKeep and allowedToolsDropFirst take patterns)`
  if (raw.endsWith('*')) {
    if (!prefixes) return `'${raw}' is a pattern; only allowedToolsKeep and allowedToolsDropFirst take 'prefix*' patterns`
    return PREFIX_ENTRY.test(raw)
      ? { kind: 'prefix', prefix: raw.slice(0, -1) }
      : `'${raw}' is not a 'prefix*' pattern (a tool-name prefix followed by one '*')`
  }
  return TOOL_ENTRY.test(raw) ? { kind: 'name', name: raw } : `'${raw}' is neither a tool name nor an '@label' selector`
}

/** `15m`, `90s`, `1h30m`, `2h` → milliseconds; undefined when malformed or zero. */
export function parseDuration(text: string): number | undefined {
  const m = /^(?:(\d{1,4})h)?(?:(\d{1,5})m)?(?:(\d{1,6})s)?$/.exec(text.trim())
  if (!m || !text.trim()) return undefined
  const ms = ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000
  return ms > 0 ? ms : undefined
}

function mapping(
  text: YamlSource,
  path: string,
): { ok: true; parsed: ParsedYaml; raw: Record<string, unknown> } | { ok: false; issues: Issue[] } {
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data
  if (data === null || data === undefined) return { ok: true, parsed: parsed.value, raw: {} }
  if (typeof data !== 'object' || Array.isArray(data))
    return {
      ok: false,
      issues: [{ path, pointer: '', line: 1, column: 1, message: 'the document must be a YAML mapping (key: value lines)' }],
    }
  return { ok: true, parsed: parsed.value, raw: { ...(data as Record<string, unknown>) } }
}

function unknownFields(parsed: ParsedYaml, raw: Record<string, unknown>, known: string[], path: string): Issue[] {
  const issues: Issue[] = []
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue
    const hint = closest(key, known)
    const message = `unknown field '${key}'${hint ? ` — did you mean '${hint}'?` : ''}`
    const pos = keyPosition(parsed, key)
    issues.push({ path, pointer: `/${key}`, ...pos, message })
  }
  return issues
}

function entryIssues(raw: Record<string, unknown>, field: string, prefixes: boolean): Issue[] {
  const list = raw[field]
  if (!Array.isArray(list)) return []
  const out: Issue[] = []
  list.forEach((e, i) => {
    if (typeof e !== 'string') return
    const r = parseEntry(e, prefixes)
    if (typeof r === 'string') out.push({ pointer: `/${field}/${i}`, message: `${field}[${i}]: ${r}` })
  })
  return out
}

function nameIssue(raw: Record<string, unknown>, name: string): Issue[] {
  return typeof raw.name === 'string' && raw.name !== name
    ? [{ pointer: '/name', message: `name '${raw.name}' in the document does not match '${name}' from the path` }]
    : []
}

export function parseEngine(text: YamlSource, name: string, path = enginePath(name)): DocResult<EngineConfig> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const issues = [
    ...unknownFields(m.parsed, m.raw, Object.keys(engineSchema.properties), path),
    ...locate(
      m.parsed,
      [...validateAgainst(engineSchema, m.raw), ...nameIssue(m.raw, name), ...entryIssues(m.raw, 'allowedTools', false)],
      path,
    ),
  ]
  if (issues.length) return { ok: false, issues }
  return {
    ok: true,
    config: {
      name,
      ...(typeof m.raw.description === 'string' ? { description: m.raw.description } : {}),
      allowedTools: (m.raw.allowedTools as string[] | undefined) ?? [],
      roles: (m.raw.roles as string[] | undefined) ?? [],
    },
  }
}

export function parseRecipe(text: YamlSource, name: string, path = recipePath(name)): DocResult<RecipeConfig> {
  const m = mapping(text, path)
  if (!m.ok) return m
  const raw = m.raw
  const semantic: Issue[] = [...nameIssue(raw, name)]
  if (typeof raw.engine === 'string' && raw.engine && !DOC_NAME_PATTERN.test(raw.engine))
    semantic.push({
      pointer: '/engine',
      message: `engine '${raw.engine}' is not a valid engine name (lower-case letters, digits, '_' or '-')`,
    })
  for (const f of ['allowedToolsAdd', 'allowedToolsRemove', 'allowedToolsDefer']) semantic.push(...entryIssues(raw, f, false))
  for (const f of ['allowedToolsKeep', 'allowedToolsDropFirst']) semantic.push(...entryIssues(raw, f, true))
  if (Array.isArray(raw.models) && raw.models.length > EXPANSION_LIMITS.modelChain)
    semantic.push({
      pointer: '/models',
      message: modelChainTooLong(raw.models.length),
    })
  else if (Array.isArray(raw.models)) {
    raw.models.forEach((ref, i) => {
      if (typeof ref !== 'string') return
      const r = parseModelRef(ref)
      if (typeof r === 'string') semantic.push({ pointer: `/models/${i}`, message: r })
    })
  }
  const ttlText = typeof raw.activationTtl === 'string' ? raw.activationTtl : DEFAULT_ACTIVATION_TTL
  const ttl = parseDuration(ttlText)
  if (ttl === undefined)
    semantic.push({ pointer: '/activationTtl', message: `activationTtl '${ttlText}' is not a duration like '15m', '90s' or '1h30m'` })
  if (raw.codeAllowDestructive === true && raw.surface === 'native')
    semantic.push({
      pointer: '/codeAllowDestructive',
      message: 'codeAllowDestructive applies only to a recipe that may run in code mode (surface: code, or no surface)',
    })
  const issues = [
    ...unknownFields(m.parsed, raw, Object.keys(recipeSchema.properties), path),
    ...locate(m.parsed, [...validateAgainst(recipeSchema, raw), ...semantic], path),
  ]
  if (issues.length) return { ok: false, issues }
  const list = (f: string) => (raw[f] as string[] | undefined) ?? []
  return {
    ok: true,
    config: {
      name,
      ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
      engine: raw.engine as string,
      allowedToolsAdd: list('allowedToolsAdd'),
      allowedToolsRemove: list('allowedToolsRemove'),
      allowedToolsDefer: list('allowedToolsDefer'),
      allowedToolsKeep: list('allowedToolsKeep'),
      allowedToolsDropFirst: list('allowedToolsDropFirst'),
      models: list('models'),
      activationTtl: ttlText,
      activationTtlMs: ttl!,
      ...(raw.surface === 'code' || raw.surface === 'native' ? { surface: raw.surface } : {}),
      codeAllowDestructive: raw.codeAllowDestructive === true,
    },
  }
}

/**
 * The kind of agent-surface document a path names, with its name, or undefined for other paths.
 * Used to validate documents written through the raw documents API.
 */
export function surfaceDocumentOf(path: string): { kind: 'recipe' | 'engine'; name: string } | undefined {
  let m = /^recipes\/([^/]+)\.ya?ml$/.exec(path)
  if (m) return { kind: 'recipe', name: m[1] }
  m = /^engines\/([^/]+)\.ya?ml$/.exec(path)
  if (m) return { kind: 'engine', name: m[1] }
  return undefined
}

/** Every problem of a surface document at `path` (empty when valid or not a surface document). */
export function checkSurfaceDocument(path: string, text: YamlSource): Issue[] {
  const kind = surfaceDocumentOf(path)
  if (!kind) return []
  const nameProblem = (name: string, what: string): Issue[] =>
    DOC_NAME_PATTERN.test(name)
      ? []
      : [{ path, pointer: '', message: `${what} name '${name}' must be lower-case letters, digits, '_' or '-' (at most 64)` }]
  let r: DocResult<unknown>
  switch (kind.kind) {
    case 'recipe':
      r = parseRecipe(text, kind.name, path)
      return [...nameProblem(kind.name, 'recipe'), ...(r.ok ? [] : r.issues)]
    case 'engine':
      r = parseEngine(text, kind.name, path)
      return [...nameProblem(kind.name, 'engine'), ...(r.ok ? [] : r.issues)]
  }
}
