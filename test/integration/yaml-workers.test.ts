/**
 * The YAML parse workers (lib/config/yaml-pool.ts) behind the app's write paths: real worker
 * threads, the app driven through `app.request`. Whether a text was parsed off the main thread is
 * read from counts — the main thread's parser runs (`parsedHere`) and the pool's own stats — never
 * from a duration. The deadline and heap refusals are provoked with budgets far below what a
 * 64 KiB worst case needs (1 ms, 8 MiB), so they do not depend on the machine's speed.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { parsedHere } from '../../lib/config/yaml'
import type { YamlWorkerSettings } from '../../lib/config/yaml-parsing'
import { client, tokenFor } from '../support/http'

const apps: ReturnType<typeof createMemoryDeps>[] = []
afterAll(async () => {
  for (const deps of apps) await deps.yaml.close()
})

async function appWith(yaml: YamlWorkerSettings = {}) {
  const deps = createMemoryDeps({ yaml })
  apps.push(deps)
  return { deps, api: client(createApp(deps), await tokenFor('acme')) }
}

/** A flow sequence of one-digit items: the costliest layout per character measured (docs/reference/limits.md). */
const worstCase = (chars: number) => `  items: [${'1,'.repeat(Math.floor(chars / 2))}1]\n`
const tool = (rest: string) => `type: doc_lookup\ndescription: A large tool.\nparameters:\n  path: documents/x.md\n${rest}`
/** A server tool of ~`chars` characters with two problems: an unknown field and a wrong type. */
const invalidTool = (chars: number) => `type: doc_lookup\ndescription: x\nenabled: "yes"\nprimay: true\nextra:\n${worstCase(chars)}`

const PUT_TOOL = '/brain/acme/projects/p1/server-tools/big'
const mainThreadParses = () => ({ ...parsedHere })

describe('YAML parse workers', () => {
  it('parses a 64 KiB worst-case document in a worker: the main thread runs the YAML parser 0 times for it', async () => {
    const { deps, api } = await appWith()
    const body = tool(`labels: [big]\nextra:\n${worstCase(60_000)}`)
    expect(body.length).toBeGreaterThan(60_000)
    const before = mainThreadParses()
    const res = await api.put(PUT_TOOL, body)
    // an unknown field: the answer needs a position, found in the positions the worker sent back
    expect(res.status).toBe(422)
    expect(mainThreadParses()).toEqual(before)
    expect(deps.yaml.stats()).toMatchObject({ offThread: 1, workersStarted: 1 })
  })

  it('answers a long invalid document with the same 422 and positions as a parse on the main thread', async () => {
    const pooled = await appWith()
    const inline = await appWith({ inlineChars: 1_000_000 })
    for (const chars of [4_000, 60_000]) {
      const body = invalidTool(chars)
      const viaWorker = await pooled.api.put(PUT_TOOL, body)
      const onThread = await inline.api.put(PUT_TOOL, body)
      expect(viaWorker.status).toBe(422)
      const problems = (await viaWorker.json()).errors
      expect(problems.map((p: { line?: number }) => p.line)).toEqual([4, 5, 3, 1])
      expect(problems).toEqual((await onThread.json()).errors)
    }
    expect(pooled.deps.yaml.stats().offThread).toBe(2)
    expect(inline.deps.yaml.stats()).toMatchObject({ offThread: 0, workersStarted: 0 })
  })

  it('answers a long syntax error with its line and column from the worker, and stores nothing', async () => {
    const { deps, api } = await appWith()
    const inline = await appWith({ inlineChars: 1_000_000 })
    const body = `${tool(`extra:\n${worstCase(8_000)}`)}bad: [unclosed\n`
    const res = await api.put('/brain/acme/projects/p1/documents/recipes/r.yaml', body)
    expect(res.status).toBe(422)
    const { errors } = await res.json()
    expect(errors[0].line).toBeGreaterThanOrEqual(7) // the flow sequence left open on line 7
    expect(errors).toEqual((await (await inline.api.put('/brain/acme/projects/p1/documents/recipes/r.yaml', body)).json()).errors)
    expect(deps.yaml.stats().offThread).toBe(1)
    expect((await api.get('/brain/acme/projects/p1/documents/recipes/r.yaml')).status).toBe(404)
  })

  it('parses a long YAML request body in a worker too (a spawn)', async () => {
    const { deps, api } = await appWith()
    const padding = `# ${'x'.repeat(4_000)}\n`
    const res = await api.post('/brain/acme/projects/p1/processes', `${padding}recipe: default\n`)
    expect(res.status).toBe(201)
    expect(deps.yaml.stats().offThread).toBe(1)
  })

  it('keeps short documents on the main thread and starts no worker for them', async () => {
    const { deps, api } = await appWith()
    const res = await api.put(PUT_TOOL, tool(''))
    expect(res.status).toBe(201)
    expect(deps.yaml.stats()).toEqual({
      inline: 1,
      offThread: 0,
      refusedDeadline: 0,
      refusedHeap: 0,
      workersStarted: 0,
      running: 0,
      queued: 0,
    })
  })

  it("answers 503 with Retry-After to a tenant's parse beyond its place and queue, and parses the others", async () => {
    const { deps, api } = await appWith({ workers: 2, tenantConcurrency: 1, tenantQueue: 1, deadlineMs: 60_000 })
    const body = tool(`extra:\n${worstCase(60_000)}`)
    const answers = await Promise.all([0, 1, 2].map((i) => api.put(`${PUT_TOOL}${i}`, body)))
    expect(answers.map((r) => r.status).sort()).toEqual([422, 422, 503])
    expect(answers.find((r) => r.status === 503)!.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(deps.yaml.stats()).toMatchObject({ offThread: 2, workersStarted: 1, running: 0, queued: 0 })
  })

  it('refuses a parse past its deadline with a 422 naming yamlParseMs, and replaces the worker', async () => {
    const { deps, api } = await appWith({ deadlineMs: 1 })
    const body = tool(`extra:\n${worstCase(60_000)}`)
    for (let i = 0; i < 2; i++) {
      const res = await api.put(PUT_TOOL, body)
      expect(res.status).toBe(422)
      expect(JSON.stringify(await res.json())).toContain('longer than its 1 ms budget (yamlParseMs)')
    }
    expect(deps.yaml.stats()).toMatchObject({ offThread: 2, refusedDeadline: 2, workersStarted: 2 })
  })

  it('refuses a parse past its heap cap with a 422 naming yamlParseHeap, and the next parse gets a fresh worker', async () => {
    // 16 MiB holds a 3 KB parse (and the worker's own code), not a 64 KiB worst case (that needs 33–48 MiB)
    const { deps, api } = await appWith({ heapMb: 16 })
    expect((await api.put(PUT_TOOL, tool(`labels: [${'a,'.repeat(1_500)}a]\n`))).status).toBe(201)
    const res = await api.put(PUT_TOOL, tool(`extra:\n${worstCase(60_000)}`))
    expect(res.status).toBe(422)
    expect(JSON.stringify(await res.json())).toContain('more than its 16 MiB heap budget (yamlParseHeap)')
    expect(deps.yaml.stats()).toMatchObject({ refusedHeap: 1, workersStarted: 1 })
    expect((await api.put(PUT_TOOL, tool(`labels: [${'b,'.repeat(1_500)}b]\n`))).status).toBe(200)
    expect(deps.yaml.stats()).toMatchObject({ offThread: 3, refusedHeap: 1, workersStarted: 2 })
  })
})
