/**
 * The code-mode declaration typechecks with the TypeScript compiler (the `typescript`
 * devDependency, strict, no emit) for the tools the project really builds, packs, 600 generated
 * tools with varied schemas and names that need escaping — and scripts written against it pass.
 * MCP tools come from a real MCP server (the SDK's McpServer) on 127.0.0.1, started here.
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createMemoryDeps } from '../../../functions/deps'
import { success } from '../../../lib/calls/outcome'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { scopeOf } from '../../../lib/documents/ports'
import { AllowList } from '../../../lib/egress/allow-list'
import { EgressClient } from '../../../lib/egress/client'
import { codeDeclaration } from '../../../lib/tools/code-declaration'
import type { Tool } from '../../../lib/tools/contracts'
import { echoPackFactory } from '../../support/pack-factory'

const MCP_TOOL_NAMES = ['search.issues', 'issue-create', 'stats']

/** A stateless MCP server (the SDK's own McpServer) at 127.0.0.1 with tools of varied zod schemas and names to quote. */
async function startMcpServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const build = () => {
    const server = new McpServer({ name: 'tracker', version: '1.0.0' })
    server.registerTool(
      'search.issues',
      {
        description: 'Search issues by text; newest first.',
        inputSchema: {
          query: z.string().describe('Text in the title */ or body'),
          filter: z.object({ status: z.enum(['open', 'closed']).optional(), since: z.string().optional() }).optional(),
          limit: z.number().int().min(1).max(50).optional(),
        },
      },
      async () => ({ content: [{ type: 'text', text: '[]' }] }),
    )
    server.registerTool(
      'issue-create',
      {
        description: 'Create an issue.',
        inputSchema: {
          title: z.string(),
          labels: z.array(z.string()).optional(),
          severity: z.union([z.literal('low'), z.literal('high')]).optional(),
          fields: z.record(z.string(), z.number()).optional(),
        },
      },
      async () => ({ content: [{ type: 'text', text: '{"id":"ISS-1"}' }] }),
    )
    server.registerTool('stats', { description: 'Count issues.', inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: '3' }],
    }))
    return server
  }
  const httpServer = http.createServer(async (req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    const server = build()
    res.on('close', () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r))
  const { port } = httpServer.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      httpServer.closeAllConnections()
      await new Promise<void>((r) => httpServer.close(() => r()))
    },
  }
}

const libDir = dirname(require.resolve('typescript/lib/lib.es2022.d.ts'))

