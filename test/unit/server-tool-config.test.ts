import { describe, expect, it } from 'vitest'
import { parseServerTool, toolNameProblem } from '../../lib/config/server-tool'
import { FactoryRegistry } from '../../lib/tools/registry'
import { docLookupFactory } from '../../lib/tools/types/doc_lookup'
import { echoPackFactory } from '../support/pack-factory'

const types = new FactoryRegistry([docLookupFactory, echoPackFactory])
const write = (text: string, name = 'my_tool') => parseServerTool(text, name, { mode: 'write', types })
const read = (text: string, name = 'my_tool') => parseServerTool(text, name, { mode: 'read', types })

describe('server-tool documents', () => {
  it('applies the spec defaults to a minimal document', () => {
    const r = write('type: doc_lookup\ndescription: Read it\nparameters:\n  path: documents/a.md\n')
    expect(r).toEqual({
      ok: true,
      warnings: [],
      config: {
        name: 'my_tool',
        type: 'doc_lookup',
        description: 'Read it',
        enabled: true,
        primary: false,
        labels: [],
        disabledSubTools: [],
        defaultDeferred: false,
        parameters: { path: 'documents/a.md' },
      },
    })
  })

  it('reports a mistyped field with its line in plain words', () => {
    const r = write('type: doc_lookup\ndescription: x\nparameters:\n  path: documents/a.md\nenabled: "yes"\n')
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.issues).toEqual([
      expect.objectContaining({ pointer: '/enabled', line: 5, column: 10, message: 'enabled must be a boolean, got string' }),
    ])
  })

  it('reports every problem at once', () => {
    const r = write('type: doc_lookup\nprimary: 3\nlabels: foo\nparameters: {}\n')
    expect(r.ok).toBe(false)
    if (r.ok) return
    const messages = r.issues.map((i) => i.message)
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining('description is required'),
        expect.stringContaining('primary must be a boolean, got number'),
        expect.stringContaining('labels must be an array, got string'),
        expect.stringContaining('parameters.path is required'),
      ]),
    )
  })

  it('rejects an unknown field on write with a did-you-mean hint', () => {
    const r = write('type: doc_lookup\ndescription: x\nprimay: true\nparameters:\n  path: documents/a.md\n')
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.issues[0]).toMatchObject({ pointer: '/primay', line: 3, message: "unknown field 'primay' — did you mean 'primary'?" })
  })

  it('ignores an unknown field on read with a warning', () => {
    const r = read('type: doc_lookup\ndescription: x\nprimay: true\nparameters:\n  path: documents/a.md\n')
    expect(r.ok && r.warnings).toEqual(["unknown field 'primay' — did you mean 'primary'?"])
  })

  it('requires a YAML name to equal the path name after lower-casing, naming both', () => {
    expect(write('name: My_Tool\ntype: doc_lookup\ndescription: x\nparameters: { path: a.md }\n').ok).toBe(true)
    const r = write('name: other\ntype: doc_lookup\ndescription: x\nparameters: { path: a.md }\n')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0].message).toBe("name 'other' in the document does not match 'my_tool' from the path")
  })

  it('lists the known types when the type is unknown', () => {
    const r = write('type: doc_lookp\ndescription: x\n')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0].message).toBe("unknown type 'doc_lookp' — did you mean 'doc_lookup'?; known types: doc_lookup, echo_pack")
  })

  it('validates parameters against the type schema with JSON pointers and lines', () => {
    const r = write('type: echo_pack\ndescription: x\nparameters:\n  ops: [ok, "Bad Op"]\n')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0]).toMatchObject({ pointer: '/parameters/ops/1', line: 4 })
  })

  it('reports YAML syntax errors with line and column', () => {
    const r = write('type: doc_lookup\ndescription: [unclosed\n')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0]).toMatchObject({ line: expect.any(Number), column: expect.any(Number) })
  })

  it('refuses a document that is not a mapping', () => {
    const r = write('- a\n- b\n')
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.issues[0].message).toContain('must be a YAML mapping')
  })

  it('enforces the name rules: lower case, pattern, length, no pack separator, no @', () => {
    expect(toolNameProblem('My_Tool')).toContain('must be lower case')
    expect(toolNameProblem(' my_tool ')).toContain('must start with a letter')
    expect(toolNameProblem('my_tool-2')).toBeUndefined()
    expect(toolNameProblem('2tool')).toContain('must start with a letter')
    expect(toolNameProblem('a'.repeat(49))).toContain('longer than 48')
    expect(toolNameProblem('gh__issues')).toContain("'__'")
    expect(toolNameProblem('@web')).toContain("'@'")
  })
})
