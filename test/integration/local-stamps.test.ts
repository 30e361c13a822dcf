/**
 * `npm start`'s composition over its embedded dynalite (functions/local.ts: soleDocumentsWriter):
 * the tenant stamps live in the process's memory, so a request's freshness check is no store
 * request, and a write still marks the stamp the next request checks. DynamoDB requests are
 * counted at Node's HTTP client diagnostics channel, against the shared-table composition (what
 * Lambda runs) over the same dynalite in the same file. Counts only; no timings.
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
import { DynamoOperationCounter, TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { client, TEST_SECRET, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
const operations = new DynamoOperationCounter()
const counted = (run: () => Promise<unknown>) => operations.counted(run)

type Composition = { deps: ReturnType<typeof createAwsDeps>; api: ReturnType<typeof client> }
const built: Composition[] = []

/** A composition over its own tables on the test dynalite; `soleDocumentsWriter` as functions/local.ts passes it for the embedded stores. */
async function compose(soleDocumentsWriter: boolean): Promise<Composition> {
  const suffix = uniqueSuffix()
  const names = {
    documentsTable: `stamps-docs-${suffix}`,
    toolUsageTable: `stamps-usage-${suffix}`,
    processesTable: `stamps-procs-${suffix}`,
    observedLimitsTable: `stamps-limits-${suffix}`,
    bucket: `stamps-blobs-${suffix}`,
  }
  const deps = createAwsDeps({
    ...names,
    jwtSecret: TEST_SECRET,
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    dynamoEndpoint: inject('dynamoEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
    secrets: new MemorySecretStore(),
    soleDocumentsWriter,
  })
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(names.documentsTable)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(names.toolUsageTable)),
    ensureTable(deps.clients.dynamo, processesTableSpec(names.processesTable)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(names.observedLimitsTable)),
    ensureBucket(deps.clients.s3, names.bucket),
  ])
  const composition = { deps, api: client(createApp(deps), await tokenFor('acme')) }
  built.push(composition)
  return composition
}

const notesTool = 'type: doc_lookup\ndescription: Notes.\nprimary: true\nparameters:\n  path: notes.md\n'
const invokeNotes = async (api: Composition['api']) => {
  const res = await api.post(`${base}/tools/notes/invoke`, { params: {} })
  expect(res.status).toBe(200)
  return JSON.stringify(await res.json())
}

let local: Composition
let shared: Composition

beforeAll(async () => {
  ;[local, shared] = [await compose(true), await compose(false)]
  for (const { api } of [local, shared]) {
    expect((await api.put(`${base}/documents/notes.md`, 'FIRST NOTES\n')).status).toBe(201)
    expect((await api.put(`${base}/documents/server-tools/notes.yaml`, notesTool)).status).toBe(201)
  }
  operations.start()
})

afterAll(async () => {
  operations.stop()
  for (const { deps } of built) {
    await deps.usage.flush()
    destroyAwsClients(deps.clients)
  }
})

describe('tenant stamps under npm start (the process is the documents table’s only writer)', () => {
  it('serves warm tool calls without a store read, where the shared-table composition reads the stamp on each', async () => {
    const reads = async ({ api, deps }: Composition) => {
      // warm: the container's view of the tenant holds the tool, its layers and notes.md
      for (let i = 0; i < 3; i++) await invokeNotes(api)
      await deps.usage.flush()
      const ops = await counted(async () => {
        for (let i = 0; i < 10; i++) await invokeNotes(api)
      })
      // usage counts are flushed on a timer: only reads belong to the calls themselves
      return { GetItem: ops.GetItem ?? 0, BatchGetItem: ops.BatchGetItem ?? 0 }
    }
    expect({ local: await reads(local), shared: await reads(shared) }).toEqual({
      local: { GetItem: 0, BatchGetItem: 0 },
      shared: { GetItem: 10, BatchGetItem: 0 },
    })
  })

  it('marks a document write in memory: one UpdateItem for the document, none for stamp copies', async () => {
    const write = async ({ api, deps }: Composition) => {
      await deps.usage.flush()
      return counted(async () => expect((await api.put(`${base}/documents/other.md`, `${uniqueSuffix()}\n`)).status).toBeLessThan(300))
    }
    const [localOps, sharedOps] = [await write(local), await write(shared)]
    expect(localOps).toEqual({ UpdateItem: 1 })
    // the table stamps: begin and end on each of the tenant's stamp copies, around the same UpdateItem
    expect(sharedOps.UpdateItem).toBeGreaterThan(localOps.UpdateItem)
  })

  it('shows a document write to the very next request, after its reads were cached', async () => {
    expect(await invokeNotes(local.api)).toContain('FIRST NOTES')
    expect(await invokeNotes(local.api)).toContain('FIRST NOTES')
    expect((await local.api.put(`${base}/documents/notes.md`, 'SECOND NOTES\n')).status).toBe(200)
    const next = await invokeNotes(local.api)
    expect(next).toContain('SECOND NOTES')
    expect(next).not.toContain('FIRST NOTES')
  })
})
