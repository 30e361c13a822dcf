/** docs/reference/tool-types.md is generated from the tool-type registry and must match it. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { registeredToolTypes, renderToolTypes, TOOL_TYPES_DOC } from '../../scripts/docs-tool-types'

describe('the tool-type reference', () => {
  it('is what scripts/docs-tool-types.ts generates from the registry (run it after changing a schema)', () => {
    expect(readFileSync(TOOL_TYPES_DOC, 'utf8'), 'stale: run npx tsx scripts/docs-tool-types.ts').toBe(
      renderToolTypes(registeredToolTypes()),
    )
  })

  it('lists every registered type and every field of its parameter schema', () => {
    const doc = renderToolTypes(registeredToolTypes())
    for (const t of registeredToolTypes()) {
      expect(doc).toContain(`## ${t.typeId}\n`)
      for (const field of Object.keys((t.parametersSchema as { properties?: object }).properties ?? {}))
        expect(doc).toContain(`| \`${field}\` |`)
    }
  })
})
