/**
 * Issue 21, third pass: the discovery meta-tools answered from the whole visible set, which no
 * limit bounds (tools per tenant, 1,000 sub-tools per pack, descriptions up to a document's 1 MiB).
 *
 * - D1: one `tool_list` call over a 1,000-operation pack named 1,010 tools, and the usage counter
 *   wrote one `listedHits` counter per name shown — 1,010 store writes for one call (968 CPU ms per
 *   call against `npm start`, 88 ms of it the service's own with the memory stores).
 * - D2: one `tool_description` call over 25 tools of 500 KB descriptions answered 12 MB (147 CPU
 *   ms per call); the manifest charged those bytes (`manifestBytes`), discovery did not.
 *
 * (D3, the layer export, is in export.ts: its own app, so each suite's RSS measures its own rows.)
 *
 * Each row asserts on what was counted — names shown per answer, usage counters written, bytes
 * answered — against `listedNames` and `describedBytes` (lib/config/expansion-budget.ts).
 */
import assert from 'node:assert/strict'
import { WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import type { AttackClass, HostileApp, HostileRowSet } from '../harness'
import type { Look } from '../http-client'

const LISTED = WORK_BUDGETS.listedNames.limit
const DESCRIBED = WORK_BUDGETS.describedBytes.limit
/** What an answer holds besides the descriptions and schemas: names, flags, the envelope. */
export const ENVELOPE = 16 * 1024
const YAML = { 'content-type': 'application/yaml' }
const JSON_TYPE = { 'content-type': 'application/json' }

interface Listed {
  count: number
  inContext: string[]
  available: string[]
  nextOffset?: number
}

/** An OpenAPI document of `ops` trivial operations; `schemaOf` gives each a request body. */
function spec(ops: number, schemaOf?: (i: number) => object, components?: object) {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i < ops; i++) {
    const body = schemaOf ? { requestBody: { content: { 'application/json': { schema: schemaOf(i) } } } } : {}
    paths[`/r${i}`] = { post: { operationId: `op${i}`, summary: `Operation ${i}`, ...body, responses: { '200': { description: 'ok' } } } }
  }
  return {
    openapi: '3.0.3',
    info: { title: 'discovery', version: '1' },
    servers: [{ url: 'https://api.example.test' }],
    paths,
    ...(components ? { components } : {}),
  }
}

/**
 * A flood's check of a large answer, on its bytes as `send` hands them over (`HostileApp.stream`
 * or `scan`): the status, and that `expected` is in it and `refused` is not. Decoding and parsing
 * a 1–2 MB answer cost the bench's client 4.6–5.8 ms an attack (D2), CPU the 2 shared cores then
 * lacked for the app; the rows of this file parse the same answers whole.
 */
export async function answered(send: (look: Look) => Promise<number>, what: string, expected: string, refused?: string) {
  const want = Buffer.from(expected)
  const not = refused === undefined ? undefined : Buffer.from(refused)
  // each piece is scanned with the end of the one before (a match may straddle them), and nothing
  // of it kept but its first bytes for the message: a piece is valid only while `look` runs
  const overlap = Math.max(want.length, not?.length ?? 0)
  let head = Buffer.alloc(0)
  let carry = Buffer.alloc(0)
  let found = false
  let bytes = 0
  const status = await send((chunk) => {
    const piece = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const edge = Buffer.concat([carry, piece.subarray(0, overlap)])
    if (head.length < 300) head = Buffer.concat([head, piece.subarray(0, 300 - head.length)])
    found ||= piece.includes(want) || edge.includes(want)
    if (not && (piece.includes(not) || edge.includes(not))) assert.fail(`${what}: ${refused} in the answer`)
    // a copy: the piece's bytes are the client's to reuse once this returns
    carry = Buffer.from(
      piece.length >= overlap ? piece.subarray(piece.length - overlap) : edge.subarray(Math.max(0, edge.length - overlap)),
    )
    bytes += piece.byteLength
  })
  assert.ok(status === 200 || status === 201, `${what}: ${status} ${head}`)
  assert.ok(found, `${what}: no ${expected} in ${head}`)
  return bytes
}

export async function ok(res: Response, what: string) {
  const text = await res.text()
  assert.ok(res.status === 200 || res.status === 201, `${what}: ${res.status} ${text.slice(0, 300)}`)
  return text
}

