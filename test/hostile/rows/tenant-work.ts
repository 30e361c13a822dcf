/**
 * Issue 21 N1, N8, N4 and variants of each that are not in the issue: tenant-written patterns,
 * schemas and YAML that made the shared thread work for seconds. Each is refused (or answered)
 * within its budget of lib/config/expansion-budget.ts (WORK_BUDGETS), and each row asserts the
 * work counted — pattern program size and match cost, validation steps, the place where the
 * YAML count stopped — computed by the same code the app runs, beside what the app answered.
 *
 * `attacks` (at the end) are the same shapes as floods, for `npm run bench -- hostile`.
 */
import assert from 'node:assert/strict'
import { BudgetExceeded, budgetFor, WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import type { JsonSchema } from '../../../lib/config/json-schema'
import { CHUNK_CHARS, newJsonSliceWork, parseJsonInSlices, SLICE_CHARS } from '../../../lib/config/json-slices'
import { MAX_NESTING_DEPTH, yamlTooDeep } from '../../../lib/config/nesting'
import { compilePattern, estimatedSize, isPatternProblem, matchCost, precompilePatterns } from '../../../lib/config/patterns'
import { interpret, type PackPatterns, schemaProblem } from '../../../lib/config/schema-interpreter'
import type { AttackClass, HostileApp, HostileRowSet } from '../harness'

const YAML = { 'content-type': 'application/yaml' }
const STEPS = WORK_BUDGETS.schemaValidation.limit
const BUDGET_TEXT = `over the validation budget of ${STEPS.toLocaleString('en-US')} steps`

/** A process of `tenant` with one client tool named `t` whose input schema is `schema`. */
async function clientTool(app: HostileApp, tenant: string, schema: JsonSchema): Promise<Response> {
  return app.call(tenant, 'POST', '/projects/p1/processes', {
    clientTools: [{ name: 't', description: 'A hostile tool.', inputSchema: schema }],
  })
}

async function processWith(app: HostileApp, tenant: string, schema: JsonSchema): Promise<string> {
  const res = await clientTool(app, tenant, schema)
  const text = await res.text()
  assert.equal(res.status, 201, text.slice(0, 400))
  return (JSON.parse(text) as { id: string }).id
}

/** Calls client tool `t` of a process: the outcome (a tool error when the params are refused). */
async function callTool(app: HostileApp, tenant: string, id: string, params: unknown) {
  return callToolWith(app, tenant, id, JSON.stringify({ name: 't', params }))
}

async function callToolWith(app: HostileApp, tenant: string, id: string, body: string) {
  const res = await app.call(tenant, 'POST', `/projects/p1/processes/${id}/tool-calls`, body)
  const text = await res.text()
  assert.equal(res.status, 200, text.slice(0, 400))
  return JSON.parse(text) as { isError: boolean; content: { message?: string } }
}

/** The steps the app's validator takes for this schema and value (the same interpreter, in this process). */
function stepsOf(schema: JsonSchema, value: unknown): { valid: boolean; steps: number } {
  const validate = interpret(schema)
  const valid = validate(value)
  return { valid, steps: validate.steps ?? 0 }
}

/** Refused at the budget: the steps stopped right past it (or a pre-paid charge passed it without the work). */
function assertRefusedAtBudget(schema: JsonSchema, value: unknown) {
  const { valid, steps } = stepsOf(schema, value)
  assert.equal(valid, false)
  assert.ok(steps > STEPS, `${steps} steps`)
}

async function assertProblem(res: Response, status: number, pattern: RegExp) {
  const text = await res.text()
  assert.equal(res.status, status, text.slice(0, 400))
  assert.match(text, pattern)
  return text
}

// ───────────── N8 shapes: small schemas, costly validations ─────────────

/** The N8 class: a recursive anyOf of two branches (2^depth visits without a budget). */
export const recursiveAnyOf: JsonSchema = {
  type: 'object',
  $defs: {
    n: {
      anyOf: [
        { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, required: ['z'] },
        { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, required: ['y'] },
      ],
    },
  },
  properties: { v: { $ref: '#/$defs/n' } },
}
export const nested = (depth: number): unknown => Array.from({ length: depth }).reduce((v: unknown) => ({ a: v }), {})

const uniqueObjects: JsonSchema = { type: 'object', properties: { v: { type: 'array', uniqueItems: true } } }
const uniqueValue = Array.from({ length: 1_500 }, (_, i) => ({
  ...Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`k${k}`, k])),
  last: i,
}))

