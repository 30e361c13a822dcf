/**
 * The bundled layer (`defaults/`): read once at cold start by the composition root, held in
 * memory, never written. Version 0 marks "bundled" in views and ETags.
 */
export interface BundledFile {
  path: string
  body: string
}

export class BundledLayer {
  private readonly files = new Map<string, string>()
  /** The layer never changes, so each prefix's listing is computed once (listings are hot). */
  private readonly listings = new Map<string, BundledFile[]>()
  constructor(files: BundledFile[] = []) {
    for (const f of files) this.files.set(f.path, f.body)
  }
  get(path: string): string | undefined {
    return this.files.get(path)
  }
  list(prefix: string): BundledFile[] {
    let listed = this.listings.get(prefix)
    if (!listed) {
      listed = [...this.files.entries()]
        .filter(([p]) => p.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([path, body]) => Object.freeze({ path, body }))
      this.listings.set(prefix, listed)
    }
    return listed.slice()
  }
}
