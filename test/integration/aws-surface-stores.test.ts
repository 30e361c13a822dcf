/** The process and observed-limit contracts on DynamoDB (dynalite), plus what only the AWS adapters promise. */

import { describe, expect, it } from 'vitest'
import { DynamoObservedLimitStore, observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { DynamoProcessStore, processesTableSpec } from '../../lib/stores/aws/process-store'
import { ensureTable } from '../../lib/stores/aws/provision'
import { rawGetItem } from '../../lib/stores/aws/raw-probes'
import { observedLimitStoreContract } from '../contract/observed-limit-store.contract'
import { processStoreContract, sampleProcess } from '../contract/process-store.contract'
import { awsTestClients, uniqueSuffix } from '../support/aws'

async function freshProcessStore() {
  const tableName = `processes-${uniqueSuffix()}`
  await ensureTable(awsTestClients().dynamo, processesTableSpec(tableName))
  return { store: new DynamoProcessStore({ dynamo: awsTestClients().dynamo, tableName }), tableName }
}

async function freshLimitStore() {
  const tableName = `observed-limits-${uniqueSuffix()}`
  await ensureTable(awsTestClients().dynamo, observedLimitsTableSpec(tableName))
  return new DynamoObservedLimitStore({ dynamo: awsTestClients().dynamo, tableName })
}

processStoreContract('dynamodb', async () => (await freshProcessStore()).store)
observedLimitStoreContract('dynamodb', freshLimitStore)

describe('DynamoProcessStore on dynalite', () => {
  it('writes the expiry as epoch seconds in the TTL attribute the table spec names', async () => {
    const { store, tableName } = await freshProcessStore()
    const rec = sampleProcess({ expiresAt: Date.UTC(2026, 0, 1, 1, 0, 0, 500) })
    await store.create(rec)
    expect(processesTableSpec(tableName)).toMatchObject({ hashKey: { name: 'scope' }, rangeKey: { name: 'id' }, ttlAttribute: 'expiresAt' })
    const item = await rawGetItem(awsTestClients().dynamo, tableName, { scope: 'acme#shop', id: 'proc-1' })
    expect(item).toMatchObject({ expiresAt: Math.ceil(rec.expiresAt / 1000), expiresAtMs: rec.expiresAt })
  })

  it('reports phantoms of a process stored before phantomsBy existed, each once', async () => {
    const { store, tableName } = await freshProcessStore()
    await store.create(sampleProcess())
    // the item as an older release wrote it: no phantomsBy map
    await awsTestClients().dynamo.updateItem({
      TableName: tableName,
      Key: { scope: 'acme#shop', id: 'proc-1' },
      UpdateExpression: 'REMOVE phantomsBy',
    })
    const key = { tenant: 'acme', project: 'shop', id: 'proc-1' }
    const now = sampleProcess().createdAt
    expect(await store.markPhantoms(key, ['ghost', 'spook'], now)).toEqual(['ghost', 'spook'])
    expect(await store.markPhantoms(key, ['spook', 'wraith'], now)).toEqual(['wraith'])
    expect((await store.get(key, now))?.phantomsReported).toEqual(['ghost', 'spook', 'wraith'])
  })

  it('answers with one BatchGetItem for a whole chain of learned limits', async () => {
    const store = await freshLimitStore()
    await store.lower({ tenant: 'acme', endpoint: 'a/x', maxTools: 5, observedAt: 'now', expiresAt: 2_000, catalog: 'none' }, 1_000)
    const before = store.roundTrips
    const got = await store.getMany('acme', ['a/x', 'b/y', 'c/z'], 1_000)
    expect([got.get('a/x')?.maxTools, store.roundTrips - before]).toEqual([5, 1])
  })
})
