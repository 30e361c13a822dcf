/**
 * The MCP endpoint driven by the official SDK client over real HTTP (@hono/node-server on
 * 127.0.0.1): sessions are processes, the tool list is the budget-fitted manifest, discovery
 * activates tools and says so with `notifications/tools/list_changed`.
 */

import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { success } from '../../lib/calls/outcome'
import { ManualClock } from '../../lib/runtime/clock'
import { STRUCTURED_COPY_BYTES } from '../../lib/surface/mcp-server'
import type { ToolFactory } from '../../lib/tools/contracts'
import { waitForCancelTool } from '../support/cancellable-tool'
import { ALL, tokenFor } from '../support/http'
import { connectMcp } from '../support/mcp'

/** A singleton type with an output schema, so the MCP shape carries `outputSchema` and results `structuredContent`. */
const reportFactory: ToolFactory<{ size: number }> = {
  typeId: 'size_report',
  kind: 'single',
  parametersSchema: { type: 'object', required: ['size'], properties: { size: { type: 'integer' } }, additionalProperties: false },
  async create(config) {
    return [
      {
        inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false },
        outputSchema: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } }, required: ['name', 'size'] },
        async invoke(params) {
          return success({ name: params.name, size: config.parameters.size })
        },
      },
    ]
  },
}

let server: ReturnType<typeof serve>
let base: string
let token: string
const clock = new ManualClock()

