/**
 * `mcp` and `mcp_server` tools against real MCP servers built with the SDK's server classes
 * (McpServer + StreamableHTTPServerTransport, and the legacy SSEServerTransport) on node http
 * servers at 127.0.0.1, started here. Every outbound call goes through the egress guard with
 * 127.0.0.1 allow-listed; nothing here talks to any other address.
 */
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createMemoryDeps } from '../../functions/deps'
import type { AppDeps } from '../../functions/http/app-deps'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { isServerToolsError } from '../../lib/errors'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { projectGate } from '../../lib/tools/project-gate'
import { failure } from '../support/failure'

// ───────────────────────── a real MCP server ─────────────────────────

interface TestMcpServer {
  url: string
  sseUrl: string
  /** initialize requests that opened a session */
  sessions: number
  /** GET event streams currently open (server → client notifications travel on these) */
  openStreams: number
  /** Authorization header of every request */
  authorizations: (string | undefined)[]
  addTool(name: string, description: string): void
  /** As after a restart: every session id becomes unknown (404). */
  forgetSessions(): Promise<void>
  close(): Promise<void>
}

function buildServer(extraTools: { name: string; description: string }[]): McpServer {
  const server = new McpServer({ name: 'test-calc', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } })
  server.registerTool(
    'add',
    { description: 'Add two numbers and answer with their sum as JSON.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }],
    }),
  )
  server.registerTool(
    'divide',
    { description: 'Divide a by b; refuses to divide by zero.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) =>
      b === 0
        ? { isError: true, content: [{ type: 'text', text: 'Cannot divide by zero: b must not be 0.' }] }
        : { content: [{ type: 'text', text: String(a / b) }] },
  )
  server.registerTool(
    'search.issues',
    {
      description:
        'Search the issue tracker for issues whose title contains the query text; returns matching issues with their id, title and status, newest first.',
      inputSchema: { query: z.string() },
    },
    async ({ query }) => ({ content: [{ type: 'text', text: JSON.stringify([{ id: 'ISS-1', title: `about ${query}` }]) }] }),
  )
  server.registerTool('admin_purge', { description: 'Delete everything.', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'purged' }],
  }))
  server.registerTool('admin_stats', { description: 'Count everything.', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: '{"count":3}' }],
  }))
  server.registerTool(
    'whoami_header',
    { description: 'Echo the Authorization header the server received.', inputSchema: {} },
    async (_args, extra) => ({
      content: [{ type: 'text', text: `you sent ${String(extra.requestInfo?.headers.authorization)}` }],
    }),
  )
  for (const t of extraTools)
    server.registerTool(t.name, { description: t.description, inputSchema: {} }, async () => ({
      content: [{ type: 'text', text: t.name }],
    }))
  return server
}

async function startMcpServer(opts: { requireAuthorization?: string } = {}): Promise<TestMcpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>()
  const sse = new Map<string, SSEServerTransport>()
  const servers: McpServer[] = []
  const extraTools: { name: string; description: string }[] = []
  const state = { sessions: 0, openStreams: 0, authorizations: [] as (string | undefined)[] }
  const httpServer = http.createServer(async (req, res) => {
    state.authorizations.push(req.headers.authorization)
    if (opts.requireAuthorization && req.headers.authorization !== opts.requireAuthorization) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'missing or wrong Authorization header' }))
      return
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    try {
      if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res)
        sse.set(transport.sessionId, transport)
        const server = buildServer(extraTools)
        servers.push(server)
        state.sessions++
        res.on('close', () => sse.delete(transport.sessionId))
        await server.connect(transport)
        return
      }
      if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = sse.get(url.searchParams.get('sessionId') ?? '')
        if (!transport) return void res.writeHead(404).end('no such session')
        await transport.handlePostMessage(req, res)
        return
      }
      if (url.pathname !== '/mcp') return void res.writeHead(404).end()
      const sessionId = req.headers['mcp-session-id'] as string | undefined
      if (sessionId) {
        const transport = transports.get(sessionId)
        if (!transport) {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }))
          return
        }
        if (req.method === 'GET') {
          state.openStreams++
          res.on('close', () => state.openStreams--)
        }
        await transport.handleRequest(req, res)
        return
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, transport)
          state.sessions++
        },
      })
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId)
      }
      const server = buildServer(extraTools)
      servers.push(server)
      await server.connect(transport)
      await transport.handleRequest(req, res)
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e))
    }
  })
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r))
  const { port } = httpServer.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sseUrl: `http://127.0.0.1:${port}/sse`,
    get sessions() {
      return state.sessions
    },
    get openStreams() {
      return state.openStreams
    },
    authorizations: state.authorizations,
    addTool(name, description) {
      extraTools.push({ name, description })
      for (const s of servers) {
        if (!s.isConnected()) continue
        s.registerTool(name, { description, inputSchema: {} }, async () => ({ content: [{ type: 'text', text: name }] }))
      }
    },
    async forgetSessions() {
      const open = [...transports.values()]
      transports.clear()
      await Promise.all(open.map((t) => t.close().catch(() => {})))
    },
    async close() {
      await Promise.all(servers.map((s) => s.close().catch(() => {})))
      httpServer.closeAllConnections()
      await new Promise<void>((r) => httpServer.close(() => r()))
    },
  }
}

