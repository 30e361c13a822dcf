/** Reads the bundled layer (`defaults/`) from disk: one file per lookup, all of them for a listing. */
import { createRequire } from 'node:module'
import { join, relative, resolve, sep } from 'node:path'
import { BUNDLED_FORMS_FILE, type BundledFile, type BundledForms, type BundledSource, withBundledForms } from '../lib/documents/bundled'

// Not an ES module import: that builds node:fs's facade, which reads every export (fs.promises
// included), ~1.5 ms of every cold start (functions/sst-resource.ts)
const { readdirSync, readFileSync, statSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs')

export function defaultsDir(): string {
  // Lambda runs from LAMBDA_TASK_ROOT with `defaults/` copied beside the bundle (sst copyFiles)
  return resolve(process.env.DEFAULTS_DIR ?? join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'defaults'))
}

/** Not documents of the layer: hidden files, READMEs and the forms file. */
const isLayerFile = (path: string) =>
  path !== BUNDLED_FORMS_FILE && !path.split('/').some((segment) => segment.startsWith('.') || segment === 'README.md')

export function loadBundledFiles(dir = defaultsDir()): BundledFile[] {
  const out: BundledFile[] = []
  const walk = (d: string) => {
    for (const entry of readdirSync(d).sort()) {
      const full = join(d, entry)
      const path = relative(dir, full).split(sep).join('/')
      if (statSync(full).isDirectory()) walk(full)
      else if (isLayerFile(path)) out.push({ path, body: readFileSync(full, 'utf8') })
    }
  }
  walk(dir)
  return withBundledForms(out, readForms(join(dir, BUNDLED_FORMS_FILE)))
}

/**
 * The layer as a BundledSource: `one(path)` opens that file only (a path that could leave the
 * directory is not looked up), `all()` walks the directory; both attach the JSON forms.
 */
export function bundledDefaults(dir = defaultsDir()): BundledSource {
  let forms: BundledForms | undefined
  return {
    all: () => loadBundledFiles(dir),
    one(path) {
      if (!isLayerFile(path) || path.startsWith('/') || /\\|\0/.test(path) || path.split('/').some((s) => s === '..' || s === ''))
        return undefined
      let body: string
      try {
        body = readFileSync(join(dir, path), 'utf8')
      } catch {
        return undefined // missing, or a directory
      }
      forms ??= readForms(join(dir, BUNDLED_FORMS_FILE))
      return withBundledForms([{ path, body }], forms)[0]
    },
  }
}

/** defaults/parsed-forms.json, or none when it is missing or unreadable (the texts are then parsed). */
function readForms(file: string): BundledForms {
  try {
    const forms: unknown = JSON.parse(readFileSync(file, 'utf8'))
    return forms && typeof forms === 'object' && !Array.isArray(forms) ? (forms as BundledForms) : {}
  } catch {
    return {}
  }
}