async function put(path: string, yaml: string, project = 'p1') {
  const res = await fetch(`${base}/brain/acme/projects/${project}/${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/yaml' },
    body: yaml,
  })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
}
const mcpUrl = (query = '') => `${base}/brain/acme/projects/p1/mcp${query}`

beforeAll(async () => {
  token = await tokenFor('acme', ALL)
  server = serve({ fetch: createApp(createMemoryDeps({ extraFactories: [reportFactory], clock })).fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise<void>((r) => server.once('listening', () => r()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  await put(
    'server-tools/inventory_report',
    'type: size_report\ndescription: Report the size of a named inventory.\nprimary: true\nlabels: [read-only]\nparameters: { size: 7 }\n',
  )
  await put(
    'server-tools/purge_cache',
    'type: doc_lookup\ndescription: Purge the cache.\nprimary: true\nlabels: [write, destructive]\nparameters: { path: documents/errors.md }\n',
  )
  await put('documents/models/tiny/_provider.yaml', 'wireType: openai\nmaxTools: 6\n', '_tenant')
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('an MCP session is a process', () => {
  it('initialize spawns a process whose id is the Mcp-Session-Id, and announces listChanged tools', async () => {
    const { client, transport } = await connectMcp(mcpUrl('?recipe=default'), token)
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/)
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: true } })
    expect(client.getServerVersion()).toMatchObject({ name: 'server-tools' })
    const process = await (
      await fetch(`${base}/brain/acme/projects/p1/processes/${transport.sessionId}`, { headers: { authorization: `Bearer ${token}` } })
    ).json()
    expect(process).toMatchObject({ id: transport.sessionId, recipe: 'default', createdBy: 'alice@example.test' })
    await client.close()
  })

  it('puts the discovery block and the prompt hints into the instructions', async () => {
    await put(
      'server-tools/faq',
      'type: doc_lookup\ndescription: Frequently asked questions.\nprimary: true\npromptHint: Quote the FAQ verbatim.\nparameters: { path: documents/errors.md }\n',
    )
    const { client } = await connectMcp(mcpUrl(), token)
    const instructions = client.getInstructions() ?? ''
    expect(instructions).toContain('## More tools you can load')
    expect(instructions).toContain('`doc_discovery`')
    expect(instructions).toContain('Quote the FAQ verbatim.')
    await client.close()
  })

  it('lists this turn’s manifest in MCP shape: annotations from labels, outputSchema, structuredContent in the result', async () => {
    const { client } = await connectMcp(mcpUrl(), token)
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining(['tool_list', 'tool_description', 'whoami', 'inventory_report', 'purge_cache']),
    )
    expect(byName.has('doc_discovery')).toBe(false) // deferred: reachable through discovery only
    expect(byName.get('inventory_report')).toMatchObject({
      annotations: { readOnlyHint: true },
      outputSchema: { type: 'object', required: ['name', 'size'] },
    })
    expect(byName.get('purge_cache')?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true })
    expect(byName.get('whoami')?.annotations).toEqual({ readOnlyHint: true })
    const result = await client.callTool({ name: 'inventory_report', arguments: { name: 'shelf' } })
    expect(result).toMatchObject({ isError: false, structuredContent: { name: 'shelf', size: 7 } })
    expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual({ name: 'shelf', size: 7 })
    await client.close()
  })

  it('repeats an object result over one slice as structuredContent only for a tool that declares outputSchema; the text block always carries it', async () => {
    const description = 'A long tool. '.padEnd(STRUCTURED_COPY_BYTES + 10_000, 'x')
    const res = await fetch(`${base}/brain/acme/projects/p1/server-tools/long_tool`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'doc_lookup', description, parameters: { path: 'documents/errors.md' } }),
    })
    expect(res.status).toBe(201)
    const { client } = await connectMcp(mcpUrl(), token)
    // no outputSchema: the result once, as the text every client reads (it was twice the bytes)
    const described = await client.callTool({ name: 'tool_description', arguments: { names: ['long_tool'] } })
    expect(described.structuredContent).toBeUndefined()
    const text = (described.content as { text: string }[])[0].text
    expect(JSON.parse(text).tools[0].description).toBe(description)
    // an outputSchema requires structured results, however large (the SDK client checks them against it)
    const name = 'shelf '.padEnd(STRUCTURED_COPY_BYTES + 10_000, 'y')
    const report = await client.callTool({ name: 'inventory_report', arguments: { name } })
    expect(report).toMatchObject({ isError: false, structuredContent: { name, size: 7 } })
    await client.close()
  })

  it('answers tool failures as results with isError and the model-actionable message', async () => {
    const { client } = await connectMcp(mcpUrl(), token)
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} })
    expect(unknown.isError).toBe(true)
    expect((unknown.content as { text: string }[])[0].text).toBe(
      "Unknown tool 'no_such_tool'. Call tool_list to see the tools you can use.",
    )
    const invalid = await client.callTool({ name: 'inventory_report', arguments: { name: 3 } })
    expect(invalid.isError).toBe(true)
    expect((invalid.content as { text: string }[])[0].text).toContain("Invalid arguments for 'inventory_report'")
    await client.close()
  })

  it('runs whoami as the token’s subject inside the session’s process', async () => {
    const { client, transport } = await connectMcp(mcpUrl(), token)
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    expect(result.structuredContent).toEqual({
      tenant: 'acme',
      project: 'p1',
      subject: 'alice@example.test',
      processId: transport.sessionId,
    })
    await client.close()
  })
})

describe('discovery over MCP', () => {
  it('deferred tool → tool_description → list_changed before the result → in the next tools/list → callable', async () => {
    const { client, events } = await connectMcp(mcpUrl(), token)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('doc_discovery')
    const described = await client.callTool({ name: 'tool_description', arguments: { names: ['doc_discovery'] } })
    events.push('result')
    expect(described.isError).toBe(false)
    expect(events).toEqual(['list_changed', 'result'])
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_discovery')
    const read = await client.callTool({ name: 'doc_discovery', arguments: {} })
    expect(read.isError).toBe(false)
    expect(JSON.stringify(read.structuredContent)).toContain('tool_description')
    await client.close()
  })

  it('sends no list_changed for a call that changes nothing', async () => {
    const { client, events } = await connectMcp(mcpUrl(), token)
    await client.callTool({ name: 'whoami', arguments: {} })
    await client.callTool({ name: 'tool_list', arguments: {} })
    expect(events).toEqual([])
    await client.close()
  })

  it('leaves at most N − reserve tools for a model allowing N, the floor included', async () => {
    for (const n of ['alpha', 'bravo', 'charlie', 'delta', 'echo'])
      await put(
        `server-tools/${n}_info`,
        `type: doc_lookup\ndescription: ${n} info.\nprimary: true\nparameters: { path: documents/errors.md }\n`,
      )
    const { client } = await connectMcp(mcpUrl('?model=tiny/small&reserve=2'), token)
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names.length).toBeLessThanOrEqual(6 - 2)
    expect(names).toEqual(expect.arrayContaining(['tool_description', 'tool_list']))
    expect(client.getInstructions()).toContain('## Tools set aside this turn')
    await client.close()
  })
})

describe('the process’s own MCP URL', () => {
  it('serves a process spawned through REST, with or without the session header', async () => {
    const spawned = (await (
      await fetch(`${base}/brain/acme/projects/p1/processes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { id: string }
    const url = `${base}/brain/acme/projects/p1/processes/${spawned.id}/mcp`
    const { client, transport } = await connectMcp(url, token)
    expect(transport.sessionId).toBe(spawned.id)
    await client.callTool({ name: 'tool_description', arguments: { names: ['doc_errors'] } })
    // A second client that never initialized: the state is in the process, not in a session.
    const raw = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(raw.status).toBe(200)
    expect(((await raw.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toContain('doc_errors')
    await client.close()
  })
})

describe('a tools/call whose client goes away', () => {
  it('hands the request’s signal to the running tool, so the call ends', async () => {
    const { tool: waitForCancel, started } = waitForCancelTool()
    const app = createApp(createMemoryDeps({ extraBuiltins: [waitForCancel] }))
    const token = await tokenFor('acme', ALL)
    const mcp = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      app.request('/brain/acme/projects/p1/mcp', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      })
    const init = await mcp({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
    expect((await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202)
    const caller = new AbortController()
    const pending = mcp(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait_for_cancel', arguments: {} } },
      session,
      caller.signal,
    )
    await started
    caller.abort() // the client goes away while the tool runs
    expect(await (await pending).text()).toMatch(/cancelled: .*AbortError/)
  })
})
