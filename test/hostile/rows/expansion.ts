/**
 * F1 and its class: small documents that expand into enormous structures — OpenAPI `$ref`
 * breadth bombs and their cousins, fan-out through allOf/anyOf, huge enums, many operations, a
 * schema bomb in a prompt template. Every one ends as a listing `problem` (or a 422 at write) and
 * a tool error on call, within the expansion budgets of lib/config/expansion-budget.ts.
 */
import assert from 'node:assert/strict'
import type { HostileApp, HostileRowSet } from '../harness'

const YAML = { 'content-type': 'application/yaml' }
const JSON_TYPE = { 'content-type': 'application/json' }

type Schemas = Record<string, unknown>

/** S0..S(levels-1): each with `width` children built by `child(ref)`; S(levels) is a string. */
function chain(
  levels: number,
  width: number,
  child: (ref: { $ref: string }, j: number) => [string, unknown] | unknown,
  shape: 'properties' | 'allOf' | 'anyOf' = 'properties',
): Schemas {
  const schemas: Schemas = {}
  for (let i = 0; i < levels; i++) {
    const ref = { $ref: `#/components/schemas/S${i + 1}` }
    if (shape === 'properties')
      schemas[`S${i}`] = {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: width }, (_, j) => [`p${j}`, child(ref, j)])),
      }
    else schemas[`S${i}`] = { [shape]: Array.from({ length: width }, (_, j) => child(ref, j)) }
  }
  schemas[`S${levels}`] = { type: 'string' }
  return schemas
}

function spec(schemas: Schemas, operations = 1, bodyRef = '#/components/schemas/S0') {
  const paths: Record<string, unknown> = {}
  for (let i = 0; i < operations; i++) {
    paths[`/op${i}`] = {
      post: {
        operationId: `op${i}`,
        requestBody: { content: { 'application/json': { schema: { $ref: bodyRef } } } },
        responses: { 200: { description: 'ok' } },
      },
    }
  }
  return {
    openapi: '3.0.3',
    info: { title: 'hostile', version: '1' },
    servers: [{ url: 'https://api.example.test' }],
    paths,
    components: { schemas },
  }
}

/** The F1 shape: S0..S8, 9 properties each, `{ $ref: S(i+1) }`. */
export const breadthBomb = () => spec(chain(9, 9, (ref) => ref))

/** Calls a sub-tool of the hostile pack: a tool error (200, isError) whose text names the problem. */
async function callFails(app: HostileApp, tenant: string, tool: string, expectProblem: RegExp) {
  const invoked = await app.call(tenant, 'POST', `/projects/p1/tools/${tool}/invoke`, { params: {} })
  const text = await invoked.text()
  assert.equal(invoked.status, 200, text.slice(0, 300))
  const outcome = JSON.parse(text) as { isError?: boolean }
  assert.equal(outcome.isError, true, text.slice(0, 300))
  assert.match(text, expectProblem)
}

/** Writes the spec as a raw document and a rest_api pack over it; spawns; checks the problem and a call. */
async function packOver(app: HostileApp, tenant: string, document: object, expectProblem: RegExp, call = 'bomb__op0') {
  const text = JSON.stringify(document)
  const put = await app.call(tenant, 'PUT', '/projects/p1/documents/specs/bomb.json', text, JSON_TYPE)
  assert.ok(put.status === 201 || put.status === 200, `spec PUT ${put.status}: ${await put.text()}`)
  const tool = 'type: rest_api\ndescription: A hostile pack.\nparameters:\n  specPath: specs/bomb.json\n'
  const created = await app.call(tenant, 'PUT', '/projects/p1/server-tools/bomb', tool, YAML)
  assert.ok(created.status === 201 || created.status === 200, `tool PUT ${created.status}: ${await created.text()}`)
  // the F1 trigger: a process spawn expands every pack of the project
  const spawned = await app.call(tenant, 'POST', '/projects/p1/processes', { recipe: 'default' })
  assert.equal(spawned.status, 201, await spawned.clone().text())
  await callFails(app, tenant, call, expectProblem)
}

export const rowSet: HostileRowSet = {
  name: 'hostile document expansion',
  rows: [
    {
      name: 'F1: the $ref breadth bomb (S0..S8 × 9 properties, 3.9 KB) is a pack problem and its call a tool error naming the budget',
      async run(app) {
        assert.ok(JSON.stringify(breadthBomb()).length < 5_000)
        await packOver(app, 'mallory1', breadthBomb(), /op0.*budget of 2,000/)
      },
    },
    {
      name: 'F1 again after the problem is cached: a second tenant with the same bomb as specInline',
      async run(app) {
        const doc = breadthBomb()
        const tool = JSON.stringify({ type: 'rest_api', description: 'Inline bomb.', parameters: { specInline: doc } })
        const put = await app.call('mallory2', 'PUT', '/projects/p1/server-tools/bomb', tool, JSON_TYPE)
        assert.ok(put.status === 201 || put.status === 200, `tool PUT ${put.status}: ${await put.text()}`)
        assert.equal((await app.call('mallory2', 'POST', '/projects/p1/processes', { recipe: 'default' })).status, 201)
        await callFails(app, 'mallory2', 'bomb__op0', /budget of 2,000/)
      },
    },
    {
      name: 'variant: allOf fan-out (S0..S8, allOf of 9 refs each) is a problem, not a stall',
      async run(app) {
        await packOver(app, 'mallory3', spec(chain(9, 9, (ref) => ref, 'allOf')), /budget/)
      },
    },
    {
      name: 'variant: a deep and wide mix (30 levels × 3 properties plus anyOf of 3) is a problem',
      async run(app) {
        await packOver(app, 'mallory4', spec(chain(30, 3, (ref, j) => (j === 0 ? { anyOf: [ref, ref, ref] } : ref))), /budget/)
      },
    },
    {
      name: 'variant: one 80,000-value enum shared by 400 operations stays within memory and is a pack problem',
      async run(app) {
        const schemas = { S0: { type: 'string', enum: Array.from({ length: 80_000 }, (_, i) => `v${i}`) } }
        await packOver(app, 'mallory5', spec(schemas, 400), /budget/)
      },
    },
    {
      name: 'variant: 5,000 trivial operations are a pack problem (at most 1,000 sub-tools)',
      async run(app) {
        await packOver(app, 'mallory6', spec({ S0: { type: 'string' } }, 5_000), /number of operations is over its budget of 1,000/)
      },
    },
    {
      name: 'variant: a prompt template whose outputSchema has 50,000 nodes is a 422 at write',
      async run(app) {
        const outputSchema = {
          type: 'object',
          properties: Object.fromEntries(Array.from({ length: 12_500 }, (_, i) => [`k${i}`, { type: 'string', minLength: 1 }])),
        }
        const tool = {
          type: 'prompt_template',
          description: 'Schema bomb.',
          parameters: { model: 'openai/gpt-5.1', promptPrefix: 'Hi {{x}}', inputs: [{ name: 'x', type: 'string' }], outputSchema },
        }
        const res = await app.call('mallory7', 'PUT', '/projects/p1/server-tools/schema_bomb', JSON.stringify(tool), JSON_TYPE)
        const text = await res.text()
        assert.equal(res.status, 422, text.slice(0, 300))
        assert.match(text, /more than 2,000 nodes/)
      },
    },
  ],
}
