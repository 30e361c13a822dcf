/**
 * The bundled defaults carry the JSON form of their data (defaults/parsed-forms.json), built from
 * the same files, so the service reads them without a YAML parser.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultsDir, loadBundledFiles } from '../../functions/defaults'
import { BUNDLED_FORMS_FILE, buildBundledForms, withBundledForms } from '../../lib/documents/bundled'

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