async function until(condition: () => boolean, ms = 5_000) {
  const deadline = Date.now() + ms
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** A port that was listening a moment ago and is closed now: connections are refused. */
async function closedPort(): Promise<number> {
  const s = http.createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

/** Accepts connections and never answers. */
async function startSilentServer() {
  const s = http.createServer(() => {})
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      s.closeAllConnections()
      await new Promise<void>((r) => s.close(() => r()))
    },
  }
}

/** The error a call throws, synchronously or as a rejection. */

// ───────────────────────── fixtures ─────────────────────────

const T = 'acme'
const P = 'p1'
let mcp: TestMcpServer
let deps: AppDeps & { store: import('../../lib/stores/memory/document-store').MemoryDocumentStore }
let secrets: MemorySecretStore

const putDoc = (tenant: string, project: string, path: string, body: string) =>
  deps.documents.put(tenant, project, path, body, { actor: 'tester' })
const putTool = (tenant: string, project: string, name: string, body: string) =>
  deps.tools.put(tenant, project, name, body, { actor: 'tester' })
const call = (name: string, params: unknown, tenant = T, project = P) =>
  deps.dispatcher.call(projectGate(deps.tools, tenant, project), { tenant, project, subject: 'tester' }, name, params)
const names = async (tenant = T, project = P) => (await deps.tools.listAll(tenant, project)).tools.map((t) => t.name)

beforeAll(async () => {
  mcp = await startMcpServer()
})
afterAll(async () => {
  await mcp.close()
})
beforeEach(() => {
  secrets = new MemorySecretStore()
  deps = createMemoryDeps({
    bundledFiles: [],
    secrets,
    egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }),
  })
})

// ───────────────────────── tests ─────────────────────────

