/**
 * The JSON form stored beside a structured document (lib/config/yaml.ts): reads take it instead of
 * parsing YAML, and it must say exactly what the text says — or not be there at all.
 */
import { describe, expect, it } from 'vitest'
import { parseServerTool } from '../../../lib/config/server-tool'
import { checkDocumentText } from '../../../lib/config/text-hygiene'
import { jsonFormOf, MAX_JSON_FORM, parseYaml } from '../../../lib/config/yaml'
import { docLookupFactory } from '../../../lib/tools/types/doc_lookup'

const types = { find: (id: string) => (id === 'doc_lookup' ? docLookupFactory : undefined), typeIds: () => ['doc_lookup'] }

describe('the JSON form of a document', () => {
  it('is the parsed data of the YAML, and parsing it gives the same data as parsing the text', () => {
    const text = 'type: doc_lookup\ndescription: |\n  Two\n  lines\nlabels: [a, b]\nn: 0x1f\nanchor: &x {k: v}\nalias: *x\n'
    const json = jsonFormOf((parseYaml(text) as { ok: true; value: { data: unknown } }).value.data)!
    const fromForm = parseYaml({ text, json })
    expect(fromForm.ok && fromForm.value.data).toEqual({
      type: 'doc_lookup',
      description: 'Two\nlines\n',
      labels: ['a', 'b'],
      n: 31,
      anchor: { k: 'v' },
      alias: { k: 'v' },
    })
    expect(fromForm.ok && fromForm.value.data).toEqual((parseYaml(text) as { ok: true; value: { data: unknown } }).value.data)
  })

  it('is not made for data JSON cannot hold exactly: infinities, NaN, negative zero', () => {
    for (const text of ['a: .inf\n', 'a: -.inf\n', 'a: .nan\n', 'a: -0.0\n']) {
      const parsed = parseYaml(text)
      expect(parsed.ok, text).toBe(true)
      expect(jsonFormOf((parsed as { ok: true; value: { data: unknown } }).value.data), text).toBeUndefined()
    }
  })

  it('stops at its size limit however far aliases would expand a short text', () => {
    const long = 'x'.repeat(10_000)
    const text = `a: &a "${long}"\nb: [${Array.from({ length: 50 }, () => '*a').join(', ')}]\n`
    const parsed = parseYaml(text)
    expect(parsed.ok).toBe(true)
    expect(jsonFormOf((parsed as { ok: true; value: { data: unknown } }).value.data)).toBeUndefined()
    expect(jsonFormOf({ a: 'y'.repeat(MAX_JSON_FORM - 100) })).toBeDefined()
    // measured in the bytes the item holds, not characters
    expect(jsonFormOf({ a: '日'.repeat(MAX_JSON_FORM / 2) })).toBeUndefined()
  })

  it('is produced by the write-time check for structured paths only, and not for a text with unsafe characters', () => {
    expect(checkDocumentText('server-tools/t.yaml', 'type: doc_lookup\n').json).toBe('{"type":"doc_lookup"}')
    expect(checkDocumentText('documents/readme.md', '# hi\n').json).toBeUndefined()
    const unsafe = checkDocumentText('server-tools/t.yaml', 'description: "a\\u202eb"\n')
    expect(unsafe.issues).toHaveLength(1)
    expect(unsafe.json).toBeUndefined()
  })

  it('still lets a read name the line and column of a problem, found from the text only when one is reported', () => {
    const text = 'type: doc_lookup\ndescription: Reads.\nparameters:\n  path: 42\n'
    const json = checkDocumentText('server-tools/t.yaml', text).json!
    const result = parseServerTool({ text, json }, 't', { mode: 'write', types })
    expect(result.ok).toBe(false)
    const issue = !result.ok ? result.issues.find((i) => i.pointer === '/parameters/path') : undefined
    expect(issue).toMatchObject({ line: 4, column: 9 })
    expect(issue?.message).toBe('parameters.path must be a string, got number')
  })

  it('is what a read believes when given: the text is not parsed again', () => {
    const result = parseServerTool(
      { text: 'this: [is not, the form\n', json: '{"type":"doc_lookup","description":"From the form.","parameters":{"path":"a.md"}}' },
      't',
      { mode: 'read', types },
    )
    expect(result.ok && result.config.description).toBe('From the form.')
  })

  it('falls back to the text when the form is not JSON', () => {
    const result = parseServerTool(
      { text: 'type: doc_lookup\ndescription: From the text.\nparameters:\n  path: a.md\n', json: '{broken' },
      't',
      { mode: 'read', types },
    )
    expect(result.ok && result.config.description).toBe('From the text.')
  })
})
