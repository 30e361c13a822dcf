/**
 * The bundled layer (`defaults/`): read on demand from its source (the composition root's, over
 * the files), held in memory, never written. Version 0 marks "bundled" in views and ETags. A
 * lookup reads only its own file; the first listing reads them all — so a tool call pays for one
 * file, not for the whole layer, at cold start.
 *
 * Like stored documents, bundled ones carry the JSON form of their data, so reading them needs no
 * YAML parser: the forms are built from the same files (`npm run defaults:forms`, checked by a
 * test) into defaults/parsed-forms.json, each with the hash of the text it was built from; a file
 * whose text no longer matches is simply read from its text.
 */
import { checkDocumentText } from '../config/text-hygiene'
import { BoundedCache } from '../runtime/bounded-cache'
import { sha256 } from '../runtime/hash'

/** The file beside the bundled documents that holds their JSON forms (not itself a document). */
export const BUNDLED_FORMS_FILE = 'parsed-forms.json'

/** Path → the hash of the text a form was built from, and the form. */
export type BundledForms = Record<string, { sha256: string; json: string }>
export interface BundledFile {
  path: string
  body: string
  /** The JSON form of the body's data, from the build (defaults/parsed-forms.json), as stored documents carry one. */
  json?: string
}

/** Where the bundled files come from. `one(path)` must find exactly the file `all()` holds at that path. */
export interface BundledSource {
  all(): BundledFile[]
  one(path: string): BundledFile | undefined
}

/** How many missed paths a layer remembers before it forgets the oldest. */
export const MISSES_REMEMBERED = 1_024

export class BundledLayer {
  /** Every file, once a listing needed them. */
  private everything: Map<string, BundledFile> | undefined
  /** Files found before that: at most the layer's own files. */
  private readonly looked = new Map<string, BundledFile>()
  /**
   * Paths not found: callers pick the names (any tool name a tenant calls), so misses are
   * remembered only up to a bound — an unbounded memo of misses grows with every name tried.
   */
  private readonly missed = new BoundedCache<string, true>(MISSES_REMEMBERED)
  /** The layer never changes, so each prefix's listing is computed once (listings are hot). */
  private readonly listings = new Map<string, BundledFile[]>()
  private readonly source: BundledSource

  constructor(files: BundledFile[] | BundledSource = []) {
    this.source = Array.isArray(files) ? { all: () => files, one: (path) => files.find((f) => f.path === path) } : files
  }

  get(path: string): BundledFile | undefined {
    if (this.everything) return this.everything.get(path)
    const known = this.looked.get(path)
    if (known || this.missed.get(path)) return known
    const found = this.source.one(path)
    if (!found) {
      this.missed.set(path, true)
      return undefined
    }
    const frozen = Object.freeze({ ...found })
    this.looked.set(path, frozen)
    return frozen
  }

  list(prefix: string): BundledFile[] {
    let listed = this.listings.get(prefix)
    if (!listed) {
      this.everything ??= new Map(this.source.all().map((f) => [f.path, Object.freeze({ ...f })]))
      listed = [...this.everything.values()].filter((f) => f.path.startsWith(prefix)).sort((a, b) => (a.path < b.path ? -1 : 1))
      this.listings.set(prefix, listed)
    }
    return listed.slice()
  }
}

/** The JSON form of every structured file that has one (what defaults/parsed-forms.json holds). */
export function buildBundledForms(files: readonly BundledFile[]): BundledForms {
  const forms: BundledForms = {}
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1))) {
    const { json } = checkDocumentText(f.path, f.body)
    if (json !== undefined) forms[f.path] = { sha256: sha256(f.body), json }
  }
  return forms
}

/** The files with the forms built from exactly their text. */
export function withBundledForms(files: readonly BundledFile[], forms: BundledForms): BundledFile[] {
  return files.map((f) => {
    const form = Object.hasOwn(forms, f.path) ? forms[f.path] : undefined
    return form && form.sha256 === sha256(f.body) ? { ...f, json: form.json } : f
  })
}
