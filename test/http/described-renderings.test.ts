/**
 * tool_description answers assembled from what was rendered once per tool version
 * (lib/surface/described.ts, issue 21 D2): counted in renders and compared byte for byte with
 * the answer's own JSON, never timed.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { exportedBodies } from '../../functions/http/routes/documents'
import { WORK_BUDGETS } from '../../lib/config/expansion-budget'
import { client, tokenFor } from '../support/http'

const LONG = 150_000
const SLICE = WORK_BUDGETS.jsonRenderSlice.limit

async function setUp(tenants: string[]) {
  const deps = createMemoryDeps({})
  const app = createApp(deps)
  const apis = Object.fromEntries(await Promise.all(tenants.map(async (t) => [t, client(app, await tokenFor(t))] as const)))
  return { deps, apis }
}

/** A doc_lookup tool whose description is `text` padded to LONG characters (escapes and non-ASCII included). */
const longTool = (text: string) => ({
  type: 'doc_lookup',
  description: `${text} "quoted"\n€😀 `.padEnd(LONG, 'x'),
  parameters: { path: 'documents/getting-started.md' },
})

async function describeTools(api: ReturnType<typeof client>, base: string, id: string, names: unknown) {
  const res = await api.post(`${base}/processes/${id}/tool-calls`, { name: 'tool_description', params: { names } })
  expect(res.status).toBe(200)
  const text = await res.text()
  const body = JSON.parse(text) as { isError: boolean; content: { tools: { name: string; description: string }[] } }
  // the bytes are those one JSON.stringify of the answer gives: nothing doubled, nothing stale in between
  expect(text).toBe(JSON.stringify(body))
  expect(body.isError).toBe(false)
  return body.content.tools
}