describe('mcp: one remote tool', () => {
  it('offers the remote tool with the input schema from tools/list, the configured description and an mcp label, and calls it', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\ntimeoutMs: 5000\n`)
    await putTool(
      T,
      '_tenant',
      'calc_add',
      'type: mcp\ndescription: Add two numbers exactly.\nparameters:\n  server: calc\n  toolName: add\n',
    )
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(problems).toEqual([])
    const tool = tools.find((t) => t.name === 'calc_add')!
    expect(tool.description).toBe('Add two numbers exactly.')
    expect(tool.labels).toEqual(['mcp'])
    expect(tool.searchHint).toBe('Add two numbers and answer with their sum as JSON.')
    expect(tool.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    })
    expect(tool.inputSchema).not.toHaveProperty('$schema')

    expect(await call('calc_add', { a: 2, b: 3 })).toEqual({ isError: false, content: { sum: 5 } })
  })

  it('rejects arguments that break the remote input schema before calling the server', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putTool(T, '_tenant', 'calc_add', 'type: mcp\ndescription: Add.\nparameters:\n  server: calc\n  toolName: add\n')
    const outcome = await call('calc_add', { a: 'two', b: 3 })
    expect(outcome.isError).toBe(true)
    expect((outcome.content as { message: string }).message).toMatch(/Invalid arguments for 'calc_add'.*a must be a number/)
  })

  it('passes a remote isError result back as a tool error carrying the server message', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putTool(T, '_tenant', 'calc_divide', 'type: mcp\ndescription: Divide.\nparameters:\n  server: calc\n  toolName: divide\n')
    expect(await call('calc_divide', { a: 6, b: 3 })).toEqual({ isError: false, content: '2' })
    const failed = await call('calc_divide', { a: 1, b: 0 })
    expect(failed.isError).toBe(true)
    expect(failed.content).toMatchObject({ message: 'Cannot divide by zero: b must not be 0.', server: 'calc', tool: 'divide' })
  })

  it('leaves a tool out with a problem when the server has no tool of that name', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putTool(T, '_tenant', 'calc_nope', 'type: mcp\ndescription: Nope.\nparameters:\n  server: calc\n  toolName: nope\n')
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(tools.map((t) => t.name)).not.toContain('calc_nope')
    expect(problems).toEqual([expect.objectContaining({ name: 'calc_nope', message: expect.stringContaining("has no tool 'nope'") })])
  })

  it('refuses an invalid server document on write, listing every problem with its line', async () => {
    const error = await failure(() =>
      putDoc(
        T,
        '_tenant',
        'mcp-servers/broken.yaml',
        `url: ftp://example.test/mcp\nheaders:\n  Content-Type: text/plain\n  X-Key: "\${secret:}"\ntimeoutMs: 5\n`,
      ),
    )
    expect(isServerToolsError(error, 'INVALID_CONFIG')).toBe(true)
    expect(error.details.errors.map((i: { line: number; message: string }) => [i.line, i.message.replace(/ \(line \d+\)$/, '')])).toEqual([
      [1, 'url must match pattern "^https?://"'],
      [5, 'timeoutMs must be >= 100'],
    ])
    const second = await failure(() =>
      putDoc(T, '_tenant', 'mcp-servers/broken.yaml', `url: ${mcp.url}\nheaders:\n  Content-Type: text/plain\n  X-Key: "\${secret:}"\n`),
    )
    expect(second.details.errors.map((i: { line: number; message: string }) => i.line)).toEqual([3, 4])
    expect((await failure(() => putDoc(T, '_tenant', 'mcp-servers/Bad Name.yaml', `url: ${mcp.url}\n`))).message).toMatch(/is not valid/)
    await putDoc(T, '_tenant', 'mcp-servers/README.md', '# notes beside the server documents are fine')
  })

  it('reports a missing server document, or one stored before validation, as a problem that names the line', async () => {
    await putTool(T, '_tenant', 'ghost', 'type: mcp\ndescription: Ghost.\nparameters:\n  server: ghost\n  toolName: add\n')
    // written straight into the store, as an older layer might hold it
    await deps.store.put({
      key: { scope: `${T}#_tenant`, path: 'mcp-servers/broken.yaml' },
      body: `url: ${mcp.url}\nheader:\n  Authorization: x\ntimeoutMs: 5\n`,
      actor: 'tester',
    })
    await putTool(T, '_tenant', 'broken', 'type: mcp\ndescription: Broken.\nparameters:\n  server: broken\n  toolName: add\n')
    const { problems } = await deps.tools.listAll(T, P)
    expect(problems.find((p) => p.name === 'ghost')?.message).toMatch(/no MCP server document mcp-servers\/ghost\.yaml/)
    const broken = problems.find((p) => p.name === 'broken')?.message
    expect(broken).toMatch(/header is not allowed here — did you mean 'headers'\? \(line 3\)/)
    expect(broken).toMatch(/timeoutMs must be >= 100 \(line 4\)/)
  })
})

