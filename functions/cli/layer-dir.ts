/** A layer directory on disk, read into layer files (pull.ts writes one). */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { closest } from '../../lib/config/yaml'
import { MAX_DOCUMENT_BYTES } from '../../lib/documents/ports'
import { asStored, LAYER_FOLDERS, LAYER_ROOT_FILES, type LayerFile, layerPath } from '../../lib/layers/layer'
import type { LayerProblem } from '../../lib/layers/validate'
import { QUOTAS_PATH } from '../../lib/quotas/rules'

const LINK_MESSAGE = 'a symbolic link; layer directories are read without following links (copy the files in)'

/** More files than any sane layer; a runaway directory is refused instead of read. */
const MAX_FILES = 10_000

const MISSPELT_QUOTAS = /^quotas?\.(ya?ml|json)$/i

export interface LayerDir {
  files: LayerFile[]
  /** Files that cannot be documents (too large, not UTF-8) and folders that look like a misspelt layer folder. */
  problems: LayerProblem[]
}

export async function readLayerDir(dir: string): Promise<LayerDir> {
  const root = resolve(dir)
  const info = await stat(root).catch(() => undefined)
  if (!info?.isDirectory()) throw new Error(`'${dir}' is not a directory`)
  const files: LayerFile[] = []
  const problems: LayerProblem[] = []
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue
    // a linked layer folder is neither read nor skipped quietly: skipped, a prune would delete its documents
    if (entry.isSymbolicLink() && (LAYER_FOLDERS as readonly string[]).includes(entry.name)) {
      problems.push({ path: `${entry.name}/`, layer: 'target', message: LINK_MESSAGE, severity: 'error' })
      continue
    }
    if ((LAYER_ROOT_FILES as readonly string[]).includes(entry.name)) {
      if (entry.isSymbolicLink()) problems.push({ path: entry.name, layer: 'target', message: LINK_MESSAGE, severity: 'error' })
      else if (entry.isFile()) await readOne(join(root, entry.name), entry.name, files, problems)
      continue
    }
    if (entry.isFile()) {
      // a misspelt quotas.yaml would be skipped quietly, and a prune would delete the live one; other
      // top-level files (notes.yaml, a README) are the directory's own business
      if (MISSPELT_QUOTAS.test(entry.name))
        problems.push({
          path: entry.name,
          layer: 'target',
          message: `'${entry.name}' is not a layer document — did you mean '${QUOTAS_PATH}'? (it is not part of the layer)`,
          severity: 'error',
        })
      continue
    }
    if (!entry.isDirectory()) continue
    if (!(LAYER_FOLDERS as readonly string[]).includes(entry.name)) {
      const hint = closest(entry.name, LAYER_FOLDERS)
      if (hint)
        problems.push({
          path: `${entry.name}/`,
          layer: 'target',
          message: `'${entry.name}/' is not a layer folder — did you mean '${hint}/'? (its files are not part of the layer)`,
          severity: 'error',
        })
      continue
    }
    await walk(root, join(root, entry.name), files, problems)
  }
  files.sort((a, b) => (a.path < b.path ? -1 : 1))
  return { files, problems }
}

async function walk(root: string, dir: string, files: LayerFile[], problems: LayerProblem[]) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue
    const full = join(dir, entry.name)
    if (entry.isSymbolicLink()) {
      problems.push({
        path: layerPath(relative(root, full)),
        layer: 'target',
        message: LINK_MESSAGE,
        severity: 'error',
      })
      continue
    }
    if (entry.isDirectory()) {
      await walk(root, full, files, problems)
      continue
    }
    if (!entry.isFile()) continue
    if (files.length >= MAX_FILES) throw new Error(`more than ${MAX_FILES} files under ${root}; is this a layer directory?`)
    await readOne(full, layerPath(relative(root, full)), files, problems)
  }
}

async function readOne(full: string, path: string, files: LayerFile[], problems: LayerProblem[]) {
  const bytes = await readFile(full)
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) {
    problems.push({
      path,
      layer: 'target',
      message: `${bytes.byteLength} bytes; documents are limited to ${MAX_DOCUMENT_BYTES} bytes`,
      severity: 'error',
    })
    return
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    problems.push({ path, layer: 'target', message: 'not UTF-8 text; documents are text', severity: 'error' })
    return
  }
  files.push({ path, body: asStored(text) })
}
