/**
 * Plan: what applying a layer directory would change in the live layer, decided by content hash
 * (the store's sha256 of the body), with the version each change was planned against — apply
 * writes with `If-Match` on it, so a concurrent change is a conflict, never a lost update.
 */
import { createTwoFilesPatch } from 'diff'
import { sha256 } from '../runtime/hash'
import { isLayerPath, type LayerFile, writeRank } from './layer'

/** One document of the live layer, as the documents listing answers it. */
export interface RemoteDocument {
  path: string
  version: number
  sha256: string
  body?: string
}

export type Change =
  | { kind: 'create'; path: string; sha256: string }
  | { kind: 'update'; path: string; version: number; sha256: string; diff: string }
  | { kind: 'delete'; path: string; version: number }
  | { kind: 'unchanged'; path: string; version: number }

export interface Plan {
  project: string
  prune: boolean
  /** Writes in dependency order, then deletes in reverse dependency order, then unchanged. */
  changes: Change[]
  /** Live documents with no file that stay because --prune was not given. */
  kept: string[]
}

export const PLAN_FORMAT = 'server-tools-plan/1'

export function planLayer(project: string, local: readonly LayerFile[], remote: readonly RemoteDocument[], opts: { prune: boolean }): Plan {
  const live = new Map(remote.filter((d) => isLayerPath(d.path)).map((d) => [d.path, d]))
  const writes: Change[] = []
  const unchanged: Change[] = []
  const seen = new Set<string>()
  for (const f of local) {
    seen.add(f.path)
    const hash = sha256(f.body)
    const r = live.get(f.path)
    if (!r) writes.push({ kind: 'create', path: f.path, sha256: hash })
    else if (r.sha256 === hash) unchanged.push({ kind: 'unchanged', path: f.path, version: r.version })
    else writes.push({ kind: 'update', path: f.path, version: r.version, sha256: hash, diff: unifiedDiff(f.path, r.body ?? '', f.body) })
  }
  const gone = [...live.values()].filter((d) => !seen.has(d.path))
  const deletes: Change[] = opts.prune ? gone.map((d) => ({ kind: 'delete', path: d.path, version: d.version })) : []
  const order = (a: Change, b: Change) => writeRank(a.path) - writeRank(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
  writes.sort(order)
  deletes.sort((a, b) => -order(a, b))
  unchanged.sort(order)
  return {
    project,
    prune: opts.prune,
    changes: [...writes, ...deletes, ...unchanged],
    kept: opts.prune ? [] : gone.map((d) => d.path).sort(),
  }
}

export const pendingChanges = (plan: Plan) => plan.changes.filter((c) => c.kind !== 'unchanged')

export function countChanges(plan: Plan): Record<Change['kind'], number> {
  const n = { create: 0, update: 0, delete: 0, unchanged: 0 }
  for (const c of plan.changes) n[c.kind]++
  return n
}

/** The live version a change was planned against (undefined: the document must not exist yet). */
export const plannedVersion = (c: Change) => (c.kind === 'create' ? undefined : c.version)

/**
 * Changes whose live document moved since the plan: apply checks these against a fresh listing
 * before writing anything, so a stale plan stops with nothing half-applied.
 */
export function staleChanges(plan: Plan, remote: readonly RemoteDocument[]): { path: string; planned?: number; now?: number }[] {
  const live = new Map(remote.map((d) => [d.path, d.version]))
  const stale: { path: string; planned?: number; now?: number }[] = []
  for (const c of pendingChanges(plan)) {
    const planned = plannedVersion(c)
    const now = live.get(c.path)
    if (planned !== now) stale.push({ path: c.path, ...(planned !== undefined ? { planned } : {}), ...(now !== undefined ? { now } : {}) })
  }
  return stale
}

function unifiedDiff(path: string, before: string, after: string): string {
  const patch = createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, { context: 3 })
  // drop the "Index:"/"===" preamble: the header lines are what reviewers and `git apply` read
  return patch
    .split('\n')
    .filter((l) => !l.startsWith('Index: ') && !/^=+$/.test(l))
    .join('\n')
}
