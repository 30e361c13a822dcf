/** The ToolUsageStore contract on DynamoDB (dynalite), plus the item layout sst.config.ts and readers rely on. */
import { describe, expect, it } from 'vitest'
import { ensureTable } from '../../lib/stores/aws/provision'
import { DynamoToolUsageStore, toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { USAGE_DAY_RETENTION_DAYS } from '../../lib/usage/ports'
import { toolUsageStoreContract } from '../contract/tool-usage-store.contract'
import { awsTestClients, uniqueSuffix } from '../support/aws'

async function freshUsageStore() {
  const clients = awsTestClients()
  const tableName = `usage-${uniqueSuffix()}`
  await ensureTable(clients.dynamo, toolUsageTableSpec(tableName))
  return { store: new DynamoToolUsageStore({ dynamo: clients.dynamo, tableName }), tableName, clients }
}

toolUsageStoreContract('dynamodb', async () => (await freshUsageStore()).store)

describe('DynamoToolUsageStore on dynalite', () => {
  it('keys an item by <tenant>#<project> and <role>#<tool> and keeps numbers as numbers', async () => {
    const { store } = await freshUsageStore()
    await store.increment({
      tenant: 'acme',
      project: 'shop',
      role: 'coder',
      tool: 'file_read',
      family: 'file',
      calls: 3,
      discoveryHits: 0,
      listedHits: 1,
      lastCallAt: '2026-01-01T00:00:00.000Z',
      flushId: 'flush-1',
    })
    expect(await store.rawItem({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' })).toEqual({
      // the flush id in the newest of the write-id slots (lib/stores/aws/write-ids.ts)
      writeId: 'flush-1',
      writeId1: '-',
      writeId2: '-',
      writeId3: '-',
      scope: 'acme#shop',
      roleTool: 'coder#file_read',
      role: 'coder',
      tool: 'file_read',
      family: 'file',
      calls: 3,
      discoveryHits: 0,
      listedHits: 1,
      lastCallAt: '2026-01-01T00:00:00.000Z',
    })
  })

  it('keeps a day row in a partition of its own with expiresAt (the table TTL attribute) and counts a flush id once', async () => {
    const { store, tableName, clients } = await freshUsageStore()
    await store.incrementDay({ tenant: 'acme', project: 'shop', role: 'coder', day: '2026-03-01', calls: 2, flushId: 'flush-1' })
    await store.incrementDay({ tenant: 'acme', project: 'shop', role: 'coder', day: '2026-03-01', calls: 2, flushId: 'flush-1' })
    const got = await clients.dynamo.getItem<Record<string, unknown>>({
      TableName: tableName,
      ConsistentRead: true,
      Key: { scope: 'acme#shop#day', roleTool: '2026-03-01#coder' },
    })
    expect(got.Item).toEqual({
      scope: 'acme#shop#day',
      roleTool: '2026-03-01#coder',
      role: 'coder',
      day: '2026-03-01',
      calls: 2,
      expiresAt: Date.UTC(2026, 2, 1) / 1000 + (USAGE_DAY_RETENTION_DAYS + 1) * 86_400,
      writeId: 'flush-1',
      writeId1: '-',
      writeId2: '-',
      writeId3: '-',
    })
    expect(toolUsageTableSpec(tableName).ttlAttribute).toBe('expiresAt')
  })

  it('sends one UpdateItem per increment', async () => {
    const { store } = await freshUsageStore()
    await store.increment({
      tenant: 'acme',
      project: 'shop',
      role: 'coder',
      tool: 'file_read',
      family: 'file',
      calls: 1,
      discoveryHits: 1,
      listedHits: 1,
    })
    expect(store.roundTrips).toBe(1)
  })
})
