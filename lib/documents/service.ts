/**
 * Raw documents (scripts, Markdown, recipes, engines, model catalog, MCP servers): the same
 * versioned store as tool documents, with safe paths and size limits.
 */
import { checkDocumentWrite, unsafeCharacter } from '../config/text-hygiene'
import { INLINE_YAML, type YamlParsing, type YamlSource } from '../config/yaml'
import { type Issue, invalidConfig, invalidInput, ServerToolsError } from '../errors'
import type { DocumentCascade, LayeredDocument } from './cascade'
import type { DocumentStore, HeldBody, SizedDocument, StoredDocument } from './ports'
import { MAX_DOCUMENT_BYTES, scopeOf } from './ports'
import { deleteConditions, liveVersion, type Preconditions, writeConditions } from './preconditions'

export const MAX_PATH_LENGTH = 512

/** `a//b/./c` → `a/b/c`; absolute paths, `..`, control characters and empty paths are refused. */
export function normalizeDocumentPath(raw: string): string {
  const problem = (why: string) => invalidInput(`document path '${raw.slice(0, 100)}' ${why}`, [{ pointer: '/path', message: why }])
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw))
    throw problem('must be relative (no leading / or drive letter)')
  if (raw.includes('\\')) throw problem('must not contain backslashes')
  const unsafe = unsafeCharacter(raw, 'single-line')
  if (unsafe) throw problem(`must not contain control characters or bidi overrides (${unsafe.character} at character ${unsafe.position})`)
  const parts: string[] = []
  for (const seg of raw.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') throw problem("must not contain '..'")
    parts.push(seg)
  }
  const path = parts.join('/')
  if (!path) throw problem('must not be empty')
  if (path.length > MAX_PATH_LENGTH) throw problem(`must be at most ${MAX_PATH_LENGTH} characters`)
  return path
}

/**
 * Problems of a document a feature owns (e.g. recipes/*.yaml); empty for valid or foreign paths.
 * The body comes with its JSON form when it has one, so the check does not parse the YAML again.
 */
export type DocumentCheck = (path: string, body: YamlSource) => Issue[]

export class DocumentService {
  constructor(
    private readonly store: DocumentStore,
    private readonly cascade: DocumentCascade,
    /** Validates bodies on write: a 422 with positions instead of a document that fails later. */
    private readonly check?: DocumentCheck,
    /** Where bodies are parsed (a worker pool for long ones, composed in functions/deps.ts). */
    private readonly yaml: YamlParsing = INLINE_YAML,
  ) {}

  /** The innermost document at the path (project → _tenant → bundled). */
  read(tenant: string, project: string, rawPath: string): Promise<LayeredDocument | undefined> {
    return this.cascade.read(tenant, project, normalizeDocumentPath(rawPath))
  }

  async put(
    tenant: string,
    project: string,
    rawPath: string,
    body: string,
    opts: { actor: string; preconditions?: Preconditions },
  ): Promise<StoredDocument & { created: boolean }> {
    const path = normalizeDocumentPath(rawPath)
    if (Buffer.byteLength(body, 'utf8') > MAX_DOCUMENT_BYTES)
      throw new ServerToolsError('TOO_LARGE', `a document may be at most ${MAX_DOCUMENT_BYTES} bytes`)
    const { issues, json, source } = await checkDocumentWrite(this.yaml, tenant, path, body)
    if (!issues.length) issues.push(...(this.check?.(path, source) ?? []))
    if (issues.length) throw invalidConfig(`${path} is not valid (${issues.length} problem${issues.length > 1 ? 's' : ''})`, issues)
    const key = { scope: scopeOf(tenant, project), path }
    const conditions = await writeConditions(path, opts.preconditions ?? {}, liveVersion(this.store, key))
    return this.store.put({ key, body, json, actor: opts.actor }, conditions)
  }

  async delete(tenant: string, project: string, rawPath: string, preconditions: Preconditions = {}): Promise<void> {
    const key = { scope: scopeOf(tenant, project), path: normalizeDocumentPath(rawPath) }
    await this.store.delete(key, await deleteConditions(key.path, preconditions, liveVersion(this.store, key)))
  }

  /** This layer's documents under a prefix (metadata only is what callers usually want). */
  list(tenant: string, project: string, prefix = ''): Promise<StoredDocument[]> {
    return this.store.list(scopeOf(tenant, project), prefix)
  }

  /** This layer's documents under a prefix with their sizes, bodies while they fit `bodyBytes` (DocumentStore.listSized). */
  listSized(tenant: string, project: string, prefix: string, bodyBytes: number, held?: HeldBody): Promise<SizedDocument[]> {
    return this.store.listSized(scopeOf(tenant, project), prefix, bodyBytes, held)
  }
}
