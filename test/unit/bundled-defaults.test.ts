/**
 * The bundled defaults (defaults/): validated here, as a write of each would be, instead of at
 * every cold start; and they carry the JSON form of their data (defaults/parsed-forms.json), built
 * from the same files, so the service reads them without a YAML parser.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultsDir, loadBundledFiles } from '../../functions/defaults'
import { createMemoryDeps } from '../../functions/deps'
import { nameFromPath, SERVER_TOOLS_PREFIX } from '../../lib/config/server-tool'
import { BUNDLED_FORMS_FILE, buildBundledForms, withBundledForms } from '../../lib/documents/bundled'

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
    await expect(deps.documents.put('acme', 'check', 'recipes/default.yaml', 'engine: 42\n', { actor: 'test' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
    await expect(deps.tools.put('acme', 'check', 'doc_errors', 'type: doc_lookup\n', { actor: 'test' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
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