const manyBranches: JsonSchema = {
  type: 'object',
  properties: { v: { anyOf: Array.from({ length: 40 }, (_, i) => ({ type: 'object', required: [`r${i}`] })) } },
}
const manyKeys = Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`k${i}`, i]))

const allOfItems: JsonSchema = {
  type: 'object',
  properties: { v: { allOf: Array.from({ length: 12 }, () => ({ type: 'array', items: { type: ['integer', 'null'], minimum: 0 } })) } },
}

const uriFormat: JsonSchema = { type: 'object', properties: { v: { type: 'string', format: 'uri' } } }
const longUri = `http://${'a'.repeat(400_000)}`

// ───────────── N4 shapes: YAML layouts a scan of its own misread ─────────────

const brackets = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
const tool = (rest: string) => `type: scripted\ndescription: A hostile tool.\nparameters:\n  source: "1"\n${rest}`
export const yamlLayouts: [string, string, number][] = [
  ['N4: continuation lines that start with a quote', tool(`x: a\n "b\ny: ${brackets(25_000)}\nz: "\n`), 7],
  ['variant: a document start with content on its line', `a: 1\n--- ${brackets(25_000)}\n`, 2],
  ['variant: an anchor glued to a flow collection', tool(`x: &a${brackets(25_000)}\n`), 5],
  ['variant: a block scalar with an indentation indicator, then a deep key', tool(`x: |2\n   b\ny: ${brackets(25_000)}\n`), 7],
  [
    'variant: a single-quoted scalar with a doubled quote and a bracket, then a deep key',
    tool(`x: 'it''s [not'\ny: ${brackets(25_000)}\n`),
    6,
  ],
  ['variant: a comment holding a quote and brackets, then a deep key', tool(`x: a # "[[[ '\ny: ${brackets(25_000)}\n`), 6],
  [
    'variant: a literal block of 5,000 brackets (text, not nesting), then a deep key',
    tool(`x: |\n  ${'['.repeat(5_000)}\ny: ${brackets(25_000)}\n`),
    7,
  ],
  ['variant: a flow mapping whose quoted key holds closing brackets', tool(`x: {"]]": 1, y: ${brackets(25_000)}}\n`), 5],
]

