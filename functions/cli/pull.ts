/**
 * `pull` without surprises, and the small state file that makes it possible:
 * `<dir>/.server-tools/state.json` records the layer a directory was last pulled from or applied
 * to, and each file's content hash as it was then. A pull overwrites a file only when it still
 * holds those bytes (or with --force), never follows a symbolic link, and never writes outside
 * the directory; plan and apply refuse a directory whose state names another layer.
 */
import { constants } from 'node:fs'
import { lstat, mkdir, open, readFile, rename, writeFile } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import type { LayerFile } from '../../lib/layers/layer'
import { sha256 } from '../../lib/runtime/hash'

export const STATE_DIR = '.server-tools'
const STATE_FILE = 'state.json'
const STATE_FORMAT = 'server-tools-state/1'

export interface LayerState {
  layer: string
  /** path → sha256 of the content as last pulled or applied */
  files: Record<string, string>
}

export async function readState(dir: string): Promise<LayerState | undefined> {
  const file = join(resolve(dir), STATE_DIR, STATE_FILE)
  const info = await lstat(file).catch(() => undefined)
  if (!info) return undefined
  if (!info.isFile()) throw new Error(`${file} is not a regular file; remove it (it is the CLI's record of the last pull)`)
  let parsed: { format?: string; layer?: unknown; files?: unknown }
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'))
  } catch (e) {
    throw new Error(`${file} is not JSON (${(e as Error).message}); remove it and pull again`)
  }
  if (parsed.format !== STATE_FORMAT || typeof parsed.layer !== 'string' || !parsed.files || typeof parsed.files !== 'object')
    throw new Error(`${file} is not a state file written by this CLI; remove it and pull again`)
  return { layer: parsed.layer, files: parsed.files as Record<string, string> }
}

/** Records the layer and hashes (atomically: a crash leaves the old state or the new one). */
export async function writeState(dir: string, state: LayerState): Promise<void> {
  const root = resolve(dir)
  const stateDir = join(root, STATE_DIR)
  await refuseLinks(root, stateDir)
  await mkdir(stateDir, { recursive: true })
  const sorted = Object.fromEntries(Object.entries(state.files).sort(([a], [b]) => (a < b ? -1 : 1)))
  const tmp = join(stateDir, `${STATE_FILE}.${process.pid}.tmp`)
  await writeFile(tmp, `${JSON.stringify({ format: STATE_FORMAT, layer: state.layer, files: sorted }, null, 2)}\n`, { flag: 'wx' })
  await rename(tmp, join(stateDir, STATE_FILE))
}

export interface PullResult {
  written: string[]
  unchanged: string[]
  /** Files left as they are, and why (a local edit, a link, not a file). */
  refused: { path: string; why: string }[]
}

/**
 * Writes the live layer's documents under dir. A file is replaced only when it is missing, already
 * equal, unchanged since the last pull or apply, or `force` is given; links are never followed.
 */
export async function pullInto(
  dir: string,
  layer: string,
  docs: readonly (LayerFile & { sha256: string })[],
  opts: { force: boolean },
): Promise<PullResult> {
  const root = resolve(dir)
  const rootInfo = await lstat(root).catch(() => undefined)
  if (rootInfo && !rootInfo.isDirectory() && !rootInfo.isSymbolicLink()) throw new Error(`'${dir}' is not a directory`)
  await mkdir(root, { recursive: true })
  const previous = await readState(root)
  if (previous && previous.layer !== layer && !opts.force)
    throw new Error(
      `${dir} holds layer '${previous.layer}' (${join(STATE_DIR, STATE_FILE)}); pulling layer '${layer}' into it would mix the two — use another directory, or --force`,
    )
  const known = previous?.layer === layer ? previous.files : {}
  const result: PullResult = { written: [], unchanged: [], refused: [] }
  const state: Record<string, string> = { ...known }
  for (const doc of docs) {
    const target = resolve(root, ...doc.path.split('/'))
    if (!target.startsWith(root + sep)) {
      result.refused.push({ path: doc.path, why: 'would be written outside the directory' })
      continue
    }
    const link = await firstLink(root, target)
    if (link) {
      result.refused.push({
        path: doc.path,
        why: `${link === target ? 'is' : `'${link.slice(root.length + 1)}' is`} a symbolic link (not followed)`,
      })
      continue
    }
    const existing = await lstat(target).catch(() => undefined)
    if (existing && !existing.isFile()) {
      result.refused.push({ path: doc.path, why: 'exists and is not a regular file' })
      continue
    }
    if (existing) {
      const local = sha256(await readFile(target, 'utf8'))
      if (local === doc.sha256) {
        state[doc.path] = doc.sha256
        result.unchanged.push(doc.path)
        continue
      }
      if (known[doc.path] !== local && !opts.force) {
        result.refused.push({
          path: doc.path,
          why:
            known[doc.path] === undefined
              ? 'exists and was not written by a pull or apply (--force replaces it)'
              : 'edited since the last pull or apply (--force replaces it)',
        })
        continue
      }
    }
    await mkdir(resolve(target, '..'), { recursive: true })
    // O_NOFOLLOW: a link put in place after the check above still is not followed
    const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644)
    try {
      await handle.writeFile(doc.body, 'utf8')
    } finally {
      await handle.close()
    }
    state[doc.path] = doc.sha256
    result.written.push(doc.path)
  }
  await writeState(root, { layer, files: state })
  return result
}

/** The first path from root down to target (root excluded) that is a symbolic link. */
async function firstLink(root: string, target: string): Promise<string | undefined> {
  let at = root
  for (const part of target.slice(root.length + 1).split(sep)) {
    at = join(at, part)
    const info = await lstat(at).catch(() => undefined)
    if (!info) return undefined
    if (info.isSymbolicLink()) return at
  }
  return undefined
}

async function refuseLinks(root: string, target: string) {
  const link = await firstLink(root, target)
  if (link) throw new Error(`${link} is a symbolic link; the CLI does not follow links in a layer directory`)
}
