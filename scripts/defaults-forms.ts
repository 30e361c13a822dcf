/**
 * `npm run defaults:forms`: rebuilds defaults/parsed-forms.json, the JSON form of every structured
 * bundled document, so the service reads its defaults without a YAML parser (lib/documents/bundled.ts).
 * test/unit/bundled-forms.test.ts fails when the file is stale.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { defaultsDir, loadBundledFiles } from '../functions/defaults'
import { BUNDLED_FORMS_FILE, buildBundledForms } from '../lib/documents/bundled'

const forms = buildBundledForms(loadBundledFiles())
writeFileSync(join(defaultsDir(), BUNDLED_FORMS_FILE), `${JSON.stringify(forms, null, 2)}\n`)
process.stdout.write(`${BUNDLED_FORMS_FILE}: ${Object.keys(forms).length} forms\n`)
