/** Reads the bundled layer (`defaults/`) from disk once per cold start. */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve, sep } from 'node:path'
import { BUNDLED_FORMS_FILE, type BundledFile, type BundledForms, withBundledForms } from '../lib/documents/bundled'

export function defaultsDir(): string {
  // Lambda runs from LAMBDA_TASK_ROOT with `defaults/` copied beside the bundle (sst copyFiles)
  return resolve(process.env.DEFAULTS_DIR ?? join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'defaults'))
}

export function loadBundledFiles(dir = defaultsDir()): BundledFile[] {
  const out: BundledFile[] = []
  const walk = (d: string) => {
    for (const entry of readdirSync(d).sort()) {
      const full = join(d, entry)
      if (statSync(full).isDirectory()) walk(full)
      else if (!entry.startsWith('.') && entry !== 'README.md' && full !== join(dir, BUNDLED_FORMS_FILE)) out.push({ path: relative(dir, full).split(sep).join('/'), body: readFileSync(full, 'utf8') })
    }
  }
  walk(dir)
  return withBundledForms(out, readForms(join(dir, BUNDLED_FORMS_FILE)))
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
