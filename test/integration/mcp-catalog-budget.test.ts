/**
 * A remote MCP catalog is tenant-controlled input like a document (issue 10): its size is bounded
 * (lib/config/expansion-budget.ts). Real MCP servers (the SDK's low-level Server, stateless
 * Streamable HTTP) on 127.0.0.1 list what a hostile server would; nothing leaves loopback.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { EXPANSION_LIMITS } from '../../lib/config/expansion-budget'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { projectGate } from '../../lib/tools/project-gate'

type RemoteTool = { name: string; description: string; inputSchema: Record<string, unknown> }

const servers: http.Server[] = []
afterAll(async () => {
  await Promise.all(
    servers.map((s) => {
      const closed = new Promise((r) => s.close(r))
      s.closeAllConnections() // the service's keep-alive sockets would hold close() open
      return closed
    }),
  )
})

/** An MCP server whose tools/list answers `tools` (one page). */
async function serverListing(tools: RemoteTool[]): Promise<string> {
  const httpServer = http.createServer(async (req, res) => {
    const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }))
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    res.on('close', () => void transport.close())
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  servers.push(httpServer)
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`
}

async function packOver(url: string) {
  const deps = createMemoryDeps({ bundledFiles: [], egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }) })
  await deps.documents.put('acme', '_tenant', 'mcp-servers/hostile.yaml', `url: ${url}\ntimeoutMs: 10000\n`, { actor: 'tester' })
  await deps.tools.put('acme', 'p1', 'hostile', 'type: mcp_server\ndescription: A hostile server.\nparameters:\n  server: hostile\n', {
    actor: 'tester',
  })
  const listed = await deps.tools.listAll('acme', 'p1')
  const call = (name: string) =>
    deps.dispatcher.call(projectGate(deps.tools, 'acme', 'p1'), { tenant: 'acme', project: 'p1', subject: 'tester' }, name, {})
  return {
    tools: listed.tools.filter((t) => t.pack === 'hostile').map((t) => t.name),
    problems: listed.problems.map((p) => p.message),
    call,
  }
}

const plain = (name: string): RemoteTool => ({ name, description: name, inputSchema: { type: 'object', properties: {} } })

describe('MCP catalog budgets', () => {
  it('make a server that lists more than 1,000 tools a listing problem, its tools unavailable', async () => {
    const url = await serverListing(Array.from({ length: EXPANSION_LIMITS.packTools + 1 }, (_, i) => plain(`t${i}`)))
    const { tools, problems, call } = await packOver(url)
    expect(tools).toEqual([])
    expect(problems.join('\n')).toMatch(/tool list of server 'hostile' is over its budget of 1,000/)
    expect(await call('hostile__t1')).toMatchObject({ isError: true })
  })

  it('leave out a tool whose input schema has more than 2,000 nodes and keep the others', async () => {
    const huge = { type: 'object', properties: Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`k${i}`, { type: 'string' }])) }
    const url = await serverListing([plain('fine'), { name: 'huge', description: 'Huge.', inputSchema: huge }])
    const { tools, problems } = await packOver(url)
    expect(tools).toEqual(['hostile__fine'])
    expect(problems).toEqual([
      expect.stringMatching(/left out MCP tool 'huge': its input schema cannot be used \(the schema has more than 2,000 nodes\)/),
    ])
  })

  it('make a catalog whose schemas together pass 100,000 nodes a listing problem', async () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, { type: 'string' }])) }
    const url = await serverListing(Array.from({ length: 60 }, (_, i) => ({ name: `w${i}`, description: 'Wide.', inputSchema: wide })))
    const { tools, problems } = await packOver(url)
    expect(tools).toEqual([])
    expect(problems.join('\n')).toMatch(/input schemas of server 'hostile' \(nodes\) is over its budget of 100,000/)
  })
})
