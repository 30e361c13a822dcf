/**
 * Issue 21 N4 and build item 3: one tenant's 64 KiB YAML bodies — the costliest layouts per
 * character, valid or refused by the depth count — are parsed in the parse workers, never on the
 * thread that serves everyone (lib/config/yaml-pool.ts). The app runs in memory
 * (createApp(createMemoryDeps)) with real worker threads. Asserted on counts — the main thread's
 * YAML parser runs, the pool's places and refusals — and on outcomes, never on durations: the
 * victim's calls answer while the attacker's parses still hold a worker or wait for one.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { parsedHere } from '../../lib/config/yaml'
import { client, tokenFor } from '../support/http'
import { yamlLayouts } from './rows/tenant-work'

// No fair-share gate: it would pace mallory's twelve concurrent writes before they reach the
// parse pool (test/hostile/fair-share.test.ts shows that), and how often depends on the busy time
// the machine gives it — here the pool's own places and queue are under test.
// a deadline far above any parse here, so that the attacker's backlog still waits (not refused) when the victim is answered
const deps = createMemoryDeps({ yaml: { workers: 2, tenantConcurrency: 1, tenantQueue: 16, deadlineMs: 60_000 }, fairShare: false })
const app = createApp(deps)
afterAll(() => deps.yaml.close())

const as = async (tenant: string) => client(app, await tokenFor(tenant))
const tool = (rest: string) => `type: doc_lookup\ndescription: A hostile tool.\nparameters:\n  path: documents/x.md\n${rest}`
const fill = (unit: string, chars = 60_000) => unit.repeat(Math.floor(chars / unit.length))

/** Valid 64 KiB layouts that cost the parser the most per character (docs/reference/limits.md), and three more of other shapes. */
const WORST: [string, string][] = [
  ['a flow sequence of one-digit items', tool(`labels: [${fill('1,')}1]\n`)],
  ['a flow sequence of empty flow sequences', tool(`extra: [${fill('[],')}[]]\n`)],
  ['a block sequence of one-digit items', tool(`extra:\n${fill('  - 1\n')}`)],
  ['flow mappings 90 deep, side by side', tool(`extra: [${fill(`${'{a: '.repeat(90)}1${'}'.repeat(90)},`)}1]\n`)],
  ['a mapping of 5,000 short keys', tool(`extra:\n${Array.from({ length: 5_000 }, (_, i) => `  k${i}: ${i}`).join('\n')}\n`)],
  ['quoted one-character strings', tool(`extra: [${fill('"x",')}"x"]\n`)],
]

/** Waits (bounded) until the pool counts at least this many parses running and waiting. */
async function until(running: number, queued: number) {
  for (let i = 0; i < 600; i++) {
    const s = deps.yaml.stats()
    if (s.running >= running && s.queued >= queued) return s
    await new Promise((r) => setTimeout(r, 25))
  }
  return deps.yaml.stats()
}

describe('hostile YAML bodies are parsed off the main thread (issue 21 N4, build item 3)', () => {
  it('answers each worst-case 64 KiB layout and each N4 layout with no run of the YAML parser on the main thread', async () => {
    const mallory = await as('mallory')
    const before = { ...parsedHere }
    for (const [name, body] of [...WORST, ...yamlLayouts.map(([n, b]): [string, string] => [n, b])]) {
      const res = await mallory.put('/brain/mallory/projects/p1/server-tools/big', body)
      // written, or refused (an unknown field, nesting past the depth budget) with a 422: never a 5xx
      expect([200, 201, 422], `${name}: ${(await res.clone().text()).slice(0, 300)}`).toContain(res.status)
    }
    expect(parsedHere).toEqual(before)
    expect(deps.yaml.stats().offThread).toBe(WORST.length + yamlLayouts.length)
  }, 120_000)

  it("answers a victim's call and its own long document while one tenant's 12 worst-case parses hold a worker and queue", async () => {
    const mallory = await as('mallory')
    const victim = await as('victim')
    // both workers started, as on a server that has parsed a few long documents
    await Promise.all(
      ['w1', 'w2'].map(async (t) => (await as(t)).put(`/brain/${t}/projects/p1/server-tools/x`, tool(`labels: [${fill('a,', 3_000)}a]\n`))),
    )
    expect(deps.yaml.stats().workersStarted).toBe(2)

    const before = { ...parsedHere }
    const attack = Array.from({ length: 12 }, (_, i) =>
      mallory.put(`/brain/mallory/projects/p1/server-tools/a${i}`, WORST[i % WORST.length][1]),
    )
    // one tenant holds one place (tenantConcurrency 1); the rest of its parses wait their turn
    expect(await until(1, 6)).toMatchObject({ running: 1 })

    const call = await victim.post('/brain/victim/projects/p1/tools/whoami/invoke', { params: {} })
    expect(call.status).toBe(200)
    const doc = await victim.put('/brain/victim/projects/p1/server-tools/mine', tool(`labels: [${fill('v,', 3_000)}v]\n`))
    expect(doc.status).toBe(201)
    // the victim's long document took the free worker ahead of the attacker's backlog, which still waits
    expect(deps.yaml.stats().queued).toBeGreaterThanOrEqual(1)

    const answers = await Promise.all(attack)
    for (const r of answers) expect([201, 422]).toContain(r.status)
    expect(parsedHere).toEqual(before)
    expect(deps.yaml.stats()).toMatchObject({ running: 0, queued: 0, refusedDeadline: 0, refusedHeap: 0 })
  }, 120_000)
})

