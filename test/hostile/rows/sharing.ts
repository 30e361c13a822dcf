/**
 * N2 and N3 of issue 21 and their class: OpenAPI documents small to write whose cost is in what
 * they share — a `required` list, a description, a path item, a parameter list referenced from
 * many places. Each row first expands the document in this process and asserts on the work the
 * expansion counted (nodes produced, bytes rendered, references followed — every use of a shared
 * node counted) against the budgets of lib/config/expansion-budget.ts; then it stores the document
 * as a `rest_api` pack in the app, spawns a process (which expands every pack) and reads its
 * manifest while the bystander keeps calling: the pack is a listing problem naming the budget.
 */
import assert from 'node:assert/strict'
import { BudgetExceeded, EXPANSION_LIMITS as L, WORK_BUDGETS } from '../../../lib/config/expansion-budget'
import { type ExtractWork, extractOperations } from '../../../lib/tools/types/openapi/operations'
import * as attack from '../attacks/openapi-sharing'
import type { AttackClass, HostileApp, HostileRowSet } from '../harness'

const JSON_TYPE = { 'content-type': 'application/json' }
const YAML = { 'content-type': 'application/yaml' }

/**
 * Expands `doc` here and asserts it was refused (whole, or every operation left out) with the
 * work counted inside the budgets: a pack budget plus at most one operation's overshoot.
 */
export async function expandsWithinBudget(doc: object, refusedBy: RegExp): Promise<ExtractWork> {
  const work: ExtractWork = { nodes: 0, bytes: 0, steps: 0, yields: 0 }
  let refusal = ''
  try {
    const { operations, problems } = await extractOperations(doc as Record<string, unknown>, L, work)
    assert.equal(operations.length, 0, `${operations.length} operations were expanded`)
    refusal = problems.join('\n')
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e
    refusal = e.message
  }
  assert.match(refusal, refusedBy)
  assert.ok(work.nodes <= L.packNodes + L.schemaNodes + 1, `nodes ${work.nodes}`)
  assert.ok(work.bytes <= L.packBytes + L.schemaBytes + 1, `bytes ${work.bytes}`)
  assert.ok(work.steps <= L.packSteps + L.operationSteps + 1, `steps ${work.steps}`)
  return work
}

