/**
 * MCP `tools/list` under a model that limits tool names (issue 26): an MCP client forwards the
 * list to its provider as it is, so when the URL's `?model=` names an endpoint whose profile limits
 * names, each tool is listed under the name that endpoint accepts (its own, else its first alias
 * that fits), and `tools/call` takes either name. Without a model the list keeps the full names.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { success } from '../../lib/calls/outcome'
import type { ToolFactory } from '../../lib/tools/contracts'
import { ALL, client, tokenFor } from '../support/http'

/** A pack whose operations have long names and short aliases, as an MCP server pack gives tools with unsafe remote names. */
const longNames: ToolFactory<{ ops: string[] }> = {
  typeId: 'long_pack',
  kind: 'pack',
  parametersSchema: {
    type: 'object',
    required: ['ops'],
    additionalProperties: false,
    properties: { ops: { type: 'array', items: { type: 'string' } } },
  },
  async create(config) {
    return config.parameters.ops.map((op) => ({
      localName: `${op}_${'with_a_name_far_longer_than_providers_take_'.repeat(2)}`,
      aliases: [op],
      description: `Answers for ${op}.`,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      extraLabels: [],
      async invoke() {
        return success({ op })
      },
    }))
  },
}

const ACCEPT = 'application/json, text/event-stream'
let app: ReturnType<typeof createApp>
let token: string

async function session(query: string) {
  const post = async (body: unknown, headers: Record<string, string> = {}) =>
    app.request(`/brain/acme/projects/p1/mcp${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
      body: JSON.stringify(body),
    })
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'names', version: '1' } },
  })
  expect(init.status, await init.clone().text()).toBe(200)
  const headers = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-11-25' }
  let id = 1
  const rpc = async (method: string, params?: unknown) => {
    const res = await post({ jsonrpc: '2.0', id: id++, method, ...(params ? { params } : {}) }, headers)
    expect(res.status).toBe(200)
    return ((await res.json()) as { result: Record<string, unknown> }).result
  }
  return { rpc, names: async () => ((await rpc('tools/list')).tools as { name: string }[]).map((t) => t.name) }
}

beforeAll(async () => {
  app = createApp(createMemoryDeps({ extraFactories: [longNames] }))
  token = await tokenFor('acme', ALL)
  const res = await client(app, token).put(
    '/brain/acme/projects/p1/server-tools/crm',
    'type: long_pack\ndescription: CRM\nprimary: true\nparameters:\n  ops: [find]\n',
  )
  expect(res.status, await res.clone().text()).toBeLessThan(300)
})

const LONG = `crm__find_${'with_a_name_far_longer_than_providers_take_'.repeat(2)}`

describe('MCP tool names under a model that limits them', () => {
  it('lists the name the model accepts and takes either name on tools/call', async () => {
    const s = await session('?model=openai/gpt-5.4')
    const names = await s.names()
    expect(names).toContain('crm__find')
    expect(names).not.toContain(LONG)
    for (const n of names) expect(n).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    for (const name of ['crm__find', LONG]) {
      const result = await s.rpc('tools/call', { name, arguments: {} })
      expect(result.isError, JSON.stringify(result)).toBe(false)
    }
  })

  it('keeps the full names when no model is named', async () => {
    const s = await session('')
    expect(await s.names()).toContain(LONG)
  })
})