describe('mcp_server: a whole server as a pack', () => {
  const pack = (extra = '', params = '') =>
    `type: mcp_server\ndescription: The calculator and tracker.\nlabels: [external]\npromptHint: Prefer calc for arithmetic.\n${extra}parameters:\n  server: calc\n${params}`

  it('expands every remote tool into <pack>__<tool> with pack labels plus mcp and mcp:<pack>, the remote description and an 80-character searchHint', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putTool(T, P, 'calc', pack())
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(problems).toEqual([])
    const packed = tools.filter((t) => t.pack === 'calc')
    expect(packed.map((t) => t.name)).toEqual([
      'calc__add',
      'calc__admin_purge',
      'calc__admin_stats',
      'calc__divide',
      'calc__search_issues',
      'calc__whoami_header',
    ])
    const search = packed.find((t) => t.name === 'calc__search_issues')!
    expect(search.labels).toEqual(['external', 'mcp', 'mcp:calc'])
    expect(search.description).toMatch(/^Search the issue tracker for issues whose title contains the query text/)
    expect(search.searchHint).toHaveLength(80)
    expect(search.searchHint).toBe('Search the issue tracker for issues whose title contains the query text; return…')
    expect(search.promptHint).toBe('Prefer calc for arithmetic.')
    expect(search.deferred).toBe(false)
    expect(await call('calc__search_issues', { query: 'login' })).toEqual({
      isError: false,
      content: [{ id: 'ISS-1', title: 'about login' }],
    })
  })

  it('honours include and exclude globs, disabledSubTools and defaultDeferred', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putTool(
      T,
      P,
      'calc',
      pack(
        'defaultDeferred: true\ndisabledSubTools: [divide]\n',
        "  include: ['ADD', 'div*', 'admin_*', 'search?issues']\n  exclude: ['*purge']\n",
      ),
    )
    const packed = (await deps.tools.listAll(T, P)).tools.filter((t) => t.pack === 'calc')
    expect(packed.map((t) => t.name)).toEqual(['calc__add', 'calc__admin_stats', 'calc__search_issues'])
    expect(packed.every((t) => t.deferred)).toBe(true)
    expect(await call('calc__divide', { a: 1, b: 1 })).toMatchObject({
      isError: true,
      content: { message: expect.stringMatching(/Unknown tool 'calc__divide'/) },
    })
    expect(await call('calc__admin_stats', {})).toEqual({ isError: false, content: { count: 3 } })
  })

  it('refreshes the cached catalog when the server sends notifications/tools/list_changed', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\ncatalogTtlMs: 3600000\n`)
    await putTool(T, P, 'calc', pack())
    const name = `late_${randomUUID().slice(0, 8)}`
    const streams = mcp.openStreams
    expect(await names()).not.toContain(`calc__${name}`)
    // notifications travel on the session's GET event stream, which the client opens right after initializing
    await until(() => mcp.openStreams > streams)
    mcp.addTool(name, 'A tool that arrived after the first listing.')
    const deadline = Date.now() + 5_000
    let seen = await names()
    while (!seen.includes(`calc__${name}`) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      seen = await names()
    }
    expect(seen).toContain(`calc__${name}`)
    expect(await call(`calc__${name}`, {})).toEqual({ isError: false, content: name })
  })

  it('leaves an unreachable server out of the listing with a problems entry and keeps every other tool', async () => {
    const port = await closedPort()
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await putDoc(T, '_tenant', 'mcp-servers/down.yaml', `url: http://127.0.0.1:${port}/mcp\ntimeoutMs: 2000\n`)
    await putTool(T, P, 'calc', pack())
    await putTool(T, P, 'down', 'type: mcp_server\ndescription: A server that is down.\nparameters:\n  server: down\n')
    await putTool(
      T,
      P,
      'down_one',
      'type: mcp\ndescription: One tool of the server that is down.\nparameters:\n  server: down\n  toolName: add\n',
    )
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(tools.map((t) => t.name)).toContain('calc__add')
    expect(tools.map((t) => t.name)).toContain('whoami')
    expect(tools.some((t) => t.name.startsWith('down'))).toBe(false)
    expect(problems.map((p) => p.name)).toEqual(['down', 'down_one'])
    expect(problems[0].message).toMatch(/MCP server 'down' could not be reached: .*connection refused/)
    const outcome = await call('down_one', {})
    expect(outcome.isError).toBe(true)
    // the caller learns why, not just "unknown tool"
    expect((outcome.content as { message: string }).message).toMatch(
      /down_one' is unavailable right now: .*MCP server 'down' could not be reached/,
    )
  })

  it('never waits on a server that does not answer longer than its timeout', async () => {
    const silent = await startSilentServer()
    try {
      await putDoc(T, '_tenant', 'mcp-servers/silent.yaml', `url: ${silent.url}\ntimeoutMs: 400\n`)
      await putTool(T, P, 'silent', 'type: mcp_server\ndescription: Never answers.\nparameters:\n  server: silent\n')
      const { problems } = await deps.tools.listAll(T, P)
      // the listing gave up at the document's 400 ms, not the 10 s default: its own message says so
      expect(problems).toEqual([
        expect.objectContaining({ name: 'silent', message: expect.stringMatching(/did not answer within 400 ms/) }),
      ])
      // a second listing right after still reports it (answered from the recent-failure memo)
      expect((await deps.tools.listAll(T, P)).problems).toHaveLength(1)
    } finally {
      await silent.close()
    }
  })

  it('speaks the legacy HTTP+SSE transport when the server document says so', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/legacy.yaml', `url: ${mcp.sseUrl}\ntransport: sse\n`)
    await putTool(T, P, 'legacy', 'type: mcp_server\ndescription: Old server.\nparameters:\n  server: legacy\n  include: [add]\n')
    expect(await names()).toContain('legacy__add')
    expect(await call('legacy__add', { a: 40, b: 2 })).toEqual({ isError: false, content: { sum: 42 } })
  })
})