/** Stores the spec and a pack over it for `tenant`, spawns, reads the manifest and the pack's listing problem. */
async function packRefused(app: HostileApp, tenant: string, doc: object, refusedBy: RegExp) {
  const text = JSON.stringify(doc)
  const put = await app.call(tenant, 'PUT', '/projects/p1/documents/specs/shared.json', text, JSON_TYPE)
  assert.ok(put.status === 201 || put.status === 200, `spec PUT ${put.status}: ${(await put.text()).slice(0, 300)}`)
  const tool = 'type: rest_api\ndescription: A pack over a sharing spec.\nparameters:\n  specPath: specs/shared.json\n'
  const created = await app.call(tenant, 'PUT', '/projects/p1/server-tools/shared', tool, YAML)
  assert.ok(created.status === 201 || created.status === 200, `tool PUT ${created.status}: ${(await created.text()).slice(0, 300)}`)
  const spawned = await app.call(tenant, 'POST', '/projects/p1/processes', { recipe: 'default' })
  const process = (await spawned.json()) as { id: string }
  assert.equal(spawned.status, 201, JSON.stringify(process).slice(0, 300))
  const manifest = await app.call(tenant, 'GET', `/projects/p1/processes/${process.id}/manifest`)
  const body = await manifest.text()
  assert.equal(manifest.status, 200, body.slice(0, 300))
  assert.ok(body.length <= L.manifestBytes, `manifest of ${body.length} bytes`)
  assert.doesNotMatch(body, /"shared__/)
  const listing = await app.call(tenant, 'GET', '/projects/p1/server-tools')
  const { problems } = (await listing.json()) as { problems: { name: string; message: string }[] }
  const mine = problems.filter((p) => p.name === 'shared').map((p) => p.message)
  assert.ok(mine.length <= 101, `${mine.length} problems listed`)
  assert.match(mine.join('\n'), refusedBy)
}

const row = (name: string, tenant: string, doc: () => object, refusedBy: RegExp) => ({
  name,
  async run(app: HostileApp) {
    const d = doc()
    await expandsWithinBudget(d, refusedBy)
    await packRefused(app, tenant, d, refusedBy)
  },
})

const NODES = /over its budget of (2,000|100,000)/
const BYTES = /\(bytes\) is over its budget of (262,144|4,194,304)/
const STEPS = /(references followed|parameters merged).* is over its budget of (5,000|200,000)/
const PATTERNS = /the patterns of all operations \(instructions\) is over its budget of 16,384/

export const rowSet: HostileRowSet = {
  name: 'hostile sharing in OpenAPI documents',
  rows: [
    row(
      'N2: a 104 KB spec whose 40 properties share one 5,000-name required list, in 200 operations, is refused on nodes charged per use',
      'mallory-n2',
      () => attack.sharedRequired(),
      NODES,
    ),
    row(
      'N2 variant: one 60,000-character description shared through `items` by 60 array properties is refused on bytes rendered',
      'mallory-n2a',
      () => attack.sharedDescriptionViaItems(),
      BYTES,
    ),
    row(
      'N2 variant: a $ref diamond 6 levels deep (the bottom, with a 2,000-name required list, used 64 times per schema) is refused on nodes',
      'mallory-n2b',
      () => attack.refDiamond(),
      NODES,
    ),
    row(
      'N2 variant: 8 component parameters per operation sharing one schema with a 60,000-character title are refused on bytes rendered',
      'mallory-n2c',
      () => attack.sharedParameterTitle(),
      BYTES,
    ),
    {
      name: 'N3: 125 paths that $ref one path item with 3,000 path-level parameters (names colliding once sanitised) are refused on steps charged per use, the list walked once',
      async run(app: HostileApp) {
        const doc = attack.sharedPathItemParameters()
        const work = await expandsWithinBudget(doc, STEPS)
        // every operation is charged the shared list's walk, but the list is walked once per
        // document, and only up to what one operation may spend
        assert.ok(work.steps > L.packSteps, `steps ${work.steps}`)
        assert.ok(
          work.parametersWalked !== undefined && work.parametersWalked <= L.operationSteps,
          `entries walked ${work.parametersWalked}`,
        )
        await packRefused(app, 'mallory-n3', doc, STEPS)
      },
    },
    row(
      'N3 variant: 500 paths sharing a path item with 20,000 cookie parameters (never inlined) are refused on steps',
      'mallory-n3a',
      () => attack.sharedCookieParameters(),
      STEPS,
    ),
    row(
      'N3 variant: a chain of 5,000 parameter $refs used by 400 operations is refused on references followed',
      'mallory-n3b',
      () => attack.parameterRefChain(),
      STEPS,
    ),
    {
      name: 'N3 variant: 800 paths sharing a path item whose 40 cookie parameters sit behind 7-segment escaped pointers are refused on steps charged per use, each pointer walked once',
      async run(app: HostileApp) {
        const doc = attack.deepEscapedPointers()
        const work = await expandsWithinBudget(doc, STEPS)
        // every use is charged its pointer's length, but a pointer is split and decoded once per
        // document: the path item's and the 40 parameters', however many operations follow them
        assert.ok(work.steps > L.packSteps, `steps ${work.steps}`)
        assert.ok(work.walks !== undefined && work.walks <= 41, `pointers walked ${work.walks}`)
        await packRefused(app, 'mallory-n3d', doc, STEPS)
      },
    },
    {
      name: "N1/N3 variant: 300 operations with 2,400 distinct patterns (each schema within its own pattern budgets) are refused on the pack's pattern instructions",
      async run(app: HostileApp) {
        const doc = attack.distinctPatterns()
        const work = await expandsWithinBudget(doc, PATTERNS)
        // compiled until the pack's budget, plus at most one pattern past it — not all 2,400
        const limit = WORK_BUDGETS.packPatterns.limit
        assert.ok(
          work.patterns !== undefined && work.patterns > limit && work.patterns <= limit + WORK_BUDGETS.patternProgram.limit,
          `${work.patterns} instructions`,
        )
        await packRefused(app, 'mallory-n3e', doc, PATTERNS)
      },
    },
    {
      name: 'N3 variant: 12 path items with parameter lists of their own (1,200 $refs each, just under an operation budget), each $ref-ed by 10 paths, are refused on steps, each list walked once',
      async run(app: HostileApp) {
        const doc = attack.distinctSharedLists()
        const work = await expandsWithinBudget(doc, STEPS)
        assert.ok(work.steps > L.packSteps, `steps ${work.steps}`)
        // one walk per list (12 × 1,200 entries at most), not one per use (~42 uses before the pack budget)
        assert.ok(work.parametersWalked !== undefined && work.parametersWalked <= 12 * 1_200, `entries walked ${work.parametersWalked}`)
        await packRefused(app, 'mallory-n3f', doc, STEPS)
      },
    },
    row(
      'N3 variant: one path with 30,000 undeclared template variables leaves its operation out on steps',
      'mallory-n3c',
      () => attack.templateVariables(),
      STEPS,
    ),
  ],
}

let version = 0
/** The document as JSON with a version slot: built once, so the flood measures the app, not the bench building it. */
const template = (doc: object) => JSON.stringify({ ...doc, info: { title: 'sharing', version: '@VERSION@' } })

/** Stores `doc` (a new version each time, so no parse is reused) and spawns: the spawn expands the pack. */
async function storeAndSpawn(app: HostileApp, tenant: string, doc: string) {
  const text = doc.replace('@VERSION@', String(++version))
  const put = await app.call(tenant, 'PUT', '/projects/p1/documents/specs/shared.json', text, JSON_TYPE)
  await put.text()
  assert.ok(put.status === 201 || put.status === 200, `spec PUT ${put.status}`)
  const spawned = await app.call(tenant, 'POST', '/projects/p1/processes', { recipe: 'default' })
  await spawned.text()
  assert.equal(spawned.status, 201)
}

async function packTool(app: HostileApp, tenant: string) {
  const tool = 'type: rest_api\ndescription: A pack over a sharing spec.\nparameters:\n  specPath: specs/shared.json\n'
  const res = await app.call(tenant, 'PUT', '/projects/p1/server-tools/shared', tool, YAML)
  await res.text()
  assert.ok(res.status === 201 || res.status === 200, `tool PUT ${res.status}`)
}

/** For `npm run bench -- hostile`: each request stores a new version of the document and spawns over it. */
export const attacks: AttackClass[] = [
  {
    name: 'N2 104 KB spec sharing one 5,000-name required list (store + spawn)',
    prepare: (app: HostileApp, tenant: string) => packTool(app, tenant).then(() => template(attack.sharedRequired())),
    once: (app: HostileApp, tenant: string, doc: unknown) => storeAndSpawn(app, tenant, doc as string),
  },
  {
    name: 'N3 307 KB spec: 125 paths sharing a path item of 3,000 parameters (store + spawn)',
    prepare: (app: HostileApp, tenant: string) => packTool(app, tenant).then(() => template(attack.sharedPathItemParameters())),
    once: (app: HostileApp, tenant: string, doc: unknown) => storeAndSpawn(app, tenant, doc as string),
  },
]
