/**
 * A tool call's argument validation past its first slice (lib/config/argument-validation.ts): real
 * worker threads behind the app, driven through `app.request`. Where a validation ran is read
 * from counts (the validation's own and the pool's), never from a duration.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { argumentIssues, INLINE_VALIDATION } from '../../lib/config/argument-validation'
import { countNodes, WORK_BUDGETS } from '../../lib/config/expansion-budget'
import { type JsonSchema, validateAgainst } from '../../lib/config/json-schema'
import { interpret } from '../../lib/config/schema-interpreter'
import { nested, recursiveAnyOf } from '../hostile/rows/tenant-work'
import { client, tokenFor } from '../support/http'

const apps: ReturnType<typeof createMemoryDeps>[] = []
afterAll(async () => {
  for (const deps of apps) await deps.yaml.close()
})

const rows: JsonSchema = {
  type: 'object',
  properties: {
    rows: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a'] } },
  },
}
const rowsOf = (n: number, text = 'x') => ({ rows: Array.from({ length: n }, (_, i) => ({ a: text, b: i })) })

const stepsOf = (schema: JsonSchema, value: unknown) => {
  const validate = interpret(schema)
  validate(value)
  return validate.steps ?? 0
}

async function processWith(schema: JsonSchema) {
  const deps = createMemoryDeps()
  apps.push(deps)
  const api = client(createApp(deps), await tokenFor('acme'))
  const res = await api.post('/brain/acme/projects/p1/processes', {
    clientTools: [{ name: 't', description: 'A client tool.', inputSchema: schema }],
  })
  expect(res.status).toBe(201)
  const id = (await res.json()).id as string
  const call = async (params: unknown) => {
    const r = await api.post(`/brain/acme/projects/p1/processes/${id}/tool-calls`, { name: 't', params })
    expect(r.status).toBe(200)
    return r.json() as Promise<{ isError: boolean; runOn?: string; content?: { message?: string } }>
  }
  return { deps, call }
}

describe('tool-call arguments validated past their first slice', () => {
  it('validates a call that ends within its first slice on the main thread, starting no worker', async () => {
    const { deps, call } = await processWith(rows)
    expect(stepsOf(rows, rowsOf(3))).toBeLessThan(WORK_BUDGETS.schemaValidationSlice.limit)
    expect(await call(rowsOf(3))).toMatchObject({ isError: false, runOn: 'client' })
    expect((await call({ rows: [{ b: 1 }] })).isError).toBe(true)
    expect(deps.validation.stats()).toEqual({ inSlice: 2, offThread: 0, wholeHere: 0, noPlace: 0 })
    expect(deps.yaml.stats().workersStarted).toBe(0)
  })

  it("runs a validation past its slice again in a worker, answering the main thread's own refusal", async () => {
    const { deps, call } = await processWith(recursiveAnyOf)
    const value = { v: nested(60) }
    expect(stepsOf(recursiveAnyOf, value)).toBeGreaterThan(WORK_BUDGETS.schemaValidation.limit)
    const outcome = await call(value)
    expect(outcome.isError).toBe(true)
    const [inline] = validateAgainst(recursiveAnyOf, value)
    expect(inline.message).toMatch(/validation budget of 20,000 steps/)
    expect(JSON.stringify(outcome)).toContain(inline.message)
    expect(deps.validation.stats()).toEqual({ inSlice: 0, offThread: 1, wholeHere: 0, noPlace: 0 })
    expect((await deps.yaml.workers()).validationStats()).toMatchObject({ offThread: 1, running: 0, queued: 0 })
  })

  it('passes valid arguments that need more than a slice through a worker', async () => {
    const { deps, call } = await processWith(rows)
    const value = rowsOf(600)
    const steps = stepsOf(rows, value)
    expect(steps).toBeGreaterThan(WORK_BUDGETS.schemaValidationSlice.limit)
    expect(steps).toBeLessThan(WORK_BUDGETS.schemaValidation.limit)
    expect(await call(value)).toMatchObject({ isError: false, runOn: 'client' })
    expect(deps.validation.stats()).toEqual({ inSlice: 0, offThread: 1, wholeHere: 0, noPlace: 0 })
  })

  it('validates arguments over the handoff size whole on the main thread, within the same budget', async () => {
    const { deps, call } = await processWith(rows)
    // more than a slice of steps each: 1,000 rows (3,002 nodes to copy), 600 rows of 120 characters (over 64 KiB)
    const many = rowsOf(1_000)
    const long = rowsOf(600, 'y'.repeat(120))
    expect(countNodes(many, 1e6)).toBeGreaterThan(WORK_BUDGETS.validationHandoffNodes.limit)
    expect(JSON.stringify(long).length).toBeGreaterThan(WORK_BUDGETS.validationHandoffBytes.limit)
    expect(await call(many)).toMatchObject({ isError: false, runOn: 'client' })
    expect(await call(long)).toMatchObject({ isError: false, runOn: 'client' })
    expect(deps.validation.stats()).toEqual({ inSlice: 0, offThread: 0, wholeHere: 2, noPlace: 0 })
    expect(deps.yaml.stats().workersStarted).toBe(0)
  })

  it("answers calls past the tenant's worker places and queue by validating them here, never with a busy refusal", async () => {
    const { deps, call } = await processWith(recursiveAnyOf)
    const value = { v: nested(60) }
    // one place a tenant and 8 waiting (yaml-pool.ts): 20 at once leave at least 11 with no room
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => call(value)))
    for (const o of outcomes) expect(o.content?.message ?? '').toMatch(/validation budget of 20,000 steps/)
    const stats = deps.validation.stats()
    expect(stats.offThread + stats.noPlace).toBe(20)
    expect(stats.noPlace).toBeGreaterThanOrEqual(1)
    expect((await deps.yaml.workers()).validationStats()).toMatchObject({ offThread: stats.offThread, running: 0, queued: 0 })
  })
})

describe('arguments found valid', () => {
  it('are not validated again against the same schema, and are against another', async () => {
    const value = rowsOf(2)
    expect(await INLINE_VALIDATION.validate(rows, value, { tenant: 'acme' })).toEqual([])
    // changed behind the validation's back: a second validation would find it, the mark skips it
    ;(value.rows[0] as { a: unknown }).a = 7
    expect(argumentIssues(rows, value)).toEqual([])
    expect(argumentIssues({ ...rows }, value).map((i) => i.pointer)).toEqual(['/rows/0/a'])
  })
})
