/**
 * Load: 10,000 process tool calls at concurrency 32 against the app on DynamoDB (dynalite) —
 * every counter exact, no call failed. The usage buffer flushes on its own timer while the calls
 * run (concurrent ADDs on the same items), and once more at the end, as the Lambda edge does.
 *
 * Where the time goes (measured with a DynamoDB middleware probe, 1,000 whoami calls): each
 * process tool call costs 1 GetItem (the process) and 1 BatchGetItem (the surface's listing check
 * against the layers' versions); with 32 in flight dynalite serves ~275 calls/s on a busy 2-core
 * box, so the run is bound by the emulator, not by counting — usage adds ~0.01 UpdateItem per
 * call (the buffer coalesces per key). No timing is asserted.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createAwsDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { destroyAwsClients } from '../../lib/stores/aws/clients'
import { observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { client, TEST_SECRET, tokenFor } from '../support/http'

const CALLS = 10_000
const CONCURRENCY = 32
const base = '/brain/acme/projects/load'

let deps: ReturnType<typeof createAwsDeps>
let api: ReturnType<typeof client>

beforeAll(async () => {
  const suffix = uniqueSuffix()
  const names = {
    documentsTable: `load-docs-${suffix}`,
    toolUsageTable: `load-usage-${suffix}`,
    processesTable: `load-procs-${suffix}`,
    observedLimitsTable: `load-limits-${suffix}`,
    bucket: `load-blobs-${suffix}`,
  }
  // A variable, not a literal: the config grows fields other features add (secrets, egress).
  const config = {
    ...names,
    jwtSecret: TEST_SECRET,
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    dynamoEndpoint: inject('dynamoEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
    secrets: new MemorySecretStore(),
  }
  deps = createAwsDeps(config)
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(names.documentsTable)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(names.toolUsageTable)),
    ensureTable(deps.clients.dynamo, processesTableSpec(names.processesTable)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(names.observedLimitsTable)),
    ensureBucket(deps.clients.s3, names.bucket),
  ])
  api = client(createApp(deps), await tokenFor('acme'))
})

afterAll(async () => {
  await deps?.usage.flush()
  if (deps) destroyAwsClients(deps.clients)
})

type Call = { name: string; params: Record<string, unknown> }
/** The mix: direct calls, invoke_tool (2 counts), tool_description (1 call + 2 discovery hits), tool_list (1 call + 1 listed hit). */
const MIX: Call[] = [
  { name: 'whoami', params: {} },
  { name: 'whoami', params: {} },
  { name: 'invoke_tool', params: { name: 'whoami', params: {} } },
  { name: 'tool_description', params: { names: ['whoami', 'invoke_tool'] } },
  { name: 'tool_list', params: { prefix: 'who' } },
]

describe('usage counting under load (dynalite)', () => {
  it(`counts ${CALLS.toLocaleString('en')} process tool calls at concurrency ${CONCURRENCY} exactly, with no call failing`, {
    timeout: 240_000,
  }, async () => {
    expect((await api.put(`${base}/documents/engines/lean.yaml`, 'allowedTools: [whoami, invoke_tool]\n')).status).toBe(201)
    for (const r of ['coder', 'writer']) expect((await api.put(`${base}/documents/recipes/${r}.yaml`, 'engine: lean\n')).status).toBe(201)
    const processes: { id: string; role: string }[] = []
    for (const role of ['coder', 'writer', 'coder', 'writer']) {
      const res = await api.post(`${base}/processes`, { recipe: role })
      expect(res.status).toBe(201)
      processes.push({ id: (await res.json()).id, role })
    }

    const expected = new Map<string, { calls: number; discoveryHits: number; listedHits: number }>()
    const add = (role: string, tool: string, k: 'calls' | 'discoveryHits' | 'listedHits') => {
      const key = `${role}/${tool}`
      const row = expected.get(key) ?? { calls: 0, discoveryHits: 0, listedHits: 0 }
      row[k]++
      expected.set(key, row)
    }
    const failures: string[] = []
    let next = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const i = next++
          const p = processes[i % processes.length]
          const c = MIX[i % MIX.length]
          const res = await api.post(`${base}/processes/${p.id}/tool-calls`, c)
          const body = res.status === 200 ? await res.json() : undefined
          if (!body || body.isError) {
            failures.push(`#${i} ${c.name}: ${res.status} ${JSON.stringify(body ?? (await res.text())).slice(0, 200)}`)
            continue
          }
          add(p.role, c.name, 'calls')
          if (c.name === 'invoke_tool') add(p.role, 'whoami', 'calls')
          if (c.name === 'tool_description') for (const n of c.params.names as string[]) add(p.role, n, 'discoveryHits')
          if (c.name === 'tool_list') for (const n of [...body.content.inContext, ...body.content.available]) add(p.role, n, 'listedHits')
        }
      }),
    )
    const callsDone = performance.now()
    await deps.usage.flush()
    const flushed = performance.now()

    expect(failures).toEqual([])
    const insights = await (await api.get('/brain/acme/admin/projects/load/insights/tool-usage')).json()
    const actual = new Map<string, { calls: number; discoveryHits: number; listedHits: number }>()
    for (const r of insights)
      for (const t of r.tools)
        actual.set(`${r.role}/${t.toolName}`, { calls: t.calls, discoveryHits: t.discoveryHits, listedHits: t.listedHits })
    expect(Object.fromEntries([...actual].sort())).toEqual(Object.fromEntries([...expected].sort()))
    // 10,000 calls: 6,000 whoami (incl. 2,000 via invoke_tool) + 2,000 invoke_tool + 2,000 tool_description + 2,000 tool_list.
    const totalCalls = insights.reduce((s: number, r: { calls: number }) => s + r.calls, 0)
    expect(totalCalls).toBe(CALLS + CALLS / MIX.length)
    console.info(
      `usage load: ${CALLS} calls in ${((callsDone - started) / 1000).toFixed(1)} s (${(CALLS / ((callsDone - started) / 1000)).toFixed(0)}/s), final flush ${(flushed - callsDone).toFixed(0)} ms`,
    )
  })
})