async function pack(app: HostileApp, tenant: string, name: string, doc: object) {
  await ok(await app.call(tenant, 'PUT', `/projects/p1/documents/specs/${name}.json`, JSON.stringify(doc), JSON_TYPE), 'spec PUT')
  const tool = `type: rest_api\ndescription: Pack ${name}.\nparameters:\n  specPath: specs/${name}.json\n`
  await ok(await app.call(tenant, 'PUT', `/projects/p1/server-tools/${name}`, tool, YAML), 'pack PUT')
}

async function spawn(app: HostileApp, tenant: string, body: object = {}): Promise<string> {
  return (JSON.parse(await ok(await app.call(tenant, 'POST', '/projects/p1/processes', body), 'spawn')) as { id: string }).id
}

async function callTool(app: HostileApp, tenant: string, id: string, name: string, params: object) {
  const text = await ok(await app.call(tenant, 'POST', `/projects/p1/processes/${id}/tool-calls`, { name, params }), name)
  return { bytes: text.length, body: JSON.parse(text) as { isError: boolean; content: Record<string, unknown> } }
}

/** The process's MCP endpoint, as a client that never initialised (the state is in the process). */
async function mcpCall(app: HostileApp, tenant: string, id: string, name: string, args: object) {
  const res = await mcpPost(app, tenant, id, name, args)
  const text = await ok(res, `MCP ${name}`)
  // a stream carries notifications (tools/list_changed after an activation) before the answer
  const json = text.startsWith('{') ? text : [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).find((d) => d.includes('"id":1'))!
  const { result } = JSON.parse(json) as { result?: { isError?: boolean; content: { text: string }[] } }
  assert.ok(result, `MCP ${name} answered ${text.slice(0, 300)}`)
  return { bytes: text.length, isError: result.isError === true, content: JSON.parse(result.content[0].text) as Record<string, unknown> }
}

async function mcpRequest(app: HostileApp, tenant: string, id: string, name: string, args: object) {
  return {
    url: `${app.base}/brain/${tenant}/projects/p1/processes/${id}/mcp`,
    init: {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await app.token(tenant)}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    },
  }
}

async function mcpPost(app: HostileApp, tenant: string, id: string, name: string, args: object) {
  const { url, init } = await mcpRequest(app, tenant, id, name, args)
  return app.fetch(url, init)
}

async function mcpScan(app: HostileApp, tenant: string, id: string, name: string, args: object, look: Look) {
  const { url, init } = await mcpRequest(app, tenant, id, name, args)
  return app.scan(url, init, look)
}

/** Usage counters with `listedHits`, once the app's usage buffer (flushed a second after a count) has written them. */
async function listedCounters(app: HostileApp, tenant: string, atLeast: number): Promise<number> {
  let n = 0
  // the buffer writes 50 keys of a tenant a second (tenantKeysPerFlush): 200 counters take ~4 flushes
  for (let attempt = 0; attempt < 80; attempt++) {
    const res = await app.call(tenant, 'GET', '/admin/projects/p1/insights/tool-usage')
    const roles = JSON.parse(await ok(res, 'insights')) as { tools: { toolName: string; listedHits: number }[] }[]
    n = roles.reduce((a, r) => a + r.tools.filter((t) => t.listedHits > 0).length, 0)
    if (n >= atLeast) break
    await new Promise((r) => setTimeout(r, 250))
  }
  return n
}

function assertPage(page: Listed, count: number) {
  assert.equal(page.count, count)
  assert.ok(page.inContext.length + page.available.length <= LISTED, `${page.inContext.length + page.available.length} names shown`)
}

/** 25 tools whose descriptions are `chars` long each (JSON writes: a document may be 1 MiB). */
async function longTools(app: HostileApp, tenant: string, chars: number, count = 25): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `long${i}`)
  for (const name of names) {
    const doc = { type: 'doc_lookup', description: `${name} `.padEnd(chars, 'x'), parameters: { path: 'documents/getting-started.md' } }
    await ok(await app.call(tenant, 'PUT', `/projects/p1/server-tools/${name}`, doc), 'tool PUT')
  }
  return names
}

/** A described answer inside the budget, the rest skipped naming it, and none of the skipped activated. */
async function describedWithinBudget(app: HostileApp, tenant: string, id: string, bytes: number, content: Record<string, unknown>) {
  const tools = content.tools as { name: string }[]
  const skipped = content.skipped as string[]
  assert.ok(bytes <= DESCRIBED + ENVELOPE, `an answer of ${bytes} bytes`)
  assert.ok(tools.length >= 1 && skipped.length >= 1, `${tools.length} described, ${skipped?.length} skipped`)
  assert.match(content.skippedReason as string, /describedBytes/)
  const manifest = await app.call(tenant, 'GET', `/projects/p1/processes/${id}/manifest?format=openai`)
  const text = await ok(manifest, 'manifest')
  for (const name of skipped) assert.ok(!text.includes(`"name":"${name}"`), `${name} was activated`)
}

