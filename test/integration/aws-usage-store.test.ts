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
      day: '2026-01-01',
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
      // the calls of the tool's latest day, not yet in a day row
      day: '2026-01-01',
      dayCalls: 3,
    })
  })

  it('moves a closed day into a day row in a partition of its own, with expiresAt (the table TTL attribute) and the tools moved', async () => {
    const { store, tableName } = await freshUsageStore()
    const at = (day: string, calls: number) => store.increment(fileRead(day, calls, 0))
    await at('2026-03-01', 2)
    await at('2026-03-02', 5)
    expect(await store.rawDayItem('acme', 'shop', 'coder', '2026-03-01')).toEqual({
      scope: 'acme#shop#day',
      roleTool: '2026-03-01#coder',
      role: 'coder',
      day: '2026-03-01',
      calls: 2,
      expiresAt: Date.UTC(2026, 2, 1) / 1000 + (USAGE_DAY_RETENTION_DAYS + 1) * 86_400,
      moved: new Set(['file_read']),
    })
    // the move is over: the tool row holds the new day only
    expect(await store.rawItem({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' })).toMatchObject({
      day: '2026-03-02',
      dayCalls: 5,
    })
    expect(await store.rawItem({ tenant: 'acme', project: 'shop', role: 'coder', tool: 'file_read' })).not.toHaveProperty('movedDay')
    expect(toolUsageTableSpec(tableName).ttlAttribute).toBe('expiresAt')
  })

  it("sends one UpdateItem per increment within a day; a tool's first of a new day adds the refusal, one read and the move", async () => {
    const { store } = await freshUsageStore()
    const at = (day: string) => store.increment(fileRead(day, 1, 1))
    await at('2026-03-01')
    await at('2026-03-01')
    expect(store.roundTrips).toBe(2)
    await at('2026-03-02')
    // the refused add, the read dynalite needs (DynamoDB returns the row with the refusal), the tool row, the day row, the tool row
    expect(store.roundTrips).toBe(2 + 5)
    await at('2026-03-02')
    expect(store.roundTrips).toBe(8)
  })
})

/** coder's file_read in acme/shop on `day`: `calls` calls, `hits` discovery and listing hits. */
const fileRead = (day: string, calls: number, hits: number) => ({
  tenant: 'acme',
  project: 'shop',
  role: 'coder',
  tool: 'file_read',
  family: 'file',
  calls,
  discoveryHits: hits,
  listedHits: hits,
  day,
})
