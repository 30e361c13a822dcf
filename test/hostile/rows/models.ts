/**
 * N5 and N6 of issue 21 and their class: model chains and learned tool limits. A spawn or preview
 * with 20,000 models made every later turn of the process read 20,000 catalog entries; a report of
 * "maximum 1" from any tools:invoke token emptied the tenant's manifests for that model forever.
 * Each row asserts on what was counted (issues reported, entries accepted, the limit in force, the
 * tools left in the manifest), never on a timing.
 */
import assert from 'node:assert/strict'
import http from 'node:http'
import { EXPANSION_LIMITS } from '../../../lib/config/expansion-budget'
import { CHUNK_CHARS, newJsonSliceWork, parseJsonInSlices, SLICE_CHARS } from '../../../lib/config/json-slices'
import { MAX_SPAWN_ALLOWED_TOOLS, SPAWN_ITEM_LIMITS } from '../../../lib/recipes/spawn-limits'
import { LEARNED_LIMIT_DEFAULTS } from '../../../lib/surface/limits'
import type { AttackClass, HostileApp, HostileRowSet } from '../harness'

const YAML = { 'content-type': 'application/yaml' }
const CHAIN = EXPANSION_LIMITS.modelChain
const FLOOR = LEARNED_LIMIT_DEFAULTS.minimum

interface Problem {
  status: number
  detail?: string
  errors?: { pointer?: string; message: string }[]
}

async function problemOf(res: Response): Promise<Problem> {
  const text = await res.text()
  assert.ok(text.length < 4_096, `a refusal of ${text.length} bytes`)
  return { status: res.status, ...(JSON.parse(text) as object) }
}

/**
 * A refusal that names the chain limit once, not an issue per entry. A body over one parse chunk
 * is refused as it streams, at entry CHAIN + 1: its length past that point is never read.
 */
function namesChainLimit(p: Problem, status: number, length: number | 'streamed') {
  assert.equal(p.status, status, JSON.stringify(p).slice(0, 300))
  const count = length === 'streamed' ? `${CHAIN + 1} or more` : length.toLocaleString('en-US')
  assert.match(p.detail ?? '', new RegExp(`at most ${CHAIN} entries \\(this one has ${count}\\)`))
  assert.equal(p.errors?.length, 1, JSON.stringify(p.errors).slice(0, 300))
  assert.equal(p.errors?.[0]?.pointer, '/models')
}

/**
 * Sends `head` of a body, waits for the answer, and only then sends `tail`: an answer that comes
 * back at all was made from the head alone. Then the same client (one kept-alive connection at
 * most) calls whoami, which must answer.
 */
async function answeredBeforeTheRest(
  app: HostileApp,
  tenant: string,
  path: string,
  head: string,
  tail: string,
  framing: 'length' | 'chunked',
): Promise<Problem> {
  const token = await app.token(tenant)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  if (framing === 'length') headers['content-length'] = String(Buffer.byteLength(head) + Buffer.byteLength(tail))
  try {
    const req = http.request(`${app.base}/brain/${tenant}${path}`, { method: 'POST', agent, headers })
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.once('error', reject)
      req.once('response', (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => (text += d))
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text }))
      })
    })
    req.write(head)
    const { status, text } = await answer
    assert.ok(text.length < 4_096, `a refusal of ${text.length} bytes`)
    req.end(tail)
    const next = await new Promise<number>((resolve, reject) => {
      const again = http.request(
        `${app.base}/brain/${tenant}/projects/p1/tools/whoami/invoke`,
        { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume()
          res.once('end', () => resolve(res.statusCode ?? 0))
        },
      )
      again.once('error', reject)
      again.end('{"params":{}}')
    })
    assert.equal(next, 200)
    return { status, ...(JSON.parse(text) as object) }
  } finally {
    agent.destroy()
  }
}

async function provider(app: HostileApp, tenant: string, instance = 'cortecs') {
  const res = await app.call(tenant, 'PUT', `/projects/_tenant/documents/models/${instance}/_provider.yaml`, 'wireType: openai\n', YAML)
  assert.ok(res.status === 201 || res.status === 200, `provider PUT ${res.status}`)
}

const rejection = (maximum: number) => `Invalid 'tools': array too long. Expected an array with maximum length ${maximum}.`

