/**
 * What keeps a layer command from hitting the wrong layer or deleting more than was meant: the
 * layer is always named, a directory named after another layer is refused, a prune of more than
 * a few documents needs their count spelled out, and a document still named elsewhere is reported
 * before it goes.
 */
import { readdir } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { TENANT_LAYER } from '../../lib/documents/ports'
import { isLayerPath, type LayerFile } from '../../lib/layers/layer'
import type { Change } from '../../lib/layers/plan'
import { type Dangling, danglingReferences } from '../../lib/layers/references'
import { loadBundledFiles } from '../defaults'
import { isValidProjectId } from '../http/auth'
import type { ServerToolsClient } from './client'
import { readState } from './pull'

/** Deletes a prune may make without `--expect-deletes N`; a CI job that suddenly deletes more stops. */
export const PRUNE_THRESHOLD = 5

export class GuardFailure extends Error {}

export interface LayerOptions {
  project?: string
  layer?: string
  ignoreDirName?: boolean
}

/** The target layer, spelled out: `--project <id>` for a project, `--layer <id>` for any layer, `_tenant` included. */
export function targetLayer(o: LayerOptions): string {
  if (o.project !== undefined && o.layer !== undefined && o.project !== o.layer)
    throw new GuardFailure(`--project ${o.project} and --layer ${o.layer} name different layers; give one`)
  if (o.project === TENANT_LAYER)
    throw new GuardFailure(`the tenant layer is every project's outer layer: name it with --layer ${TENANT_LAYER}, not --project`)
  const layer = o.layer ?? o.project
  if (layer === undefined)
    throw new GuardFailure(`name the layer: --project <id> for a project, or --layer ${TENANT_LAYER} for the tenant layer`)
  if (!isValidProjectId(layer)) throw new GuardFailure(`'${layer}' is not a project id or ${TENANT_LAYER}`)
  return layer
}

/**
 * A directory named after a layer (`config/p1`, `config/_tenant`) belongs to that layer, and so
 * does one whose state file records a layer: aiming it at another is refused. `exists` says
 * whether a project has a live layer (a directory named like an unused id is just a name).
 */
export async function checkDirectory(dir: string, layer: string, o: LayerOptions, exists?: (project: string) => Promise<boolean>) {
  if (o.ignoreDirName) return
  const state = await readState(dir)
  if (state && state.layer !== layer)
    throw new GuardFailure(
      `${dir} was last pulled from or applied to layer '${state.layer}' (its .server-tools/state.json), not '${layer}'; pass --ignore-dir-name if that is meant`,
    )
  const name = basename(resolve(dir))
  if (name === layer || state?.layer === layer) return
  const flag = name === TENANT_LAYER ? `--layer ${TENANT_LAYER}` : `--project ${name}`
  const refuse = () =>
    new GuardFailure(
      `${dir} is named after layer '${name}', but the target is layer '${layer}'; pass ${flag}, or --ignore-dir-name if the directory really is meant for '${layer}'`,
    )
  if (name === TENANT_LAYER) throw refuse()
  if (isValidProjectId(name) && exists && (await exists(name))) throw refuse()
}

/** Refuses a prune of more than PRUNE_THRESHOLD documents unless `--expect-deletes` states the count; any stated count must match. */
export function checkDeleteCount(deletes: readonly Change[], expected: number | undefined, layer: string) {
  const n = deletes.length
  if (expected !== undefined && expected !== n)
    throw new GuardFailure(
      `the plan deletes ${n} document${n === 1 ? '' : 's'} from layer '${layer}', not the ${expected} --expect-deletes says; nothing applied`,
    )
  if (expected === undefined && n > PRUNE_THRESHOLD)
    throw new GuardFailure(
      `the plan deletes ${n} documents from layer '${layer}' (more than ${PRUNE_THRESHOLD} need their count spelled out); nothing applied — check the list, then pass --expect-deletes ${n}`,
    )
}

export const parseCount = (value: string): number => {
  if (!/^\d+$/.test(value)) throw new GuardFailure(`--expect-deletes takes a whole number, got '${value}'`)
  return Number(value)
}

/**
 * Documents that still name what a prune deletes: in the layer as it will be (the directory), in
 * the tenant layer (for a project), or in every project the CLI can name (for the tenant layer:
 * sibling directories named after projects, and --check-project).
 */
export async function referencesToDeletes(
  api: ServerToolsClient,
  dir: string,
  layer: string,
  files: readonly LayerFile[],
  deletes: readonly Change[],
  checkProjects: readonly string[],
): Promise<{ dangling: Dangling[]; checked: string[] }> {
  const deleted = deletes.map((c) => c.path)
  if (!deleted.length) return { dangling: [], checked: [] }
  const live = async (p: string) =>
    (await api.listLayer(p, { bodies: true })).filter((d) => isLayerPath(d.path)).map((d) => ({ path: d.path, body: d.body ?? '' }))
  // a name that falls through to a bundled default still resolves
  const bundled = bundledPaths()
  if (layer !== TENANT_LAYER) {
    const tenant = await live(TENANT_LAYER)
    const outer = new Set([...bundled, ...tenant.map((f) => f.path)])
    return {
      dangling: danglingReferences(deleted, [
        { layer, files, outer },
        { layer: TENANT_LAYER, files: tenant, outer: bundled },
      ]),
      checked: [layer, TENANT_LAYER],
    }
  }
  const projects = [...new Set([...(await siblingProjects(dir)), ...checkProjects])].filter((p) => p !== TENANT_LAYER).sort()
  const layers: { layer: string; files: LayerFile[]; outer: Set<string> }[] = [{ layer, files: [...files], outer: bundled }]
  for (const p of projects) layers.push({ layer: p, files: await live(p), outer: bundled })
  return { dangling: danglingReferences(deleted, layers), checked: [layer, ...projects] }
}

/** The bundled defaults' paths as this checkout has them (none when it has no defaults/). */
function bundledPaths(): Set<string> {
  try {
    return new Set(loadBundledFiles().map((f) => f.path))
  } catch {
    return new Set()
  }
}

/** Directories beside a tenant layer's directory that are named like projects (the config/<layer> layout). */
async function siblingProjects(dir: string): Promise<string[]> {
  const parent = dirname(resolve(dir))
  const entries = await readdir(parent, { withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isDirectory() && isValidProjectId(e.name) && e.name !== TENANT_LAYER).map((e) => e.name)
}

export function formatDangling(found: readonly Dangling[], checked: readonly string[]): string[] {
  const lines = found.map(
    (d) => `warning: ${d.deleted} is still named by ${d.path} (${d.pointer}) in layer '${d.layer}'; it will not resolve there once deleted`,
  )
  lines.push(`References checked in layer${checked.length === 1 ? '' : 's'}: ${checked.join(', ')}.`)
  return lines
}
