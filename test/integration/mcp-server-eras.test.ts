/**
 * An `mcp_server` pack reaches MCP servers of both eras through the v2 SDK client
 * (lib/mcp/connections.ts negotiates at connect):
 * - a 2026-07-28-only server built with the v2 SDK (`createMcpHandler`, `legacy: 'reject'`: it
 *   refuses every 2025-era request), served on 127.0.0.1 by this test;
 * - `@modelcontextprotocol/server-everything` (2025-era Streamable HTTP with sessions), started
 *   here as a child process and reached at 127.0.0.1.
 * Every outbound call goes through the egress guard with only 127.0.0.1 allowed.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { serve } from '@hono/node-server'
import { createMcpHandler, Server } from '@modelcontextprotocol/server'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import type { AppDeps } from '../../functions/http/app-deps'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { projectGate } from '../../lib/tools/project-gate'

const T = 'acme'
const P = 'p1'
let deps: AppDeps

const putDoc = (path: string, body: string) => deps.documents.put(T, '_tenant', path, body, { actor: 'tester' })
const putTool = (name: string, body: string) => deps.tools.put(T, P, name, body, { actor: 'tester' })
const call = (name: string, params: unknown) =>
  deps.dispatcher.call(projectGate(deps.tools, T, P), { tenant: T, project: P, subject: 'tester' }, name, params)
const pack = (server: string) => `type: mcp_server\ndescription: A remote server.\nparameters:\n  server: ${server}\n`

beforeEach(() => {
  deps = createMemoryDeps({ bundledFiles: [], egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }) })
})

// ───────────── a 2026-07-28 server (v2 SDK, modern only) ─────────────

let modern: { url: string; versions: (string | undefined)[]; sessionHeaders: number; close(): Promise<void> }

function modernServer(): Server {
  const server = new Server({ name: 'modern-calc', version: '2.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler('tools/list', async () => ({
    tools: [
      {
        name: 'multiply',
        description: 'Multiply two numbers and answer with the product as JSON.',
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      },
    ],
  }))
  server.setRequestHandler('tools/call', async (request) => {
    const { a, b } = request.params.arguments as { a: number; b: number }
    return { content: [{ type: 'text', text: JSON.stringify({ product: a * b }) }] }
  })
  return server
}

beforeAll(async () => {
  const handler = createMcpHandler(() => modernServer(), { legacy: 'reject' })
  const versions: (string | undefined)[] = []
  let sessionHeaders = 0
  const httpServer = serve({
    fetch: async (req: Request) => {
      versions.push(req.headers.get('mcp-protocol-version') ?? undefined)
      const res = await handler.fetch(req)
      if (res.headers.has('mcp-session-id')) sessionHeaders++
      return res
    },
    port: 0,
    hostname: '127.0.0.1',
  })
  await new Promise<void>((r) => httpServer.once('listening', () => r()))
  modern = {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`,
    versions,
    get sessionHeaders() {
      return sessionHeaders
    },
    close: async () => {
      await handler.close()
      await new Promise<void>((r) => httpServer.close(() => r()))
    },
  }
})
afterAll(() => modern?.close())

describe('an mcp_server pack against a 2026-07-28 server built with the v2 SDK', () => {
  it('lists and calls its tools speaking 2026-07-28 only: no initialize, no session', async () => {
    await putDoc('mcp-servers/modern.yaml', `url: ${modern.url}\ntimeoutMs: 5000\n`)
    await putTool('modern', pack('modern'))
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(problems).toEqual([])
    expect(tools.filter((t) => t.pack === 'modern').map((t) => t.name)).toEqual(['modern__multiply'])
    expect(await call('modern__multiply', { a: 6, b: 7 })).toEqual({ isError: false, content: { product: 42 } })
    expect(modern.versions.length).toBeGreaterThanOrEqual(3)
    expect(new Set(modern.versions)).toEqual(new Set(['2026-07-28']))
    expect(modern.sessionHeaders).toBe(0)
  })
})

// ───────────── server-everything (2025-era Streamable HTTP) ─────────────

let everything: { url: string; child: ChildProcess }

async function freePort(): Promise<number> {
  const s = http.createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const { port } = s.address() as AddressInfo
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

beforeAll(async () => {
  const port = await freePort()
  const entry = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js')
  const child = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  await new Promise<void>((resolve, reject) => {
    let err = ''
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${err}`)), 20_000)
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString()
      if (err.includes('listening on port')) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${err}`)))
  })
  everything = { url: `http://127.0.0.1:${port}/mcp`, child }
}, 30_000)
afterAll(() => {
  everything?.child.kill()
})

describe('an mcp_server pack against @modelcontextprotocol/server-everything (2025-era)', () => {
  it('falls back to the 2025 handshake, lists the whole catalog and calls a tool', async () => {
    await putDoc('mcp-servers/everything.yaml', `url: ${everything.url}\ntimeoutMs: 10000\n`)
    await putTool('everything', pack('everything'))
    const { tools, problems } = await deps.tools.listAll(T, P)
    expect(problems).toEqual([])
    const names = tools.filter((t) => t.pack === 'everything').map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum']))
    expect(await call('everything__echo', { message: 'hello' })).toEqual({ isError: false, content: 'Echo: hello' })
    const sum = await call('everything__get-sum', { a: 2, b: 3 })
    expect(sum.isError).toBe(false)
    expect(JSON.stringify(sum.content)).toContain('5')
  }, 30_000)
})
