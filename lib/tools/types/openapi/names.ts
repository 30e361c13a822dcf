/**
 * Sub-tool names of an OpenAPI pack: `<pack>__<operationId>` with characters a model API refuses
 * replaced, operationIds derived for operations without one, globs for include/exclude and
 * overrides, and a stable shortened form for names over the 64-character limit.
 */
import { createHash } from 'node:crypto'
import { PACK_SEPARATOR } from '../../../config/server-tool'

/** OpenAI and Anthropic both refuse tool names over 64 characters (`^[a-zA-Z0-9_-]{1,64}$`). */
export const MAX_FULL_TOOL_NAME = 64
const HASH_CHARS = 6

/** `.` and every character outside `[A-Za-z0-9_-]` become `_`; runs of `_` collapse (a local name never holds `__`). */
export function sanitizeLocalName(operationId: string): string {
  return operationId
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '')
}

/** `GET /pets/{petId}/photos` → `get_pets_petId_photos`; `GET /` → `get_root`. */
export function derivedOperationId(method: string, path: string): string {
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((seg) => seg.replace(/[{}]/g, ''))
  return sanitizeLocalName([method.toLowerCase(), ...(parts.length ? parts : ['root'])].join('_'))
}

export const shortHash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_CHARS)

/**
 * The local name to publish for a sub-tool of `pack`: unchanged when `<pack>__<local>` fits in 64
 * characters, else cut and suffixed with `_` + 6 hex characters of the SHA-256 of the full local
 * name — stable across deployments and runs, and distinct for distinct long names.
 */
export function fitLocalName(pack: string, local: string): string {
  const budget = MAX_FULL_TOOL_NAME - pack.length - PACK_SEPARATOR.length
  if (local.length <= budget) return local
  const keep = Math.max(1, budget - HASH_CHARS - 1)
  const head = local.slice(0, keep).replace(/[_-]+$/, '')
  return `${head}_${shortHash(local)}`
}

/** `*` any run, `?` one character, case-insensitive, whole-string. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  return new RegExp(`^${body}$`, 'i')
}

export function matchesAny(globs: RegExp[], candidates: string[]): boolean {
  return globs.some((g) => candidates.some((c) => g.test(c)))
}
