/** Text hygiene and empty documents on every tenant-written document type, through the HTTP app. */
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const yamlType = { 'content-type': 'application/yaml' }
let api: ReturnType<typeof client>

beforeEach(async () => {
  api = client(createApp(createMemoryDeps()), await tokenFor('acme'))
})

const tool = (fields: Record<string, unknown>) => ({
  type: 'doc_lookup',
  description: 'Reads.',
  parameters: { path: 'documents/a.md' },
  ...fields,
})

describe('control characters and bidi overrides in documents', () => {
  it("refuses a server tool whose description is 'a\\0b\\u202e' with a 422 naming the field and position", async () => {
    const res = await api.put(`${base}/server-tools/sneaky`, tool({ description: 'a\u0000b\u202e' }))
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.errors).toEqual([
      expect.objectContaining({
        pointer: '/description',
        line: 1,
        message: expect.stringContaining('description contains U+0000 (NUL) at character 2'),
      }),
    ])
    expect((await api.get(`${base}/server-tools/sneaky`)).status).toBe(404)
  })

  it('names the label and the character of a bidi override in a YAML document, with its line', async () => {
    const res = await api.put(
      `${base}/server-tools/sneaky`,
      'type: doc_lookup\ndescription: Reads.\nlabels: [ok, "evil\\u202Etxt.exe"]\nparameters: { path: documents/a.md }\n',
    )
    expect(res.status).toBe(422)
    expect((await res.json()).errors).toEqual([
      expect.objectContaining({
        pointer: '/labels/1',
        line: 3,
        message: expect.stringContaining('labels/1 contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5'),
      }),
    ])
  })

  it('refuses the isolates U+2066–U+2069, escape sequences and DEL, in keys as well as values', async () => {
    for (const [text, pointer] of [
      ['type: doc_lookup\ndescription: "x\\u2066y"\nparameters: { path: documents/a.md }\n', '/description'],
      ['type: doc_lookup\ndescription: "\\e[31mred"\nparameters: { path: documents/a.md }\n', '/description'],
      ['type: doc_lookup\ndescription: "x\\x7f"\nparameters: { path: documents/a.md }\n', '/description'],
      ['type: doc_lookup\ndescription: x\nparameters: { path: documents/a.md, "p\\u202Ex": 1 }\n', '/parameters/p\u202ex'],
    ]) {
      const res = await api.put(`${base}/server-tools/sneaky`, text)
      expect([text, res.status]).toEqual([text, 422])
      expect((await res.json()).errors[0].pointer).toBe(pointer)
    }
  })

  it('keeps tabs and line breaks of a multi-line description, and right-to-left marks', async () => {
    const res = await api.put(
      `${base}/server-tools/multi`,
      'type: doc_lookup\ndescription: |\n  First line.\n  \tIndented by a tab.\n  \u05e9\u05dc\u05d5\u05dd\u200f!\nparameters: { path: documents/a.md }\n',
    )
    expect(res.status).toBe(201)
    expect((await res.json()).description).toBe('First line.\n\tIndented by a tab.\n\u05e9\u05dc\u05d5\u05dd\u200f!\n')
  })

  it('applies the same rule to recipes, engines, the model catalog and MCP server documents', async () => {
    for (const [path, text] of [
      ['recipes/r.yaml', 'engine: default\ndescription: "a\\0b"\n'],
      ['engines/e.yaml', 'description: "\\u202Dreversed"\n'],
      ['models/acme/_provider.yaml', 'wireType: openai\nnote: "\\u0007bell"\n'],
      ['models/acme/m1.yaml', 'modelId: "m\\u202A1"\n'],
      ['mcp-servers/jira.yaml', 'url: http://127.0.0.1:9/mcp\ndescription: "x\\u2069"\n'],
      ['specs/api.json', '{"openapi": "3.0.0", "info": {"title": "t\\u202Ex", "version": "1"}, "paths": {}}'],
    ]) {
      const res = await api.put(`${base}/documents/${path}`, text, yamlType)
      expect([path, res.status]).toEqual([path, 422])
      expect((await res.json()).errors[0].message).toMatch(
        /contains U\+[0-9A-F]{4} \(.+\) at character \d+; control characters and bidi overrides are not allowed/,
      )
      expect((await api.get(`${base}/documents/${path}`)).status).toBe(404)
    }
  })

  it('refuses a self-referencing alias as data without end, counted to its budget instead of followed forever', async () => {
    const loop = await api.put(`${base}/documents/specs/loop.yaml`, 'x: &a [ok, *a]\n', yamlType)
    expect(loop.status).toBe(422)
    expect((await loop.json()).errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining('expands to more than 100,000 units') }),
    ])
    const bad = await api.put(`${base}/documents/specs/loop2.yaml`, 'x: &a ["\\u202E", *a]\n', yamlType)
    expect(bad.status).toBe(422)
    expect((await bad.json()).errors).toHaveLength(1)
  })

  it('leaves opaque text documents (Markdown, scripts) alone', async () => {
    expect((await api.put(`${base}/documents/documents/rtl.md`, '# a\u202eb\n', { 'content-type': 'text/markdown' })).status).toBe(201)
  })

  it('refuses a bidi override or a control character in a document path with a 400 naming the position', async () => {
    const res = await api.put(`${base}/documents/notes/a%E2%80%AEdm.yaml`, 'a: 1\n', yamlType)
    expect(res.status).toBe(400)
    expect((await res.json()).detail).toContain('U+202E (RIGHT-TO-LEFT OVERRIDE) at character 8')
    expect((await api.put(`${base}/documents/notes/a%09b.md`, 'x', { 'content-type': 'text/markdown' })).status).toBe(400)
  })
})

describe('empty documents', () => {
  it('says an empty or whitespace-only server tool is empty', async () => {
    for (const text of ['', '   \n\t\n', '# only a comment\n']) {
      const res = await api.put(`${base}/server-tools/blank`, text, yamlType)
      expect(res.status).toBe(422)
      expect((await res.json()).errors[0].message).toBe('the document is empty: a server tool needs at least type and description')
    }
  })

  it('says an empty MCP server document is empty', async () => {
    const res = await api.put(`${base}/documents/mcp-servers/blank.yaml`, '  \n', yamlType)
    expect(res.status).toBe(422)
    expect((await res.json()).errors[0].message).toBe('the document is empty: an MCP server document needs at least `url`')
  })

  it('still says a list is not a mapping', async () => {
    const res = await api.put(`${base}/server-tools/list`, '- a\n- b\n', yamlType)
    expect((await res.json()).errors[0].message).toBe('a server tool must be a YAML mapping (key: value lines)')
  })
})
