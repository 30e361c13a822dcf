/** The AuditStore contract on DynamoDB (dynalite), and the requests it sends. */
import { describe, expect, it } from 'vitest'
import { auditTableSpec, DynamoAuditStore } from '../../lib/stores/aws/audit-store'
import { ensureTable } from '../../lib/stores/aws/provision'
import { auditStoreContract, entry, NOW } from '../contract/audit-store.contract'
import { awsTestClients, uniqueSuffix } from '../support/aws'

async function freshAuditStore(batchWrites = false) {
  const clients = awsTestClients()
  const tableName = `audit-${uniqueSuffix()}`
  await ensureTable(clients.dynamo, auditTableSpec(tableName))
  return new DynamoAuditStore({ dynamo: clients.dynamo, tableName, batchWrites })
}

auditStoreContract('dynamodb', () => freshAuditStore())
auditStoreContract('dynamodb, batch writes on', () => freshAuditStore(true))

describe('DynamoAuditStore on dynalite', () => {
  it('sends one conditional PutItem per entry', async () => {
    const store = await freshAuditStore()
    await store.append(entry())
    await store.append(entry())
    expect(store.roundTrips).toBe(2)
  })

  it('writes no batch unless told to: BatchWriteItem could also delete, and the AWS policy grants PutItem and Query only', async () => {
    expect((await freshAuditStore()).appendMany).toBeUndefined()
  })

  it('with batch writes, puts 25 entries in one BatchWriteItem and reads them back as they were appended', async () => {
    const store = await freshAuditStore(true)
    const batch = Array.from({ length: 25 }, (_, i) => entry({ target: `projects/p1/documents/b${i}.yaml`, actor: { subject: `s${i}` } }))
    expect(await store.appendMany!(batch)).toEqual([])
    expect(store.roundTrips).toBe(1)
    const read = (await store.query('acme', {}, { limit: 100 }, NOW)).entries
    expect(read.sort((a, b) => a.id.localeCompare(b.id))).toEqual(batch.sort((a, b) => a.id.localeCompare(b.id)))
    await expect(store.appendMany!([...batch, entry()])).rejects.toThrow(/at most 25/)
  })
})
