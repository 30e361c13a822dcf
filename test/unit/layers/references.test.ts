import { describe, expect, it } from 'vitest'
import { danglingReferences, referencesOf } from '../../../lib/layers/references'

const file = (path: string, body: string) => ({ path, body })

describe('what a layer document names', () => {
  it('finds the engine, tools (packs by their head, not labels or patterns) and models of a recipe', () => {
    const refs = referencesOf(
      file('recipes/r.yaml', 'engine: helper\nallowedToolsAdd: [wiki, "@docs", pets__list, "doc_*"]\nmodels: [openai/gpt-5.1]\n'),
    )
    expect(refs).toEqual([
      { to: 'engines/helper.yaml', pointer: '/engine' },
      { to: 'server-tools/wiki.yaml', pointer: '/allowedToolsAdd/0' },
      { to: 'server-tools/pets.yaml', pointer: '/allowedToolsAdd/2' },
      { to: 'models/openai/_provider.yaml', pointer: '/models/0' },
      { to: 'models/openai/gpt-5.1.yaml', pointer: '/models/0' },
    ])
  })

  it("finds a tool's script, spec, document, MCP server and model", () => {
    const tool = (params: string) => referencesOf(file('server-tools/t.yaml', `type: x\ndescription: d\nparameters:\n${params}`))
    expect(tool('  scriptPath: scripts/a.js\n')).toEqual([{ to: 'scripts/a.js', pointer: '/parameters/scriptPath' }])
    expect(tool('  specPath: documents/pets.yaml\n')).toEqual([{ to: 'documents/pets.yaml', pointer: '/parameters/specPath' }])
    expect(tool('  server: everything\n')).toEqual([{ to: 'mcp-servers/everything.yaml', pointer: '/parameters/server' }])
    expect(tool('  model: tiny/small\n').map((r) => r.to)).toEqual(['models/tiny/_provider.yaml', 'models/tiny/small.yaml'])
  })

  it('reports a deleted path only where it no longer resolves: not where the layer or an outer one keeps a copy', () => {
    const recipe = file('recipes/r.yaml', 'engine: default\nallowedToolsAdd: [wiki]\n')
    const deleted = ['server-tools/wiki.yaml']
    expect(danglingReferences(deleted, [{ layer: 'p1', files: [recipe] }])).toEqual([
      { deleted: 'server-tools/wiki.yaml', layer: 'p1', path: 'recipes/r.yaml', pointer: '/allowedToolsAdd/0' },
    ])
    expect(danglingReferences(deleted, [{ layer: 'p1', files: [recipe, file('server-tools/wiki.yaml', 'x: 1\n')] }])).toEqual([])
    expect(danglingReferences(deleted, [{ layer: 'p1', files: [recipe], outer: new Set(deleted) }])).toEqual([])
  })
})