export const rowSet: HostileRowSet = {
  name: 'hostile discovery answers (issue 21 third pass: tool_list, tool_description)',
  rows: [
    {
      name: `D1: over a 300-operation pack, one tool_list answer names at most ${LISTED} of 310 tools and writes at most ${LISTED} listed counters`,
      async run(app) {
        const T = 'mallory-d1'
        await pack(app, T, 'wide', spec(300))
        const id = await spawn(app, T)
        const { body } = await callTool(app, T, id, 'tool_list', {})
        const page = body.content as unknown as Listed
        assertPage(page, page.count)
        assert.ok(page.count >= 300, `count ${page.count}`)
        assert.equal(page.nextOffset, LISTED)
        const counters = await listedCounters(app, T, LISTED)
        assert.ok(counters <= LISTED, `${counters} listed counters written for one call`)
      },
    },
    {
      name: 'D1 variant: five packs of 70 operations walked page by page with a prefix: each answer within the budget, each name shown once',
      async run(app) {
        const T = 'mallory-d1b'
        for (let p = 0; p < 5; p++) await pack(app, T, `p${p}`, spec(70))
        const id = await spawn(app, T)
        const seen = new Set<string>()
        let offset: number | undefined = 0
        let pages = 0
        let count = 0
        while (offset !== undefined) {
          const page = (await callTool(app, T, id, 'tool_list', { prefix: 'P', offset })).body.content as unknown as Listed
          count = page.count
          assertPage(page, 350)
          for (const n of [...page.inContext, ...page.available]) {
            assert.ok(!seen.has(n), `${n} shown twice`)
            seen.add(n)
          }
          offset = page.nextOffset
          pages++
        }
        assert.equal(seen.size, count)
        assert.equal(pages, Math.ceil(350 / LISTED))
      },
    },
    {
      name: 'D1 variant: the same tool_list through the process MCP endpoint (tools/call) is paged alike',
      async run(app) {
        const T = 'mallory-d1' // the pack of the first row
        const id = await spawn(app, T)
        const first = await mcpCall(app, T, id, 'tool_list', {})
        assert.equal(first.isError, false)
        assertPage(first.content as unknown as Listed, (first.content as unknown as Listed).count)
        const count = (first.content as unknown as Listed).count
        const last = await mcpCall(app, T, id, 'tool_list', { offset: count - 100 })
        const page = last.content as unknown as Listed
        assert.equal(page.inContext.length + page.available.length, 100)
        assert.equal(page.nextOffset, undefined)
      },
    },
    {
      name: 'D1 variant: offsets past the end, negative, fractional or 2^53 are an empty page or an argument error, never more names',
      async run(app) {
        const T = 'mallory-d1' // the pack of the first row
        const id = await spawn(app, T)
        const past = (await callTool(app, T, id, 'tool_list', { offset: 10_000 })).body.content as unknown as Listed
        assert.deepEqual([past.inContext, past.available, past.nextOffset], [[], [], undefined])
        for (const offset of [-1, 1.5, 2 ** 53 + 2, '100']) {
          const { body } = await callTool(app, T, id, 'tool_list', { offset })
          if (body.isError) continue
          const page = body.content as unknown as Listed
          assert.ok(page.inContext.length + page.available.length <= LISTED)
        }
      },
    },
    {
      name: `D2: 12 tools of 100,000-character descriptions described at once: one answer within ${DESCRIBED.toLocaleString('en-US')} bytes, the rest skipped and not activated`,
      async run(app) {
        const T = 'mallory-d2'
        const names = await longTools(app, T, 100_000, 12)
        const id = await spawn(app, T)
        const { bytes, body } = await callTool(app, T, id, 'tool_description', { names })
        assert.equal(body.isError, false)
        await describedWithinBudget(app, T, id, bytes, body.content)
      },
    },
    {
      name: 'D2 variant: pack operations sharing one 60,000-character description by $ref (bytes counted at every use) are described within the budget',
      async run(app) {
        const T = 'mallory-d2b'
        const components = { schemas: { Shared: { type: 'string', description: 'd'.repeat(60_000) } } }
        const schemaOf = () => ({
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: 3 }, (_, k) => [`f${k}`, { $ref: '#/components/schemas/Shared' }])),
        })
        await pack(app, T, 'shared', spec(16, schemaOf, components))
        const id = await spawn(app, T)
        const names = Array.from({ length: 16 }, (_, i) => `shared__op${i}`)
        const { bytes, body } = await callTool(app, T, id, 'tool_description', { names })
        assert.equal(body.isError, false, JSON.stringify(body).slice(0, 300))
        await describedWithinBudget(app, T, id, bytes, body.content)
      },
    },
    {
      name: 'D2 variant: in code mode (each tool also declared as TypeScript) a 600,000-character tool alone is a tool error naming describedBytes',
      async run(app) {
        const T = 'mallory-d2c'
        const [name] = await longTools(app, T, 600_000, 1)
        await ok(
          await app.call(T, 'PUT', '/projects/p1/documents/recipes/coder.yaml', 'engine: default\nsurface: code\n', YAML),
          'recipe PUT',
        )
        const id = await spawn(app, T, { recipe: 'coder' })
        const { bytes, body } = await callTool(app, T, id, 'tool_description', { names: [name] })
        assert.equal(body.isError, true)
        assert.match(body.content.message as string, /describedBytes/)
        assert.ok(bytes < 4_096, `a refusal of ${bytes} bytes`)
      },
    },
    {
      name: 'D2 variant: the 12 long tools of the first row described through the process MCP endpoint, names repeated 400 times in one string',
      async run(app) {
        const T = 'mallory-d2' // the tools of the first row
        const names = Array.from({ length: 12 }, (_, i) => `long${i}`)
        const id = await spawn(app, T)
        const { bytes, isError, content } = await mcpCall(app, T, id, 'tool_description', {
          names: Array.from({ length: 400 }, () => names.join(',')).join(','),
        })
        assert.equal(isError, false)
        // the MCP answer carries the content twice at most (text and structured), each within the budget
        assert.ok(bytes <= 2 * (DESCRIBED + ENVELOPE) * 1.1, `an answer of ${bytes} bytes`)
        await describedWithinBudget(app, T, id, JSON.stringify(content).length, content)
      },
    },
  ],
}