async function report(app: HostileApp, tenant: string, maximum: number, requestedToolCount: number, scope?: string) {
  const token = await app.token(tenant, scope)
  return app.fetch(`${app.base}/brain/${tenant}/models/observed-limits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ instance: 'cortecs', model: 'glm-5', errorMessage: rejection(maximum), requestedToolCount }),
  })
}

/** The manifest of a fresh process on `cortecs/glm-5`: the limit in force and the tools in it. */
async function manifestFor(app: HostileApp, tenant: string) {
  const spawned = await app.call(tenant, 'POST', '/projects/p1/processes', { models: ['cortecs/glm-5'] })
  const process = (await spawned.json()) as { id: string }
  assert.equal(spawned.status, 201, JSON.stringify(process).slice(0, 300))
  const res = await app.call(tenant, 'GET', `/projects/p1/processes/${process.id}/manifest`)
  assert.equal(res.status, 200)
  const body = (await res.json()) as { tools: { name: string }[]; budget: { limit: number | null } }
  return { limit: body.budget.limit, tools: body.tools.map((t) => t.name) }
}

/** Tools that are not the floor, so a manifest of limit L shows min(L, …) of them. */
async function someTools(app: HostileApp, tenant: string, count: number) {
  for (let i = 0; i < count; i++) {
    const doc = `type: doc_lookup\ndescription: Tool ${i}.\nprimary: true\nparameters:\n  path: documents/getting-started.md\n`
    const res = await app.call(tenant, 'PUT', `/projects/p1/server-tools/t${i}`, doc, YAML)
    assert.ok(res.status === 201 || res.status === 200, `tool PUT ${res.status}: ${(await res.text()).slice(0, 200)}`)
  }
}

async function mcpInitialize(app: HostileApp, tenant: string) {
  const token = await app.token(tenant)
  const res = await app.fetch(`${app.base}/brain/${tenant}/projects/p1/mcp?model=cortecs/glm-5`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
    }),
  })
  const text = await res.text()
  assert.equal(res.status, 200, text.slice(0, 300))
  assert.match(text, /"serverInfo"/)
}

export const rowSet: HostileRowSet = {
  name: 'hostile model chains and learned limits',
  rows: [
    {
      name: `N5: a spawn with 20,000 models is a 400 naming the limit of ${CHAIN}, with one issue, not one per entry`,
      async run(app) {
        const models = Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`)
        namesChainLimit(await problemOf(await app.call('mallory-n5', 'POST', '/projects/p1/processes', { models })), 400, 'streamed')
      },
    },
    {
      name: 'N5 variant: a surface preview with 45,000 models is a 400 naming the limit',
      async run(app) {
        const models = Array.from({ length: 45_000 }, () => 'openai/gpt-4o')
        const res = await app.call('mallory-n5a', 'POST', '/projects/p1/surface/preview', { models })
        namesChainLimit(await problemOf(res), 400, 'streamed')
      },
    },
    {
      name: 'N5 variant: a recipe document listing 3,000 models (under the 64 KiB YAML limit) is a 422 at write, so no process can be spawned on it',
      async run(app) {
        const list = Array.from({ length: 3_000 }, (_, i) => `  - a/m${i}`).join('\n')
        const res = await app.call(
          'mallory-n5b',
          'PUT',
          '/projects/p1/documents/recipes/long.yaml',
          `engine: default\nmodels:\n${list}\n`,
          YAML,
        )
        const p = await problemOf(res)
        assert.equal(p.status, 422, JSON.stringify(p).slice(0, 300))
        assert.match(JSON.stringify(p), new RegExp(`at most ${CHAIN} entries \\(this one has 3,000\\)`))
        assert.equal((await app.call('mallory-n5b', 'POST', '/projects/p1/processes', { recipe: 'long' })).status, 422)
      },
    },
    {
      name: `N5 variant: 30,000 entries that are not model names (numbers, objects) are one 400 naming the limit, not 30,000 issues`,
      async run(app) {
        const models = Array.from({ length: 30_000 }, (_, i) => (i % 2 ? i : { model: i }))
        namesChainLimit(await problemOf(await app.call('mallory-n5c', 'POST', '/projects/p1/processes', { models })), 400, 'streamed')
        // one entry fewer than the limit is still taken
        await provider(app, 'mallory-n5c')
        const ok = await app.call('mallory-n5c', 'POST', '/projects/p1/processes', {
          models: Array.from({ length: CHAIN }, (_, i) => `cortecs/m${i}`),
        })
        assert.equal(ok.status, 201, (await ok.text()).slice(0, 300))
      },
    },
    {
      name: 'N5 variant: 50,000 allowedTools entries after 200 KB of blank space are refused from the scan of the body with their count, nothing of it parsed',
      async run(app) {
        const text = `{${' '.repeat(200_000)}"recipe": "default", "allowedTools": ${JSON.stringify(Array.from({ length: 50_000 }, (_, i) => `t${i}`))}}`
        const work = newJsonSliceWork()
        const scanned = await parseJsonInSlices(text, { itemLimits: SPAWN_ITEM_LIMITS.limits, work })
        assert.deepEqual(scanned, { ok: false, overLimit: { member: 'allowedTools', items: 50_000, limit: MAX_SPAWN_ALLOWED_TOOLS } })
        assert.equal(work.parses, 0)
        const p = await problemOf(await app.call('mallory-n5d', 'POST', '/projects/p1/processes', text))
        assert.equal(p.status, 400, JSON.stringify(p).slice(0, 300))
        assert.deepEqual(p.errors, [
          { pointer: '/allowedTools', message: `allowedTools may hold at most ${MAX_SPAWN_ALLOWED_TOOLS} entries` },
        ])
      },
    },
    {
      name: 'N5 variant: 20,000 models nested one level down ({"recipe": …, "x": {"models": […]}}) are not the spawn\'s models: the body is parsed in slices of at most 16 KiB and refused for its unknown field',
      async run(app) {
        const text = JSON.stringify({ recipe: 'default', x: { models: Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`) } })
        const work = newJsonSliceWork()
        const parsed = await parseJsonInSlices(text, { itemLimits: SPAWN_ITEM_LIMITS.limits, work })
        assert.ok(parsed.ok)
        assert.ok(work.largestParse <= CHUNK_CHARS + 2 && work.pauses >= Math.floor(text.length / SLICE_CHARS), JSON.stringify(work))
        const p = await problemOf(await app.call('mallory-n5e', 'POST', '/projects/p1/processes', text))
        assert.equal(p.status, 400, JSON.stringify(p).slice(0, 300))
        assert.match(p.detail ?? '', /unknown field 'x'/)
      },
    },
    {
      name: `N5 variant: a spawn whose first 64 KiB list more than ${CHAIN} models is answered 400 before the rest of its body is sent, and the same client goes on`,
      async run(app) {
        const head = `{"models": [${Array.from({ length: 4_000 }, (_, i) => `"cortecs/m${i}"`).join(',')},`
        const tail = `${Array.from({ length: 16_000 }, (_, i) => `"cortecs/n${i}"`).join(',')}]}`
        const p = await answeredBeforeTheRest(app, 'mallory-n5f', '/projects/p1/processes', head, tail, 'length')
        namesChainLimit(p, 400, 'streamed')
      },
    },
    {
      name: 'N5 variant: a preview sent chunked (no length), its key spelled "mod\\u0065ls", entries objects whose strings hold brackets, commas and escaped quotes, is answered 400 from its first chunk',
      async run(app) {
        const entry = (i: number) => JSON.stringify({ model: `a/m${i}`, note: `],[{"x\\": ${i}, "y": ["\\"]` })
        const head = `{"recipe": "default", "mod\\u0065ls": [${Array.from({ length: 400 }, (_, i) => entry(i)).join(' , ')},`
        const tail = `${Array.from({ length: 5_000 }, (_, i) => entry(i)).join(',')}]}`
        const p = await answeredBeforeTheRest(app, 'mallory-n5g', '/projects/p1/surface/preview', head, tail, 'chunked')
        namesChainLimit(p, 400, 'streamed')
      },
    },
    {
      name: 'N5 variant: a spawn nested 3,000 levels deep after 100 KB of blank lines is answered 400 at its line and column before the rest is sent',
      async run(app) {
        const head = `{"recipe": "default",${'\n'.repeat(100_000)}  "x": ${'['.repeat(3_000)}`
        const tail = `${']'.repeat(3_000)}}`
        const p = await answeredBeforeTheRest(app, 'mallory-n5h', '/projects/p1/processes', head, tail, 'length')
        assert.equal(p.status, 400, JSON.stringify(p).slice(0, 300))
        assert.match(p.detail ?? '', /nested deeper than 100 levels/)
        // the root opens one level: the 100th bracket opens the 101st, on the last line, after `  "x": `
        assert.match(JSON.stringify(p.errors), /line 100001, column 107/)
      },
    },
    {
      name: `N6: a report of "maximum 1" is learned as ${FLOOR} (the minimum); the manifest keeps ${FLOOR} tools and MCP initialize answers`,
      async run(app) {
        await provider(app, 'mallory-n6')
        await someTools(app, 'mallory-n6', 12)
        const res = await report(app, 'mallory-n6', 1, 2)
        const answer = (await res.json()) as { learned: boolean; limit: number }
        assert.equal(res.status, 200)
        assert.equal(answer.limit, FLOOR)
        const m = await manifestFor(app, 'mallory-n6')
        assert.equal(m.limit, FLOOR)
        assert.ok(m.tools.length >= FLOOR - 1, `${m.tools.length} tools in the manifest`)
        assert.ok(m.tools.includes('tool_list'))
        await mcpInitialize(app, 'mallory-n6')
      },
    },
    {
      name: 'N6 variant: a tools:invoke token (no limits:report) is a 403, and nothing is learned',
      async run(app) {
        await provider(app, 'mallory-n6a')
        const res = await report(app, 'mallory-n6a', 1, 2, 'tools:read tools:invoke')
        assert.equal(res.status, 403)
        assert.match(await res.text(), /limits:report/)
        assert.equal((await manifestFor(app, 'mallory-n6a')).limit, null)
      },
    },
    {
      name: 'N6 variant: 500 concurrent reports of maxima 500 down to 1, each claiming a rejected count of the maximum (not above it), learn nothing',
      async run(app) {
        await provider(app, 'mallory-n6b')
        const answers = await Promise.all(
          Array.from(
            { length: 500 },
            async (_, i) => (await (await report(app, 'mallory-n6b', 500 - i, 500 - i)).json()) as { learned: boolean },
          ),
        )
        assert.equal(answers.filter((a) => a.learned).length, 0)
        assert.equal((await manifestFor(app, 'mallory-n6b')).limit, null)
      },
    },
    {
      name: "N6 variant: after 200 concurrent credible reports the limit is the floor, and editing the catalog's maxTools drops it",
      async run(app) {
        await provider(app, 'mallory-n6c')
        await Promise.all(Array.from({ length: 200 }, (_, i) => report(app, 'mallory-n6c', 200 - i, 300)))
        assert.equal((await manifestFor(app, 'mallory-n6c')).limit, FLOOR)
        const edit = await app.call('mallory-n6c', 'PUT', '/projects/_tenant/documents/models/cortecs/glm-5.yaml', 'maxTools: 50\n', YAML)
        assert.ok(edit.status === 201 || edit.status === 200, `model PUT ${edit.status}`)
        assert.equal((await manifestFor(app, 'mallory-n6c')).limit, 50)
      },
    },
  ],
}

/** For `npm run bench -- hostile`. */
export const attacks: AttackClass[] = [
  {
    name: 'N5 spawn with 20,000 models',
    // the 340 KB body is built and encoded once: the flood measures the app reading it, not the bench writing it
    prepare: async () => Buffer.from(JSON.stringify({ models: Array.from({ length: 20_000 }, (_, i) => `cortecs/m${i}`) })),
    async once(app: HostileApp, tenant: string, body: unknown) {
      const res = await app.call(tenant, 'POST', '/projects/p1/processes', body as Uint8Array)
      const text = await res.text()
      // past the tenant's spawn rate its own spawns are 429 before the body is read: a right answer too
      assert.ok(res.status === 400 || res.status === 429, `${res.status}: ${text.slice(0, 200)}`)
    },
  },
  {
    name: 'N6 report of "maximum 1" with limits:report',
    prepare: (app: HostileApp, tenant: string) => provider(app, tenant),
    async once(app: HostileApp, tenant: string) {
      const res = await report(app, tenant, 1, 2)
      await res.text()
      assert.equal(res.status, 200)
    },
  },
]
