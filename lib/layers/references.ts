/**
 * Which documents a layer's documents name: a recipe its engine, tools and models; an engine its
 * tools; a tool its script, spec, document, MCP server or model. Pruning asks it before deleting,
 * so a document that a recipe, engine or pack elsewhere still names is deleted knowingly.
 */
import { PACK_SEPARATOR } from '../config/server-tool'
import { parseYaml } from '../config/yaml'
import { mcpServerPath } from '../mcp/server-doc'
import { type LayerFile, serverToolNameOf } from './layer'

/** One name a document gives: the document path it resolves to, and where it is written. */
export interface Reference {
  to: string
  pointer: string
}

const TOOL_LISTS = [
  'allowedTools',
  'allowedToolsAdd',
  'allowedToolsRemove',
  'allowedToolsDefer',
  'allowedToolsKeep',
  'allowedToolsDropFirst',
]

export function referencesOf(file: LayerFile): Reference[] {
  if (!/\.ya?ml$/.test(file.path)) return []
  const parsed = parseYaml(file.body)
  const data = parsed.ok ? parsed.value.data : undefined
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return []
  const d = data as Record<string, unknown>
  const refs: Reference[] = []
  const top = file.path.split('/')[0]
  if (top === 'recipes' || top === 'engines') {
    if (top === 'recipes' && typeof d.engine === 'string') refs.push({ to: `engines/${d.engine}.yaml`, pointer: '/engine' })
    for (const field of TOOL_LISTS) {
      const list = d[field]
      if (!Array.isArray(list)) continue
      list.forEach((entry, i) => {
        // label selectors and patterns name no one document
        if (typeof entry !== 'string' || entry.startsWith('@') || entry.endsWith('*')) return
        const sep = entry.indexOf(PACK_SEPARATOR)
        refs.push({ to: `server-tools/${sep > 0 ? entry.slice(0, sep) : entry}.yaml`, pointer: `/${field}/${i}` })
      })
    }
    if (Array.isArray(d.models))
      d.models.forEach((m, i) => {
        if (typeof m === 'string') refs.push(...modelRefs(m, `/models/${i}`))
      })
  }
  if (serverToolNameOf(file.path) !== undefined && d.parameters && typeof d.parameters === 'object') {
    const p = d.parameters as Record<string, unknown>
    for (const key of ['scriptPath', 'specPath', 'path'])
      if (typeof p[key] === 'string') refs.push({ to: p[key] as string, pointer: `/parameters/${key}` })
    if (typeof p.server === 'string') refs.push({ to: mcpServerPath(p.server), pointer: '/parameters/server' })
    if (typeof p.model === 'string') refs.push(...modelRefs(p.model, '/parameters/model'))
  }
  return refs
}

/** `instance/model` names the instance's provider and, when the layer has one, the model's own document. */
function modelRefs(name: string, pointer: string): Reference[] {
  const slash = name.indexOf('/')
  if (slash <= 0) return []
  const instance = name.slice(0, slash)
  return [
    { to: `models/${instance}/_provider.yaml`, pointer },
    { to: `models/${instance}/${name.slice(slash + 1)}.yaml`, pointer },
  ]
}

/** A document about to be deleted that another one still names. */
export interface Dangling {
  deleted: string
  /** The layer of the naming document (a project id or _tenant) and its path and pointer. */
  layer: string
  path: string
  pointer: string
}

/**
 * Deleted paths still named by documents of the given layers. A layer that holds its own copy of
 * a deleted path is not affected (its names resolve to that copy), and neither is one whose
 * names fall through to an outer layer that keeps the path (`outer`).
 */
export function danglingReferences(
  deleted: readonly string[],
  layers: readonly { layer: string; files: readonly LayerFile[]; outer?: ReadonlySet<string> }[],
): Dangling[] {
  const gone = new Set(deleted)
  const found: Dangling[] = []
  for (const { layer, files, outer } of layers) {
    const own = new Set(files.map((f) => f.path))
    for (const file of files) {
      for (const ref of referencesOf(file)) {
        if (!gone.has(ref.to) || own.has(ref.to) || outer?.has(ref.to)) continue
        found.push({ deleted: ref.to, layer, path: file.path, pointer: ref.pointer })
      }
    }
  }
  return found
}