/** For `npm run bench -- hostile`: a model loop's discovery calls over what a tenant can write. */
export const attacks: AttackClass[] = [
  {
    name: 'D1 tool_list over a 1,000-operation pack',
    async prepare(app: HostileApp, tenant: string) {
      await pack(app, tenant, 'wide', spec(1_000))
      return spawn(app, tenant)
    },
    async once(app: HostileApp, tenant: string, id: unknown) {
      const { body } = await callTool(app, tenant, id as string, 'tool_list', {})
      assert.equal(body.isError, false)
    },
  },
  {
    // each page 200 other usage counters: the flood touches 1,000 keys, not the 200 of one page
    name: 'D1 variant: tool_list paging through a 1,000-operation pack',
    async prepare(app: HostileApp, tenant: string) {
      await pack(app, tenant, 'wide', spec(1_000))
      return { id: await spawn(app, tenant), turn: 0 }
    },
    async once(app: HostileApp, tenant: string, prepared: unknown) {
      const state = prepared as { id: string; turn: number }
      const offset = LISTED * (state.turn++ % Math.ceil(1_000 / LISTED))
      const { body } = await callTool(app, tenant, state.id, 'tool_list', { offset })
      assert.equal(body.isError, false)
    },
  },
  {
    name: 'D2 tool_description of 25 tools of 100,000 characters',
    async prepare(app: HostileApp, tenant: string) {
      const names = await longTools(app, tenant, 100_000)
      return { id: await spawn(app, tenant), names }
    },
    async once(app: HostileApp, tenant: string, prepared: unknown) {
      const { id, names } = prepared as { id: string; names: string[] }
      const body = { name: 'tool_description', params: { names } }
      // the route writes isError first (functions/http/routes/processes.ts)
      await answered(
        (look) => app.stream(tenant, 'POST', `/projects/p1/processes/${id}/tool-calls`, look, body),
        'tool_description',
        '{"isError":false,',
      )
    },
  },
  {
    // the result twice (text block and structured content): twice the bytes of the REST answer
    name: 'D2 variant: tool_description of the same through the process MCP endpoint',
    async prepare(app: HostileApp, tenant: string) {
      const names = await longTools(app, tenant, 100_000)
      return { id: await spawn(app, tenant), names }
    },
    async once(app: HostileApp, tenant: string, prepared: unknown) {
      const { id, names } = prepared as { id: string; names: string[] }
      // quotes inside the tools' text are escaped: an unescaped "isError":true is the result's own
      await answered(
        (look) => mcpScan(app, tenant, id, 'tool_description', { names }, look),
        'MCP tool_description',
        '"result":{',
        '"isError":true',
      )
    },
  },
]