describe('MCP server documents: secrets, egress and connection reuse', () => {
  let secured: TestMcpServer
  beforeAll(async () => {
    secured = await startMcpServer({ requireAuthorization: 'Bearer tok-3f9a-very-secret' })
  })
  afterAll(async () => {
    await secured.close()
  })

  it('sends configured headers with ${secret:NAME} substituted, and scrubs the value from results', async () => {
    await secrets.put(T, 'MCP_TOKEN', 'tok-3f9a-very-secret')
    await putDoc(T, '_tenant', 'mcp-servers/secure.yaml', `url: ${secured.url}\nheaders:\n  Authorization: "Bearer \${secret:MCP_TOKEN}"\n`)
    await putTool(T, P, 'secure', 'type: mcp_server\ndescription: Needs a token.\nparameters:\n  server: secure\n')
    expect(await names()).toContain('secure__whoami_header')
    expect(secured.authorizations.at(-1)).toBe('Bearer tok-3f9a-very-secret')
    const outcome = await call('secure__whoami_header', {})
    expect(outcome).toEqual({ isError: false, content: 'you sent Bearer [redacted secret:MCP_TOKEN]' })
    expect(JSON.stringify(outcome)).not.toContain('tok-3f9a')
  })

  it('scrubs a secret the server echoes into its catalog, in any spelling, before any tools:read holder sees it', async () => {
    secured.addTool('leaky_doc', 'Signed in as tok-3f9a-very-secret; also TOK-3F9A-VERY-SECRET, tok%252D3f9a%252Dvery%252Dsecret.')
    await secrets.put(T, 'MCP_TOKEN', 'tok-3f9a-very-secret')
    await putDoc(T, '_tenant', 'mcp-servers/secure.yaml', `url: ${secured.url}\nheaders:\n  Authorization: "Bearer \${secret:MCP_TOKEN}"\n`)
    await putTool(T, P, 'secure', 'type: mcp_server\ndescription: Needs a token.\nparameters:\n  server: secure\n')
    const { tools } = await deps.tools.listAll(T, P)
    const leaky = tools.find((t) => t.name === 'secure__leaky_doc')
    expect(leaky?.description).toBe(
      'Signed in as [redacted secret:MCP_TOKEN]; also [redacted secret:MCP_TOKEN], [redacted secret:MCP_TOKEN].',
    )
    expect(JSON.stringify(tools.map(({ invoke: _, ...t }) => t)).toLowerCase()).not.toContain('3f9a')
  })

  it('leaves out a remote tool whose description carries invisible tag characters, and says which character', async () => {
    secured.addTool('tagged_doc', `Harmless.${String.fromCodePoint(0xe0049, 0xe0067, 0xe006e)}`)
    await secrets.put(T, 'MCP_TOKEN', 'tok-3f9a-very-secret')
    await putDoc(T, '_tenant', 'mcp-servers/secure.yaml', `url: ${secured.url}\nheaders:\n  Authorization: "Bearer \${secret:MCP_TOKEN}"\n`)
    await putTool(T, P, 'secure', 'type: mcp_server\ndescription: Needs a token.\nparameters:\n  server: secure\n')
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(tools.map((t) => t.name)).toContain('secure__whoami_header')
    expect(tools.map((t) => t.name)).not.toContain('secure__tagged_doc')
    expect(problems.map((p) => p.message)).toContainEqual(expect.stringContaining("'secure__tagged_doc'"))
    expect(problems.map((p) => p.message).join('\n')).toMatch(/U\+E0049 \(an invisible tag character\)/)
  })

  it('leaves the server out when a referenced secret is not set, or the server refuses the header', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/secure.yaml', `url: ${secured.url}\nheaders:\n  Authorization: "Bearer \${secret:MCP_TOKEN}"\n`)
    await putTool(T, P, 'secure', 'type: mcp_server\ndescription: Needs a token.\nparameters:\n  server: secure\n')
    let { problems } = await deps.tools.listAll(T, P)
    expect(problems[0].message).toMatch(/needs the secret 'MCP_TOKEN', which is not set for this tenant/)

    await secrets.put(T, 'MCP_TOKEN', 'wrong-token-value')
    ;({ problems } = await deps.tools.listAll(T, P))
    expect(problems[0].message).toMatch(/MCP server 'secure' could not be reached: the server answered HTTP 401/)
    expect(problems[0].message).not.toContain('wrong-token-value')
  })

  it('picks up a rotated secret on the next use without a document change', async () => {
    await secrets.put(T, 'MCP_TOKEN', 'wrong-token-value')
    await putDoc(T, '_tenant', 'mcp-servers/secure.yaml', `url: ${secured.url}\nheaders:\n  Authorization: "Bearer \${secret:MCP_TOKEN}"\n`)
    await putTool(T, P, 'secure', 'type: mcp_server\ndescription: Needs a token.\nparameters:\n  server: secure\n')
    expect((await deps.tools.listAll(T, P)).problems).toHaveLength(1)
    await secrets.put(T, 'MCP_TOKEN', 'tok-3f9a-very-secret')
    expect(await names()).toContain('secure__add')
  })

  it('refuses a server address the egress guard does not allow, before connecting', async () => {
    const guarded = createMemoryDeps({ bundledFiles: [], secrets }) // default egress: loopback is not allowed
    const before = mcp.sessions
    await guarded.documents.put(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`, { actor: 'tester' })
    await guarded.tools.put(T, P, 'calc', 'type: mcp_server\ndescription: Calc.\nparameters:\n  server: calc\n', { actor: 'tester' })
    const { tools, problems } = await guarded.tools.listAll(T, P)
    expect(tools.some((t) => t.pack === 'calc')).toBe(false)
    expect(problems[0].message).toMatch(/outbound calls to a loopback address are not allowed/)
    expect(mcp.sessions).toBe(before)
  })

  it('reuses one connection per tenant and document version, and opens a new one when the document changes', async () => {
    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\ncatalogTtlMs: 0\n`)
    await putTool(T, '_tenant', 'calc', 'type: mcp_server\ndescription: Calc.\nparameters:\n  server: calc\n')
    const start = mcp.sessions
    await names(T, 'p1')
    await names(T, 'p2') // another project of the same tenant reads the same tenant-layer document
    await call('calc__add', { a: 1, b: 1 }, T, 'p1')
    await call('calc__add', { a: 1, b: 1 }, T, 'p2')
    expect(mcp.sessions - start).toBe(1)

    await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${mcp.url}\ncatalogTtlMs: 0\ntimeoutMs: 9000\n`)
    expect(await call('calc__add', { a: 2, b: 2 })).toEqual({ isError: false, content: { sum: 4 } })
    expect(mcp.sessions - start).toBe(2)

    // a project that overrides the server document gets a connection of its own
    await putDoc(T, 'p3', 'mcp-servers/calc.yaml', `url: ${mcp.url}\n`)
    await names(T, 'p3')
    expect(mcp.sessions - start).toBe(3)
  })

  it('never shares a connection across tenants, even for identical documents', async () => {
    const body = `url: ${mcp.url}\n`
    const start = mcp.sessions
    for (const tenant of ['acme', 'globex']) {
      await putDoc(tenant, '_tenant', 'mcp-servers/calc.yaml', body)
      await putTool(tenant, '_tenant', 'calc', 'type: mcp_server\ndescription: Calc.\nparameters:\n  server: calc\n')
      expect(await call('calc__add', { a: 1, b: 2 }, tenant)).toEqual({ isError: false, content: { sum: 3 } })
    }
    expect(mcp.sessions - start).toBe(2)
  })

  it('starts a fresh session when the server has forgotten the old one', async () => {
    const restarting = await startMcpServer()
    try {
      await putDoc(T, '_tenant', 'mcp-servers/calc.yaml', `url: ${restarting.url}\n`)
      await putTool(T, P, 'calc', 'type: mcp_server\ndescription: Calc.\nparameters:\n  server: calc\n')
      expect(await call('calc__add', { a: 1, b: 1 })).toEqual({ isError: false, content: { sum: 2 } })
      await restarting.forgetSessions()
      expect(await call('calc__add', { a: 2, b: 3 })).toEqual({ isError: false, content: { sum: 5 } })
      expect(restarting.sessions).toBe(2)
    } finally {
      await restarting.close()
    }
  })
})