describe('tool_description answers from renderings kept per tool version', () => {
  it('renders each tool once however often, in whichever order and subset, and through however many processes it is described', async () => {
    const { deps, apis } = await setUp(['acme'])
    const api = apis.acme
    const base = '/brain/acme/projects/p1'
    const names = ['t0', 't1', 't2', 't3', 't4', 't5']
    for (const n of names) expect((await api.put(`${base}/server-tools/${n}`, longTool(n))).status).toBe(201)
    const renders = await deps.surface.describedRenders()
    const variants: unknown[] = [names, [...names].reverse(), ['t3', 't1'], 't5,t0,t2', ['t4', 't4', ' t4 '], names.join(',')]
    for (let round = 0; round < 2; round++) {
      const { id } = await (await api.post(`${base}/processes`, {})).json()
      for (const v of variants) {
        const tools = await describeTools(api, base, id, v)
        for (const t of tools) expect(t.description).toBe(longTool(t.name).description)
      }
    }
    expect((await deps.surface.describedRenders()) - renders).toBe(names.length)
  })

  it('answers a changed description at the next call, rendering only the new version', async () => {
    const { deps, apis } = await setUp(['acme'])
    const api = apis.acme
    const base = '/brain/acme/projects/p1'
    for (const n of ['a', 'b']) expect((await api.put(`${base}/server-tools/${n}`, longTool(`${n} first`))).status).toBe(201)
    const { id } = await (await api.post(`${base}/processes`, {})).json()
    expect((await describeTools(api, base, id, ['a', 'b'])).map((t) => t.description)).toEqual([
      longTool('a first').description,
      longTool('b first').description,
    ])
    const renders = await deps.surface.describedRenders()
    expect((await api.put(`${base}/server-tools/a`, longTool('a second'))).status).toBe(200)
    expect((await describeTools(api, base, id, ['a', 'b'])).map((t) => t.description)).toEqual([
      longTool('a second').description,
      longTool('b first').description,
    ])
    expect((await deps.surface.describedRenders()) - renders).toBe(1)
  })

  it('keeps each tenant its own renderings: the same name and the same text in two tenants are rendered once each', async () => {
    const { deps, apis } = await setUp(['acme', 'umbrella'])
    for (const [tenant, text] of [
      ['acme', 'shared text'],
      ['umbrella', 'shared text'],
    ] as const)
      expect((await apis[tenant].put(`/brain/${tenant}/projects/p1/server-tools/same`, longTool(text))).status).toBe(201)
    expect((await apis.umbrella.put('/brain/umbrella/projects/p1/server-tools/other', longTool('umbrella only'))).status).toBe(201)
    expect((await apis.acme.put('/brain/acme/projects/p1/server-tools/other', longTool('acme only'))).status).toBe(201)
    const renders = await deps.surface.describedRenders()
    for (const tenant of ['acme', 'umbrella']) {
      const base = `/brain/${tenant}/projects/p1`
      const { id } = await (await apis[tenant].post(`${base}/processes`, {})).json()
      const tools = await describeTools(apis[tenant], base, id, ['same', 'other'])
      expect(tools.map((t) => t.description)).toEqual([longTool('shared text').description, longTool(`${tenant} only`).description])
    }
    expect((await deps.surface.describedRenders()) - renders).toBe(4)
  })

  it.each([
    ['2025-06-18', false],
    ['2026-07-28', true],
  ] as const)(
    'answers the same through the process MCP endpoint (%s): the bytes of the result stringified, streamed, nothing rendered again',
    async (version, modern) => {
      const { deps, apis } = await setUp(['acme'])
      const api = apis.acme
      const base = '/brain/acme/projects/p1'
      const names = ['m0', 'm1', 'm2', 'm3']
      for (const n of names) expect((await api.put(`${base}/server-tools/${n}`, longTool(n))).status).toBe(201)
      const { id } = await (await api.post(`${base}/processes`, {})).json()
      const renders = await deps.surface.describedRenders()
      for (const order of [names, [...names].reverse(), ['m2', 'm0']]) {
        const meta = modern
          ? {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': version,
                'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
                'io.modelcontextprotocol/clientCapabilities': {},
              },
            }
          : {}
        const res = await api.post(
          `${base}/processes/${id}/mcp`,
          { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { ...meta, name: 'tool_description', arguments: { names: order } } },
          {
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': version,
            ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'tool_description' } : {}),
          },
        )
        expect(res.status).toBe(200)
        const chunks: Uint8Array[] = []
        const reader = res.body!.getReader()
        for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value)
        const text = Buffer.concat(chunks).toString('utf8')
        // every answer of 1.2 MB leaves in slices, the activating one (an event stream) too: it was read
        // back whole, joined into one string and written at once
        const bytes = chunks.reduce((n, c) => n + c.byteLength, 0)
        expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThanOrEqual(SLICE)
        expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(bytes / SLICE))
        if (order === names && !modern) expect(res.headers.get('content-type')).toBe('text/event-stream')
        // an activating call answers on an event stream (tools/list_changed first); the answer is its last event
        const json = text.startsWith('{')
          ? text
          : text
              .trim()
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .at(-1)!
              .slice(6)
        const { result } = JSON.parse(json) as { result: { content: { text: string }[] } }
        const content = JSON.parse(result.content[0].text) as { tools: { name: string; description: string }[] }
        expect(content.tools.map((t) => t.name)).toEqual(order)
        for (const t of content.tools) expect(t.description).toBe(longTool(t.name).description)
        // over a slice and no outputSchema: carried once, in the text block (no structuredContent repeating it)
        const call = { content: [{ type: 'text', text: JSON.stringify(content) }], isError: false }
        expect(json).toBe(JSON.stringify({ jsonrpc: '2.0', id: 7, result: modern ? { resultType: 'complete', ...call } : call }))
      }
      expect((await deps.surface.describedRenders()) - renders).toBe(names.length)
    },
  )

  it('exports each document version rendered once: repeated exports copy it, a rewritten body is in the next one, tenants apart', async () => {
    const { apis } = await setUp(['acme', 'umbrella'])
    const note = (tenant: string, i: number, round: string) => `${tenant} ${round} "${i}"\n€`.padEnd(300_000, String(i))
    for (const tenant of ['acme', 'umbrella'])
      for (let i = 0; i < 3; i++)
        expect(
          (
            await apis[tenant].put(`/brain/${tenant}/projects/p1/documents/notes/n${i}.md`, note(tenant, i, 'first'), {
              'content-type': 'text/markdown',
            })
          ).status,
        ).toBe(201)
    const exported = async (tenant: string) => {
      const res = await apis[tenant].get(`/brain/${tenant}/projects/p1/documents?bodies=true&prefix=notes/`)
      const text = await res.text()
      const body = JSON.parse(text) as { documents: { path: string; body: string }[] }
      expect(text).toBe(JSON.stringify(body))
      return body.documents.map((d) => d.body)
    }
    const renders = exportedBodies.renders
    for (let round = 0; round < 3; round++)
      for (const tenant of ['acme', 'umbrella']) expect(await exported(tenant)).toEqual([0, 1, 2].map((i) => note(tenant, i, 'first')))
    expect(exportedBodies.renders - renders).toBe(6)
    expect(
      (await apis.acme.put('/brain/acme/projects/p1/documents/notes/n1.md', note('acme', 1, 'second'), { 'content-type': 'text/markdown' }))
        .status,
    ).toBe(200)
    expect(await exported('acme')).toEqual([note('acme', 0, 'first'), note('acme', 1, 'second'), note('acme', 2, 'first')])
    expect(exportedBodies.renders - renders).toBe(7)
  })
})
