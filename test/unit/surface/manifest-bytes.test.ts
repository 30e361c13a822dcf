/**
 * Manifest rendering is bounded in bytes rendered, measured before rendering (issue 21 N2): a
 * schema that shares one node many times is small in memory and huge as JSON.
 */
import { describe, expect, it } from 'vitest'
import { EXPANSION_LIMITS } from '../../../lib/config/expansion-budget'
import { isServerToolsError } from '../../../lib/errors'
import { MANIFEST_FORMATS, toolsArrayJson } from '../../../lib/surface/formats'
import type { Tool } from '../../../lib/tools/contracts'

const tool = (name: string, inputSchema: Record<string, unknown>): Tool =>
  ({
    name,
    description: `The ${name} tool.`,
    inputSchema,
    labels: [],
    primary: true,
    deferred: false,
    source: 'project',
    typeId: 'test',
    invoke: async () => ({ content: [] }),
  }) as unknown as Tool

/** One 10,000-name list shared by `uses` properties: ~140 KB of JSON per use, one array in memory. */
function sharing(uses: number) {
  const required = Array.from({ length: 10_000 }, (_, i) => `field_${String(i).padStart(5, '0')}`)
  return { type: 'object', properties: Object.fromEntries(Array.from({ length: uses }, (_, i) => [`p${i}`, { type: 'object', required }])) }
}

describe('the manifest byte budget', () => {
  it('refuses a tool whose shared schema would render past 8 MiB with a 422 naming the budget, in every format', () => {
    const t = tool('wide', sharing(1_000)) // ~140 MB if rendered
    for (const format of MANIFEST_FORMATS) {
      let error: unknown
      try {
        toolsArrayJson([t], format)
      } catch (e) {
        error = e
      }
      expect(isServerToolsError(error, 'INVALID_CONFIG'), String(error)).toBe(true)
      expect((error as Error).message).toContain(`more than ${EXPANSION_LIMITS.manifestBytes.toLocaleString('en-US')} bytes`)
    }
  })

  it('refuses a manifest whose tools together pass the budget, though each fits', () => {
    const tools = Array.from({ length: 80 }, (_, i) => tool(`t${i}`, sharing(1))) // 80 × ~140 KB
    expect(() => toolsArrayJson(tools, 'native')).toThrow(/the manifest renders to more than 8,388,608 bytes/)
    expect(toolsArrayJson(tools.slice(0, 50), 'native').length).toBeLessThanOrEqual(EXPANSION_LIMITS.manifestBytes)
  })
})
