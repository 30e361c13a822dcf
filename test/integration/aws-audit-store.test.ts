/** The AuditStore contract on DynamoDB (dynalite), and the requests it sends. */
import { describe, expect, it } from 'vitest'
import { auditTableSpec, DynamoAuditStore } from '../../lib/stores/aws/audit-store'
import { ensureTable } from '../../lib/stores/aws/provision'
import { auditStoreContract, entry } from '../contract/audit-store.contract'
import { awsTestClients, uniqueSuffix } from '../support/aws'

async function freshAuditStore() {
  const clients = awsTestClients()
  const tableName = `audit-${uniqueSuffix()}`
  await ensureTable(clients.dynamo, auditTableSpec(tableName))
  return new DynamoAuditStore({ dynamo: clients.dynamo, tableName })
}

auditStoreContract('dynamodb', freshAuditStore)

describe('DynamoAuditStore on dynalite', () => {
  it('sends one conditional PutItem per entry', async () => {
    const store = await freshAuditStore()
    await store.append(entry())
    await store.append(entry())
    expect(store.roundTrips).toBe(2)
  })
})