export const rowSet: HostileRowSet = {
  name: 'hostile tenant-written work (N1 patterns, N8 validation, N4 YAML)',
  rows: [
    {
      name: 'N1: a client tool with pattern ^(a+)+$ and a call with "a"×29 + "!" is an ordinary invalid-argument answer, matched in linear time',
      async run(app) {
        const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }
        const id = await processWith(app, 'n1a', schema)
        const value = `${'a'.repeat(29)}!`
        const outcome = await callTool(app, 'n1a', id, { s: value })
        assert.equal(outcome.isError, true)
        assert.match(outcome.content.message ?? '', /must match pattern/)
        const p = compilePattern('^(a+)+$')
        assert.ok(!isPatternProblem(p) && matchCost(p, value.length) < 20, 'a 30-character match costs a handful of steps')
        assert.ok(stepsOf(schema, { s: value }).steps < 50)
      },
    },
    {
      name: 'variant: nested quantifiers ^((a*)*b?)*c$ against 200,000 characters are refused by their cost before they run',
      async run(app) {
        const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^((a*)*b?)*c$' } } }
        const id = await processWith(app, 'n1b', schema)
        const value = 'a'.repeat(200_000)
        const outcome = await callTool(app, 'n1b', id, { s: value })
        assert.equal(outcome.isError, true)
        assert.ok((outcome.content.message ?? '').includes(BUDGET_TEXT), outcome.content.message)
        assertRefusedAtBudget(schema, { s: value })
      },
    },
    {
      name: 'variant: a backreference ^(a+)\\1$ in a client tool is a 400 at spawn naming the position',
      async run(app) {
        await assertProblem(
          await clientTool(app, 'n1c', { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)\\1$' } } }),
          400,
          /inputSchema\/properties\/s\/pattern.*the backreference \\\\1 at position 6 cannot be matched in linear time/,
        )
      },
    },
    {
      name: 'variant: a 740-character pattern of 50 [a-z]{1,1000} (100,044 instructions, 300 CPU ms to compile) is a 400 at spawn, refused by its estimate before it is compiled',
      async run(app) {
        const source = Array.from({ length: 50 }, (_, i) => `[a-z]{1,1000}${i}`).join('')
        const estimate = estimatedSize(source)
        assert.ok(estimate > 1.5 * WORK_BUDGETS.patternProgram.limit && estimate < 101_000, `${estimate} estimated`)
        await assertProblem(
          await clientTool(app, 'n1h', { type: 'object', properties: { s: { type: 'string', pattern: source } } }),
          400,
          new RegExp(`would compile to about ${estimate.toLocaleString('en-US')} instructions.*refused before compiling`),
        )
      },
    },
    {
      name: 'variant: 40 distinct anchored patterns of ~240 instructions in one client tool are a 400 at spawn naming the compile budget',
      async run(app) {
        const properties = Object.fromEntries(
          Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^[a-z]{1,120}${i}$` }]),
        )
        await assertProblem(
          await clientTool(app, 'n1f', { type: 'object', properties }),
          400,
          new RegExp(`patterns compile to more than ${WORK_BUDGETS.schemaPatterns.limit.toLocaleString('en-US')} instructions together`),
        )
      },
    },
    {
      name: "variant: 64 client tools of 16 distinct ~246-instruction patterns each (every schema within its own budgets) are a 400 at spawn naming the client tools' pattern budget",
      async run(app) {
        const schemas = Array.from({ length: 64 }, (_, t) => ({
          type: 'object',
          properties: Object.fromEntries(
            Array.from({ length: 16 }, (_, k) => [`p${k}`, { type: 'string', pattern: `^[a-z]{1,60}-${t}-${k}[0-9]{1,60}$` }]),
          ),
        }))
        // each schema alone is inside schemaPatterns; together they are ~1,000 compiles
        for (const s of schemas.slice(0, 3)) assert.equal(schemaProblem(s), undefined)
        const pack: PackPatterns = { budget: budgetFor('packPatterns'), charged: new Set() }
        assert.throws(() => {
          for (const s of schemas) schemaProblem(s, pack)
        }, BudgetExceeded)
        const limit = WORK_BUDGETS.packPatterns.limit
        assert.ok(
          pack.budget.used > limit && pack.budget.used <= limit + WORK_BUDGETS.patternProgram.limit,
          `${pack.budget.used} instructions`,
        )
        const clientTools = schemas.map((inputSchema, t) => ({ name: `t${t}`, description: 'A hostile tool.', inputSchema }))
        // before the checks, the spawn compiles them one per turn of the event loop, and no further than the budget
        const pre = await precompilePatterns(clientTools)
        assert.ok(pre.slices > pre.patterns && pre.patterns < 64 * 16, `${pre.patterns} patterns in ${pre.slices} turns`)
        assert.ok(pre.instructions <= limit + WORK_BUDGETS.patternProgram.limit, `${pre.instructions} instructions`)
        const res = await app.call('n1g', 'POST', '/projects/p1/processes', { clientTools })
        await assertProblem(res, 400, /the patterns of all client tools \(instructions\) is over its budget of 16,384/)
      },
    },
    {
      name: 'variant: a lookahead in patternProperties of a prompt_template outputSchema is a 422 at write naming the position',
      async run(app) {
        const body = JSON.stringify({
          type: 'prompt_template',
          description: 'Hostile output schema.',
          parameters: {
            model: 'openai/gpt-5.1',
            promptPrefix: 'Hi {{x}}',
            inputs: [{ name: 'x', type: 'string' }],
            outputSchema: { type: 'object', patternProperties: { '^(?=a)(a|aa)+$': { type: 'string' } } },
          },
        })
        await assertProblem(
          await app.call('n1d', 'PUT', '/projects/p1/server-tools/lookahead', body, { 'content-type': 'application/json' }),
          422,
          /the lookahead \(\?= at position 2 cannot be matched in linear time/,
        )
      },
    },
    {
      name: 'variant: alternation overlap ^(a|aa|aaa)+$ over 1,000 keys of patternProperties stays inside the budget and answers',
      async run(app) {
        const schema = { type: 'object', patternProperties: { '^(a|aa|aaa)+$': { type: 'integer' } } }
        const id = await processWith(app, 'n1e', schema)
        const value = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`${'a'.repeat(40)}${i}`, 'x']))
        const outcome = await callTool(app, 'n1e', id, value)
        assert.equal(outcome.isError, false, JSON.stringify(outcome).slice(0, 300))
        const { valid, steps } = stepsOf(schema, value)
        assert.ok(valid && steps <= STEPS, `${steps} steps`)
      },
    },
    {
      name: 'N8: a 1.3 KB recursive-anyOf client tool flooded with 20 calls of a 60-deep value: each a tool error naming the budget',
      async run(app) {
        assert.ok(JSON.stringify(recursiveAnyOf).length < 1_300)
        const id = await processWith(app, 'n8a', recursiveAnyOf)
        const value = { v: nested(60) }
        const outcomes = await Promise.all(Array.from({ length: 20 }, () => callTool(app, 'n8a', id, value)))
        for (const o of outcomes) assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(recursiveAnyOf, value)
      },
    },
    {
      name: 'variant: uniqueItems over 1,500 objects that differ only in their last key is refused at the budget',
      async run(app) {
        const id = await processWith(app, 'n8b', uniqueObjects)
        const o = await callTool(app, 'n8b', id, { v: uniqueValue })
        assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(uniqueObjects, { v: uniqueValue })
      },
    },
    {
      name: 'variant: uniqueItems over 1,000 distinct three-key objects (half a million pairs compared pairwise) is answered, in steps linear in the items',
      async run(app) {
        const id = await processWith(app, 'n8f', uniqueObjects)
        const value = { v: Array.from({ length: 1_000 }, (_, i) => ({ id: i, kind: 'x', tags: ['a'] })) }
        assert.equal((await callTool(app, 'n8f', id, value)).isError, false)
        const { valid, steps } = stepsOf(uniqueObjects, value)
        assert.ok(valid && steps <= 8 * 1_000, `${steps} steps`)
      },
    },
    {
      name: 'variant: 40 anyOf branches over an 8,000-key object (every branch lists every key) is refused at the budget',
      async run(app) {
        const id = await processWith(app, 'n8c', manyBranches)
        const o = await callTool(app, 'n8c', id, { v: manyKeys })
        assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(manyBranches, { v: manyKeys })
      },
    },
    {
      name: 'variant: allOf of 12 branches, each typing every item of a 3,000-item array as integer or null, is refused at the budget',
      async run(app) {
        const id = await processWith(app, 'n8e', allOfItems)
        const value = { v: Array.from({ length: 3_000 }, (_, i) => (i % 7 ? i : null)) }
        const o = await callTool(app, 'n8e', id, value)
        assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(allOfItems, value)
        // the same schema over 200 items is an ordinary answer, at a step per keyword visit
        const small = { v: value.v.slice(0, 200) }
        assert.equal((await callTool(app, 'n8e', id, small)).isError, false)
        const { valid, steps } = stepsOf(allOfItems, small)
        assert.ok(valid && steps > 12 * 200 && steps < STEPS, `${steps} steps`)
      },
    },
    {
      name: 'variant: a 900 KB call of 30,000 small objects is parsed in slices of at most 16 KiB, then refused at the validation budget',
      async run(app) {
        const schema = { type: 'object', properties: { v: { type: 'array', items: { type: 'object', required: ['a'] } } } }
        const id = await processWith(app, 'n8f', schema)
        const params = { v: Array.from({ length: 30_000 }, (_, i) => ({ a: i, b: 'x'.repeat(12) })) }
        const body = JSON.stringify({ name: 't', params })
        assert.ok(body.length > 900_000 && body.length < 1_024 * 1_024)
        const work = newJsonSliceWork()
        assert.ok((await parseJsonInSlices(body, { work })).ok)
        assert.ok(work.largestParse <= CHUNK_CHARS + 2 && work.pauses >= Math.floor(body.length / SLICE_CHARS), JSON.stringify(work))
        const o = await callToolWith(app, 'n8f', id, body)
        assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(schema, params)
      },
    },
    {
      name: 'variant: a uri format check of 400 KB is refused by its cost before it runs',
      async run(app) {
        const id = await processWith(app, 'n8d', uriFormat)
        const o = await callTool(app, 'n8d', id, { v: longUri })
        assert.ok(o.isError && (o.content.message ?? '').includes(BUDGET_TEXT), o.content.message)
        assertRefusedAtBudget(uriFormat, { v: longUri })
      },
    },
    ...yamlLayouts.map(([name, body, line]) => ({
      name: `${name}: 50 KB of brackets, a 422 at the line where the count passed ${MAX_NESTING_DEPTH}`,
      async run(app: HostileApp) {
        assert.ok(body.length < WORK_BUDGETS.yamlBytes.limit)
        const issue = yamlTooDeep(body)
        assert.equal(issue?.line, line)
        const text = await assertProblem(
          await app.call('n4', 'PUT', '/projects/p1/server-tools/deep', body, YAML),
          422,
          new RegExp(`nested deeper than ${MAX_NESTING_DEPTH} levels at line ${line}`),
        )
        assert.match(text, new RegExp(`"line":${line}`))
      },
    })),
    {
      name: 'variant: anchors whose uses multiply (six levels of ten) are a 422 naming the data budget',
      async run(app) {
        const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
        for (let i = 1; i < 6; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`)
        await assertProblem(
          await app.call('n4', 'PUT', '/projects/p1/documents/specs/laughs.yaml', `${lines.join('\n')}\n`, YAML),
          422,
          /alias count|expands to more than 100,000 units/i,
        )
      },
    },
  ],
}

