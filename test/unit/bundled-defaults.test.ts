/**
 * The bundled defaults (defaults/): validated here, as a write of each would be, instead of at
 * every cold start; and they carry the JSON form of their data (defaults/parsed-forms.json), built
 * from the same files, so the service reads them without a YAML parser.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundledDefaults, defaultsDir, loadBundledFiles } from '../../functions/defaults'
import { createMemoryDeps } from '../../functions/deps'
import { nameFromPath, SERVER_TOOLS_PREFIX } from '../../lib/config/server-tool'
import { BUNDLED_FORMS_FILE, BundledLayer, buildBundledForms, MISSES_REMEMBERED, withBundledForms } from '../../lib/documents/bundled'

describe('the bundled defaults', () => {
  it('are every one valid: each passes the checks a write of it through the API passes', async () => {
    const deps = createMemoryDeps()
    const files = loadBundledFiles()
    expect(files.length).toBeGreaterThan(10)
    for (const f of files) {
      const write = f.path.startsWith(SERVER_TOOLS_PREFIX)
        ? deps.tools.put('acme', 'check', nameFromPath(f.path), f.body, { actor: 'test' })
        : deps.documents.put('acme', 'check', f.path, f.body, { actor: 'test' })
      await expect(write, f.path).resolves.toBeDefined()
    }
  })

  it('are refused the same way when one is broken (the check above would notice)', async () => {
    const deps = createMemoryDeps()
    await expect(deps.documents.put('acme', 'check', 'recipes/default.yaml', 'engine: 42\n', { actor: 'test' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    })
    await expect(deps.tools.put('acme', 'check', 'doc_errors', 'type: doc_lookup\n', { actor: 'test' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    })
  })
})

describe('the bundled JSON forms', () => {
  it('are up to date with defaults/ (after editing a default, run `npm run defaults:forms`)', () => {
    const committed = JSON.parse(readFileSync(join(defaultsDir(), BUNDLED_FORMS_FILE), 'utf8'))
    expect(committed).toEqual(buildBundledForms(loadBundledFiles()))
  })

  it('reach every structured bundled document, and the forms file is not itself a document', () => {
    const files = loadBundledFiles()
    expect(files.some((f) => f.path === BUNDLED_FORMS_FILE)).toBe(false)
    for (const f of files.filter((f) => /\.ya?ml$/.test(f.path))) expect(f.json, f.path).toBeDefined()
    for (const f of files.filter((f) => f.path.endsWith('.md'))) expect(f.json, f.path).toBeUndefined()
  })

  it('are left out for a file whose text changed since they were built: it is read from its text', () => {
    const forms = buildBundledForms([{ path: 'engines/e.yaml', body: 'description: before\n' }])
    const [changed] = withBundledForms([{ path: 'engines/e.yaml', body: 'description: after\n' }], forms)
    expect(changed.json).toBeUndefined()
    const [same] = withBundledForms([{ path: 'engines/e.yaml', body: 'description: before\n' }], forms)
    expect(same.json).toBe('{"description":"before"}')
  })
})

describe('a bundled lookup', () => {
  it('finds exactly the file the whole layer holds at that path, forms included', () => {
    const source = bundledDefaults()
    for (const f of loadBundledFiles()) expect(source.one(f.path), f.path).toEqual(f)
  })

  it('finds nothing at a path the layer does not hold or that could leave its directory', () => {
    const source = bundledDefaults()
    for (const path of [
      BUNDLED_FORMS_FILE,
      'server-tools',
      'server-tools/',
      'server-tools/missing.yaml',
      '../package.json',
      'documents/../../package.json',
      '/etc/passwd',
      'documents//errors.md',
      'README.md',
      '.hidden',
    ]) {
      expect(source.one(path), path).toBeUndefined()
    }
  })

  it('reads only the file looked up; the first listing reads them all, after which lookups use it', () => {
    const calls: string[] = []
    const files = [
      { path: 'a/x.md', body: 'x' },
      { path: 'b/y.md', body: 'y' },
    ]
    const layer = new BundledLayer({
      all: () => (calls.push('all'), files),
      one: (path) => (calls.push(`one ${path}`), files.find((f) => f.path === path)),
    })
    expect(layer.get('a/x.md')?.body).toBe('x')
    expect(layer.get('a/x.md')?.body).toBe('x')
    expect(layer.get('nope.md')).toBeUndefined()
    expect(calls).toEqual(['one a/x.md', 'one nope.md'])
    expect(layer.list('b/').map((f) => f.path)).toEqual(['b/y.md'])
    expect(layer.get('b/y.md')?.body).toBe('y')
    expect(calls).toEqual(['one a/x.md', 'one nope.md', 'all'])
  })

  it('remembers a bounded number of misses, however many names callers try, and every hit', () => {
    const reads: string[] = []
    const files = [{ path: 'a/x.md', body: 'x' }]
    const layer = new BundledLayer({
      all: () => files,
      one: (path) => (reads.push(path), files.find((f) => f.path === path)),
    })
    layer.get('a/x.md')
    for (let i = 0; i < MISSES_REMEMBERED * 3; i++) layer.get(`tool-${i}.md`)
    reads.length = 0
    // the oldest misses were forgotten (read again), the latest are remembered, the hit is kept
    layer.get('tool-0.md')
    layer.get(`tool-${MISSES_REMEMBERED * 3 - 1}.md`)
    expect(layer.get('a/x.md')?.body).toBe('x')
    expect(reads).toEqual(['tool-0.md'])
  })
})
