/**
 * `npm start` as an MCP server for clients that are not ours, all on one deployment: the official
 * SDK clients over Streamable HTTP — v1 (1.32.2, the 2025-era handshake) and v2 (2.4.0, pinned to
 * the stateless 2026-07-28) — and the MCP Inspector's CLI (installed on first use: test/support/inspector.ts, 2025-11-25) as a
 * separate process.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inspectorBin } from '../support/inspector'
import { connectMcp, connectMcpModern } from '../support/mcp'
import { expectSchema } from '../support/mcp-schema'
import { type LocalService, startLocalService, stopLocalService } from '../support/npm-start'

const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-mcp-'))
let service: LocalService
let mcpUrl: string

/** The Inspector's CLI mode: the result as JSON on stdout; a non-zero exit when it is a tool error. */
async function inspector(...args: string[]): Promise<{ exit: number; out: any }> {
  const bin = await inspectorBin()
  try {
    const { stdout } = await promisify(execFile)(
      bin,
      ['--cli', mcpUrl, '--transport', 'http', '--header', `Authorization: Bearer ${service.token}`, ...args],
      { timeout: 60_000 },
    )
    return { exit: 0, out: JSON.parse(stdout) }
  } catch (e) {
    const failed = e as { code?: number; stdout?: string }
    if (typeof failed.code !== 'number' || !failed.stdout) throw e
    return { exit: failed.code, out: JSON.parse(failed.stdout) }
  }
}

beforeAll(async () => {
  await inspectorBin() // a first run installs it (up to a few minutes on a slow registry)
  service = await startLocalService(dataDir)
  mcpUrl = `${service.url}/projects/p1/mcp`
}, 300_000)

afterAll(async () => {
  if (service) await stopLocalService(service.child)
  rmSync(dataDir, { recursive: true, force: true })
})

describe('MCP clients against npm start', () => {
  it('the SDK client initializes, lists, discovers, calls and ends its session', async () => {
    const { client, transport, events } = await connectMcp(mcpUrl, service.token)
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['tool_list', 'tool_description', 'whoami']))
    expect(names).not.toContain('doc_errors')
    const who = await client.callTool({ name: 'whoami', arguments: {} })
    expect(who.structuredContent).toMatchObject({ tenant: 'demo', project: 'p1', processId: transport.sessionId })
    await client.callTool({ name: 'tool_description', arguments: { names: ['doc_errors'] } })
    expect(events).toEqual(['list_changed'])
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_errors')
    expect((await client.callTool({ name: 'doc_errors', arguments: {} })).isError).toBe(false)
    const id = transport.sessionId
    await transport.terminateSession()
    expect(
      (await fetch(`${service.url}/projects/p1/processes/${id}`, { headers: { authorization: `Bearer ${service.token}` } })).status,
    ).toBe(404)
    await client.close()
  }, 30_000)

  it('the v2 SDK client on 2026-07-28 discovers, lists, describes and calls without a session', async () => {
    const { client, seen } = await connectMcpModern(`${mcpUrl}?recipe=default`, service.token)
    expect(client.getProtocolEra()).toBe('modern')
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('doc_errors')
    await client.callTool({ name: 'tool_description', arguments: { names: ['doc_errors'] } })
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_errors')
    expect((await client.callTool({ name: 'doc_errors', arguments: {} })).isError).toBe(false)
    const schemaOf: Record<string, string> = {
      'server/discover': 'DiscoverResultResponse',
      'tools/list': 'ListToolsResultResponse',
      'tools/call': 'CallToolResultResponse',
    }
    for (const s of seen) {
      expect(s.sessionHeader).toBeNull()
      expectSchema(schemaOf[s.method], JSON.parse(s.body))
    }
    await client.close()
  }, 30_000)

  it('the MCP Inspector CLI lists the tools and calls them, with arguments', async () => {
    const listed = await inspector('--method', 'tools/list')
    expect(listed.exit).toBe(0)
    expect(listed.out.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['tool_list', 'tool_description', 'whoami']),
    )
    const who = await inspector('--method', 'tools/call', '--tool-name', 'whoami')
    expect(who).toMatchObject({ exit: 0, out: { isError: false, structuredContent: { tenant: 'demo', project: 'p1' } } })
    const viaInvoke = await inspector('--method', 'tools/call', '--tool-name', 'invoke_tool', '--tool-arg', 'name=whoami')
    expect(viaInvoke).toMatchObject({ exit: 0, out: { isError: false, structuredContent: { tenant: 'demo' } } })
    // A tool failure is a result with isError (not a protocol error): the Inspector reports it as such.
    const failed = await inspector('--method', 'tools/call', '--tool-name', 'invoke_tool', '--tool-arg', 'name=no_such_tool')
    expect(failed.exit).not.toBe(0)
    expect(failed.out).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: "Unknown tool 'no_such_tool'. Call tool_list to see the tools you can use." }],
    })
  }, 120_000)
})