/** The same shapes as floods, for `npm run bench -- hostile` (listed in test/hostile/attacks.ts). */
interface Flood {
  id: string
  body: string
}

/** A process whose tool `t` takes `schema`, and the call body sending `params`, serialised once for the whole flood. */
async function flood(app: HostileApp, tenant: string, schema: JsonSchema, params: unknown): Promise<Flood> {
  return { id: await processWith(app, tenant, schema), body: JSON.stringify({ name: 't', params }) }
}

/** 64 KiB of YAML that costs the parser the most per character measured (docs/reference/limits.md). */
const worstCaseYaml = tool(`x: [${'1,'.repeat(32_600)}1]\n`)

export const attacks: AttackClass[] = [
  {
    name: 'N1 pattern ^(a+)+$ × "a"×29+"!"',
    prepare: (app, tenant) =>
      flood(app, tenant, { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, { s: `${'a'.repeat(29)}!` }),
    async once(app, tenant, prepared) {
      const { id, body } = prepared as Flood
      const o = await callToolWith(app, tenant, id, body)
      assert.ok(o.isError)
    },
  },
  {
    name: 'N1 nested quantifiers × 200,000 characters',
    prepare: (app, tenant) =>
      flood(app, tenant, { type: 'object', properties: { s: { type: 'string', pattern: '^((a*)*b?)*c$' } } }, { s: 'a'.repeat(200_000) }),
    async once(app, tenant, prepared) {
      const { id, body } = prepared as Flood
      const o = await callToolWith(app, tenant, id, body)
      assert.ok(o.isError)
    },
  },
  {
    name: 'N8 recursive anyOf (1.3 KB schema) × 60-deep value',
    prepare: (app, tenant) => flood(app, tenant, recursiveAnyOf, { v: nested(60) }),
    async once(app, tenant, prepared) {
      const { id, body } = prepared as Flood
      const o = await callToolWith(app, tenant, id, body)
      assert.ok(o.isError)
    },
  },
  {
    name: 'N8 uniqueItems over 1,500 objects',
    prepare: (app, tenant) => flood(app, tenant, uniqueObjects, { v: uniqueValue }),
    async once(app, tenant, prepared) {
      const { id, body } = prepared as Flood
      const o = await callToolWith(app, tenant, id, body)
      assert.ok(o.isError)
    },
  },
  ...yamlLayouts.slice(0, 2).map(
    ([name, body]): AttackClass => ({
      name: `N4 ${name.replace(/^(N4|variant): /, '')}`,
      async once(app, tenant) {
        const res = await app.call(tenant, 'PUT', '/projects/p1/server-tools/deep', body, YAML)
        const text = await res.text()
        assert.equal(res.status, 422, `${res.status} ${text.slice(0, 200)}`)
      },
    }),
  ),
  {
    // valid YAML: no depth count stops it, the whole 64 KiB is parsed (in a parse worker: lib/config/yaml-pool.ts)
    name: 'N4 a valid 64 KiB flow sequence of one-digit items (the costliest layout per character)',
    async once(app, tenant) {
      const res = await app.call(tenant, 'PUT', '/projects/p1/server-tools/deep', worstCaseYaml, YAML)
      const text = await res.text()
      assert.equal(res.status, 422, `${res.status} ${text.slice(0, 200)}`) // the unknown field `x`, found after the whole parse
    },
  },
]
