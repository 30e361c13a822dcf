/**
 * The MCP 2026-07-28 revision's published JSON schema (test/fixtures/mcp/SOURCE.md), compiled
 * once: `expectSchema('CallToolResultResponse', body)` fails a test with Ajv's own account of
 * every place the body leaves the schema.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { expect } from 'vitest'

const schema = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'mcp', 'schema-2026-07-28.json'), 'utf8'))
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema(schema, 'mcp')

/** The names of the schema's definitions (a test may check it names one that exists). */
export const MCP_DEFINITIONS = Object.keys(schema.$defs as object)

export function expectSchema(definition: string, value: unknown): void {
  if (!MCP_DEFINITIONS.includes(definition)) throw new Error(`no definition '${definition}' in the 2026-07-28 schema`)
  const validate = ajv.getSchema(`mcp#/$defs/${definition}`)!
  const ok = validate(value)
  expect(ok ? [] : validate.errors, `${definition}: ${JSON.stringify(value).slice(0, 400)}`).toEqual([])
}
