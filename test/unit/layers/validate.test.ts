import { describe, expect, it } from 'vitest'
import { validateOffline } from '../../../functions/cli/offline'

const prompt =
  'type: prompt_template\ndescription: Sum up.\nparameters:\n  model: gateway/big\n  promptPrefix: "Sum up {{text}}"\n  inputs: [{ name: text, type: string }]\n'

describe('validateLayer (offline, the service’s own checks)', () => {
  it('finds every missing reference of a tool, at the line of the field that names it', async () => {
    const problems = await validateOffline({
      project: '_tenant',
      files: [
        { path: 'server-tools/handbook.yaml', body: 'type: doc_lookup\ndescription: Handbook.\nparameters:\n  path: documents/nope.md\n' },
        { path: 'server-tools/jira.yaml', body: 'type: mcp_server\ndescription: Jira.\nparameters:\n  server: jira\n' },
        { path: 'server-tools/pets.yaml', body: 'type: rest_api\ndescription: Pets.\nparameters:\n  specPath: documents/petstore.yaml\n' },
        { path: 'server-tools/sum.yaml', body: prompt },
        { path: 'models/gateway/big.yaml', body: 'maxTools: 5\n' },
      ],
    })
    expect(problems.map((p) => `${p.path}:${p.line}:${p.column} ${p.message}`)).toEqual([
      "models/gateway/big.yaml:1:1 model instance 'gateway' has no models/gateway/_provider.yaml in this layer, an outer one or the bundled defaults",
      "server-tools/handbook.yaml:4:9 the document 'documents/nope.md' does not exist in this layer, an outer one or the bundled defaults",
      "server-tools/jira.yaml:4:11 the MCP server document 'mcp-servers/jira.yaml' does not exist in this layer, an outer one or the bundled defaults",
      "server-tools/pets.yaml:4:13 the OpenAPI document 'documents/petstore.yaml' does not exist in this layer, an outer one or the bundled defaults",
      "server-tools/sum.yaml:4:10 the model provider document 'models/gateway/_provider.yaml' does not exist in this layer, an outer one or the bundled defaults",
    ])
  })

  it('puts a misspelt key before the "is required" it causes, and names no line twice', async () => {
    const problems = await validateOffline({
      project: '_tenant',
      files: [
        {
          path: 'server-tools/typo.yaml',
          body: 'type: scripted\ndescripton: Adds.\nparameters:\n  source: "1"\n  inputs: [{ name: a, tpye: number }]\n',
        },
      ],
    })
    expect(problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      "2:1 unknown field 'descripton' — did you mean 'description'?",
      "5:29 parameters.inputs[0].tpye is not allowed here — did you mean 'type'?",
      '1:1 description is required',
      '5:12 parameters.inputs[0].type is required',
    ])
  })

  it('accepts the same references once the documents exist, here or in the tenant layer given as context', async () => {
    const problems = await validateOffline({
      project: 'p1',
      files: [
        {
          path: 'server-tools/handbook.yaml',
          body: 'type: doc_lookup\ndescription: Handbook.\nparameters:\n  path: documents/handbook.md\n',
        },
        { path: 'documents/handbook.md', body: '# Handbook\n' },
        { path: 'server-tools/jira.yaml', body: 'type: mcp_server\ndescription: Jira.\nparameters:\n  server: jira\n' },
        { path: 'recipes/helper.yaml', body: 'engine: default\nallowedToolsAdd: ["@docs"]\nmodels: [gateway/big]\n' },
      ],
      tenantFiles: [
        { path: 'mcp-servers/jira.yaml', body: 'url: https://jira.example.com/mcp\n' },
        { path: 'models/gateway/_provider.yaml', body: 'wireType: openai\nmaxTools: 64\n' },
      ],
    })
    expect(problems).toEqual([])
  })

  it('reports an @label that selects nothing as an error and an unknown name as a warning, on their lines', async () => {
    const problems = await validateOffline({
      project: '_tenant',
      files: [
        { path: 'engines/coder.yaml', body: 'allowedTools:\n  - tool_list\n  - "@nothing"\n' },
        { path: 'recipes/coder.yaml', body: 'engine: coder\nallowedToolsAdd: [ghost]\nmodels: [nowhere/m]\n' },
      ],
    })
    expect(problems.map((p) => [p.path, p.line, p.severity, p.message])).toEqual([
      [
        'engines/coder.yaml',
        3,
        'error',
        "engine coder allowedTools: '@nothing' selects no tool now (label selectors are resolved once, at spawn)",
      ],
      [
        'recipes/coder.yaml',
        2,
        'warning',
        "allowedToolsAdd: no tool 'ghost' exists now; the name stays in the process and takes effect if such a tool appears",
      ],
      ['recipes/coder.yaml', 3, 'error', "unknown model instance in 'nowhere/m'"],
    ])
  })

  it('mentions problems of the tenant layer given as context as warnings: they are not what is validated', async () => {
    const problems = await validateOffline({
      project: 'p1',
      files: [{ path: 'documents/a.md', body: 'a' }],
      tenantFiles: [{ path: 'server-tools/bad.yaml', body: 'type: doc_lookup\nparameters: { path: documents/a.md }\n' }],
    })
    expect(problems).toEqual([
      { path: 'server-tools/bad.yaml', layer: 'context', line: 1, column: 1, message: 'description is required', severity: 'warning' },
    ])
  })

  it('holds egress/allow.yaml to the tenant layer and its own parser', async () => {
    const inProject = await validateOffline({ project: 'p1', files: [{ path: 'egress/allow.yaml', body: 'hosts: [a.example.com]\n' }] })
    expect(inProject.map((p) => p.message)).toEqual([
      "egress/allow.yaml is read from the _tenant layer only; a project cannot widen its tenant's egress",
    ])
    const bad = await validateOffline({
      project: '_tenant',
      files: [{ path: 'egress/allow.yaml', body: 'hosts: [a.example.com]\ncidrs: [not-a-cidr]\nports: [1]\n' }],
    })
    expect(bad.length).toBeGreaterThan(0)
    expect(bad.every((p) => p.path === 'egress/allow.yaml' && p.severity === 'error' && p.line !== undefined)).toBe(true)
  })
})