/** Diagnostics of the declaration plus `script`, as one strict program. */
function typecheck(declaration: string, script = 'export {}\n'): string[] {
  const files: Record<string, string> = { '/api.d.ts': declaration, '/script.ts': script }
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
  }
  const host = ts.createCompilerHost(options)
  host.getSourceFile = (name, version) => {
    const text =
      files[name] ??
      (name.startsWith(libDir) || !name.startsWith('/')
        ? readFileSync(name.startsWith('/') ? name : join(libDir, name), 'utf8')
        : undefined)
    return text === undefined ? undefined : ts.createSourceFile(name, text, version)
  }
  host.fileExists = (name) => name in files || ts.sys.fileExists(name)
  host.readFile = (name) => files[name] ?? ts.sys.readFile(name)
  host.getDefaultLibLocation = () => libDir
  host.getDefaultLibFileName = () => join(libDir, 'lib.es2022.d.ts')
  const program = ts.createProgram(['/api.d.ts', '/script.ts'], options, host)
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined
    return `${d.file?.fileName ?? ''}:${where ? where.line + 1 : ''} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
}

const tool = (name: string, inputSchema: JsonSchema, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `Tool ${name}.`,
  inputSchema,
  labels: [],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  invoke: async () => success(null),
  ...extra,
})

/** Schemas of every shape the generator handles, cycled over the generated tools. */
const SHAPES: JsonSchema[] = [
  { type: 'object', properties: {}, additionalProperties: false },
  {
    type: 'object',
    required: ['q'],
    properties: { q: { type: 'string', description: 'a query */ with a comment end' }, limit: { type: 'integer', minimum: 1 } },
  },
  { type: 'object', properties: { mode: { enum: ['a', 'b', 1, null, true] }, flag: { const: 'x' } } },
  {
    type: 'object',
    properties: {
      v: { type: ['string', 'null'] },
      tags: { type: 'array', items: { type: 'string' } },
      pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
    },
  },
  {
    type: 'object',
    properties: {
      any: { anyOf: [{ type: 'string' }, { type: 'object', properties: { id: { type: 'string' } } }] },
      one: { oneOf: [{ type: 'number' }, { type: 'boolean' }] },
    },
  },
  {
    type: 'object',
    properties: {
      both: {
        allOf: [
          { type: 'object', properties: { a: { type: 'string' } } },
          { type: 'object', properties: { b: { type: 'number' } } },
        ],
      },
    },
  },
  {
    type: 'object',
    properties: { map: { type: 'object', additionalProperties: { type: 'number' } }, ref: { $ref: '#/$defs/x' }, never: false, free: true },
  },
  {
    type: 'object',
    properties: {
      'weird-key': { type: 'string' },
      '0lead': { type: 'number' },
      'quote"d': { type: 'string' },
      deep: {
        type: 'object',
        properties: {
          a: {
            type: 'object',
            properties: {
              b: {
                type: 'object',
                properties: {
                  c: {
                    type: 'object',
                    properties: { d: { type: 'object', properties: { e: { type: 'object', properties: { f: { type: 'string' } } } } } },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  {},
]

describe('the code declaration typechecks', () => {
  it('for the tools of every bundled type the project builds, packs among them', async () => {
    const deps = createMemoryDeps({ extraFactories: [echoPackFactory] })
    const petstore = readFileSync(join(__dirname, '../../fixtures/openapi/petstore.yaml'), 'utf8')
    await deps.store.put({ key: { scope: scopeOf('acme', 'p1'), path: 'apis/petstore.yaml' }, body: petstore, actor: 't' })
    await deps.store.put({ key: { scope: scopeOf('acme', 'p1'), path: 'documents/a.md' }, body: '# A\n', actor: 't' })
    const put = (name: string, body: string) => deps.tools.put('acme', 'p1', name, body, { actor: 't' })
    await put('docs', 'type: doc_lookup\ndescription: Read a doc.\nparameters:\n  path: documents/a.md\n')
    await put(
      'add',
      'type: scripted\ndescription: Add.\nparameters:\n  inputs:\n    - { name: a, type: number }\n    - { name: b, type: number, required: false }\n    - { name: opts, type: object, required: false }\n  source: a + (b ?? 0)\n',
    )
    await put(
      'ask',
      'type: prompt_template\ndescription: Ask.\nparameters:\n  promptPrefix: "For {{audience}}"\n  model: oai/mini\n  inputs:\n    - { name: audience, type: string }\n    - { name: context, type: object, required: false }\n',
    )
    await put('ping', 'type: rest\ndescription: Ping.\nparameters:\n  url: https://example.com/ping\n')
    await put(
      'petstore',
      'type: rest_api\ndescription: Pets.\npromptHint: Prices are in cents.\nparameters:\n  specPath: apis/petstore.yaml\n  baseUrl: https://example.com\n',
    )
    await put('crm', 'type: echo_pack\ndescription: CRM\nparameters:\n  ops: [find, update]\n')
    const { tools } = await deps.tools.listAll('acme', 'p1')
    const types = new Set(tools.map((t) => t.typeId))
    for (const t of ['doc_lookup', 'scripted', 'prompt_template', 'rest', 'rest_api', 'builtin', 'echo_pack']) expect(types).toContain(t)
    const d = codeDeclaration(tools)
    expect(d.text).toContain('readonly petstore: {')
    expect(typecheck(d.text, 'export {}\nconst r: Promise<unknown> = tools.add({ a: 1 })\nvoid tools.petstore.listPets\n')).toEqual([])
  })

  it('for mcp and mcp_server tools as a loopback MCP server lists them, names that need quoting among them', async () => {
    const server = await startMcpServer()
    try {
      const deps = createMemoryDeps({ bundledFiles: [], egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }) })
      await deps.documents.put('acme', '_tenant', 'mcp-servers/tracker.yaml', `url: ${server.url}\ntimeoutMs: 5000\n`, { actor: 't' })
      const put = (name: string, body: string) => deps.tools.put('acme', 'p1', name, body, { actor: 't' })
      await put(
        'tracker',
        'type: mcp_server\ndescription: The issue tracker.\npromptHint: Ids look like ISS-1.\nparameters:\n  server: tracker\n',
      )
      await put('file_issue', 'type: mcp\ndescription: File an issue.\nparameters:\n  server: tracker\n  toolName: issue-create\n')
      const { tools, problems } = await deps.tools.listAll('acme', 'p1')
      expect(problems).toEqual([])
      const mcpTools = tools.filter((t) => t.typeId === 'mcp' || t.typeId === 'mcp_server')
      expect(new Set(mcpTools.map((t) => t.typeId))).toEqual(new Set(['mcp', 'mcp_server']))
      expect(mcpTools.length).toBe(MCP_TOOL_NAMES.length + 1)
      const d = codeDeclaration(mcpTools)
      expect(d.text).toContain('readonly tracker: {')
      const script = [
        'export {}',
        'const a: Promise<unknown> = tools.file_issue({ title: "t", labels: ["bug"], severity: "high" })',
        // the pack names a remote 'search.issues' tracker__search_issues; 'issue-create' keeps its dash and is quoted
        'void tools.tracker.search_issues({ query: "q", filter: { status: "open", since: "2026-01-01" } })',
        'void tools.tracker["issue-create"]({ title: "t" })',
        'void tools.tracker.stats()',
        '',
      ].join('\n')
      expect(typecheck(d.text, script)).toEqual([])
      expect(typecheck(d.text, 'export {}\nvoid tools.file_issue({ title: 1 })\n').length).toBeGreaterThan(0)
    } finally {
      await server.close()
    }
  })

  it('for a 600-tool surface of varied schemas and output schemas', () => {
    const tools: Tool[] = []
    for (let i = 0; i < 600; i++) {
      const shape = SHAPES[i % SHAPES.length]
      const name = i % 3 === 0 ? `pack${i % 40}__op${i}` : `tool_${i}`
      tools.push(tool(name, shape, i % 7 === 0 ? { outputSchema: SHAPES[(i + 1) % SHAPES.length] } : {}))
    }
    const d = codeDeclaration(tools)
    expect(d.names).toHaveLength(600)
    expect(typecheck(d.text)).toEqual([])
  })

  it('for names that need escaping and descriptions that try to end the comment', () => {
    const names = [
      'doc.read-lines',
      '2fa',
      'delete',
      '__proto__',
      'constructor',
      'my-pack__get.item',
      'my-pack__9lives',
      'x__',
      '__y',
      'crm',
      'crm__find',
    ]
    const tools = names.map((n) =>
      tool(n, SHAPES[1], { description: 'Ends */ early; and /* opens', promptHint: n === 'my-pack__get.item' ? 'hint */ x' : undefined }),
    )
    const d = codeDeclaration(tools)
    expect(d.map.crm__find).toBe('crm__find') // a pack named like a loose tool stays flat
    expect(
      typecheck(
        d.text,
        `export {}\nvoid tools["doc.read-lines"]({ q: 'x' })\nvoid tools["my-pack"]["get.item"]({ q: 'x' })\nvoid tools.__proto__({ q: 'x' })\nvoid tools.crm__find({ q: 'x' })\n`,
      ),
    ).toEqual([])
  })

  it('and refuses a script that calls a tool with the wrong arguments', () => {
    const d = codeDeclaration([tool('search', SHAPES[1])])
    expect(typecheck(d.text, 'export {}\nvoid tools.search({ q: 1 })\n')).toEqual([
      expect.stringContaining("Type 'number' is not assignable to type 'string'"),
    ])
  })
})

describe('scripts of the task suite typecheck against their declaration', () => {
  it('chains, fan-out and error handling', () => {
    const obj = (props: Record<string, JsonSchema>) => ({ type: 'object', properties: props, required: Object.keys(props) }) as JsonSchema
    const d = codeDeclaration([
      tool('customer_find', obj({ name: { type: 'string' } }), { outputSchema: obj({ id: { type: 'string' } }) }),
      tool('orders_list', obj({ customerId: { type: 'string' } }), {
        outputSchema: obj({ orders: { type: 'array', items: obj({ id: { type: 'string' }, total: { type: 'number' } }) } }),
      }),
      tool('crm__note', obj({ text: { type: 'string' } })),
    ])
    const script = `export {}
const { id } = await tools.customer_find({ name: 'Ada' })
const lists = await Promise.all([id, 'c2'].map((customerId) => tools.orders_list({ customerId })))
const total = lists.flatMap((l) => l.orders).reduce((s, o) => s + o.total, 0)
let note: unknown
try { note = await tools.crm.note({ text: String(total) }) } catch (e) { note = (e as Error).message }
void note
`
    expect(typecheck(d.text, script)).toEqual([])
  })
})