/** A YAML OpenAPI spec of `operations` paths (~110 characters each), then `tail` (a broken or deep line). */
const yamlSpec = (operations: number, tail = '') =>
  `openapi: 3.0.3\ninfo: { title: Big, version: "1" }\nservers: [{ url: "https://api.example.test" }]\npaths:\n${Array.from(
    { length: operations },
    (_, i) =>
      `  /things${i}:\n    get:\n      operationId: thing${i}\n      summary: Reads thing number ${i}.\n      responses: { "200": { description: ok } }\n`,
  ).join('')}${tail}`
const indent = (text: string) => text.replace(/^/gm, '    ')
const restApi = (spec: string) => `type: rest_api\ndescription: A long inline spec.\nparameters:\n  specInline: |\n${indent(spec)}`

describe('long YAML OpenAPI specs are parsed off the main thread (issue 21 build item 3)', () => {
  it('parses a 30 KiB inline YAML spec in the workers at write and at its first expansion, and lists its 250 operations', async () => {
    const ann = await as('ann')
    const spec = yamlSpec(250)
    expect(spec.length).toBeGreaterThan(25_000)
    const before = { ...parsedHere }
    const offThread = deps.yaml.stats().offThread
    expect((await ann.put('/brain/ann/projects/p1/server-tools/big', restApi(spec))).status).toBe(201)
    const tools = (await (await ann.get('/brain/ann/projects/p1/tools')).json()) as { tools: { name: string }[] }
    expect(tools.tools.filter((t) => t.name.startsWith('big__'))).toHaveLength(250)
    expect(parsedHere).toEqual(before)
    // the document, its spec at write, the spec again at the first expansion
    expect(deps.yaml.stats().offThread - offThread).toBe(3)

    // another container over the same store: reading the tool re-checks it without parsing the spec here
    const other = createMemoryDeps({ store: deps.store, yaml: { workers: 1 } })
    try {
      const there = client(createApp(other), await tokenFor('ann'))
      const listed = (await (await there.get('/brain/ann/projects/p1/tools')).json()) as { tools: { name: string }[] }
      expect(listed.tools.filter((t) => t.name.startsWith('big__'))).toHaveLength(250)
      expect(parsedHere).toEqual(before)
      expect(other.yaml.stats().offThread).toBe(1)
    } finally {
      await other.yaml.close()
    }
  }, 120_000)

  it.each([
    [
      'a syntax error on its last line',
      yamlSpec(200, '  /broken: [unclosed\n'),
      /the OpenAPI document does not parse: .* at line \d+, column \d+/,
    ],
    [
      'flow brackets 200 deep on its last line',
      yamlSpec(200, `x-deep: ${'['.repeat(200)}${']'.repeat(200)}\n`),
      /the OpenAPI document is nested deeper than 100 levels at line \d+/,
    ],
    [
      'a Swagger 2.0 header',
      `swagger: "2.0"\n${yamlSpec(200).slice('openapi: 3.0.3\n'.length)}`,
      /Swagger 2\.0 documents are not supported/,
    ],
  ])(
    'refuses a long inline YAML spec with %s at write (422 naming /parameters/specInline), parsed in the workers',
    async (_, spec, message) => {
      const bob = await as('bob')
      expect(spec.length).toBeGreaterThan(20_000)
      const before = { ...parsedHere }
      const offThread = deps.yaml.stats().offThread
      const res = await bob.put('/brain/bob/projects/p1/server-tools/bad', restApi(spec))
      const problem = (await res.json()) as { errors: { pointer: string; message: string }[] }
      expect(res.status).toBe(422)
      expect(problem.errors).toEqual([
        expect.objectContaining({ pointer: '/parameters/specInline', message: expect.stringMatching(message) }),
      ])
      expect(parsedHere).toEqual(before)
      // the document, then its spec
      expect(deps.yaml.stats().offThread - offThread).toBe(2)
    },
    120_000,
  )
})
