/**
 * A layer as files (configuration as code): a directory whose relative paths are the document
 * paths of one layer (`server-tools/x.yaml`, `recipes/r.yaml`, `models/openai/_provider.yaml`, …).
 * Only these top-level folders and files (`quotas.yaml`) belong to a layer; anything else in the
 * directory is not the service's business (a README, CI files), so plan, apply and pull never touch it.
 */

import { nameFromPath, SERVER_TOOLS_PREFIX, serverToolPath } from '../config/server-tool'
import { closest } from '../config/yaml'
import { TENANT_ALLOW_LIST_PATH } from '../egress/tenant-allow-list'
import { QUOTAS_PATH } from '../quotas/rules'

export const LAYER_FOLDERS = ['server-tools', 'recipes', 'engines', 'models', 'mcp-servers', 'documents', 'scripts', 'egress'] as const
/** Documents at the top of a layer, beside the folders. */
export const LAYER_ROOT_FILES = [QUOTAS_PATH] as const

/**
 * Write order: what others refer to first (the model catalog, MCP servers, specs and scripts
 * before the tools that name them; engines before recipes). Deletes run in the reverse order.
 */
// quotas first: a tightened cap is in force before the tools it is meant for change
const WRITE_ORDER: readonly string[] = [
  QUOTAS_PATH,
  'egress',
  'models',
  'mcp-servers',
  'documents',
  'scripts',
  'engines',
  'server-tools',
  'recipes',
]

export interface LayerFile {
  path: string
  body: string
}

export const isLayerPath = (path: string) =>
  ((LAYER_FOLDERS as readonly string[]).includes(path.split('/')[0]) && path.includes('/')) ||
  (LAYER_ROOT_FILES as readonly string[]).includes(path)

/** The server-tool name a path holds, or undefined for other documents. */
export function serverToolNameOf(path: string): string | undefined {
  if (!path.startsWith(SERVER_TOOLS_PREFIX)) return undefined
  const name = nameFromPath(path)
  return serverToolPath(name) === path && !name.includes('/') ? name : undefined
}

/** Why a path inside a layer directory cannot be a document of that layer, or undefined. */
export function layerPathProblem(path: string, project: string): string | undefined {
  const [top] = path.split('/')
  if ((LAYER_ROOT_FILES as readonly string[]).includes(path)) return undefined
  if (!(LAYER_FOLDERS as readonly string[]).includes(top)) {
    const hint = closest(top, LAYER_FOLDERS)
    return `'${top}/' is not a layer folder${hint ? ` — did you mean '${hint}/'?` : ''} (a layer holds ${LAYER_FOLDERS.map((f) => `${f}/`).join(', ')})`
  }
  if (top === 'server-tools' && serverToolNameOf(path) === undefined)
    return `server-tools/ holds one <name>.yaml per tool, directly inside it`
  if (top === 'egress' && path !== TENANT_ALLOW_LIST_PATH) return `egress/ holds only allow.yaml`
  if (path === TENANT_ALLOW_LIST_PATH && project !== '_tenant')
    return `egress/allow.yaml is read from the _tenant layer only; a project cannot widen its tenant's egress`
  return undefined
}

/** Sort key for writes (creates and updates); deletes use the reverse. */
export function writeRank(path: string): number {
  const top = path.split('/')[0]
  const i = WRITE_ORDER.indexOf(top)
  // a provider before the models of its instance
  const provider = path.endsWith('/_provider.yaml') ? 0 : 1
  return (i < 0 ? WRITE_ORDER.length : i) * 2 + provider
}

/** A relative path as the layer names it: forward slashes, no leading './'. */
export const layerPath = (relative: string) => relative.split('\\').join('/').replace(/^\.\//, '')

/** Text as the service stores it: the HTTP layer decodes UTF-8 and drops a byte-order mark. */
export const asStored = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
