/**
 * QuotaCounterStore on DynamoDB. Table: `tenant` (hash) + `counter` (range), `used` a number,
 * `expiresAt` the TTL attribute. A reservation is one conditional UpdateItem (ADD within the
 * limit); when the whole slice does not fit, the refusal carries the row (ALL_OLD) and a second
 * UpdateItem takes what is left, so the store never grants past the limit.
 *
 * A retried ADD whose first answer was lost may reserve twice: budget is stranded (the window
 * admits less), never exceeded — the safe side for a cap, so no write id here.
 */
import type { QuotaCounterKey, QuotaCounterStore, Reservation } from '../../quotas/ports'
import type { DynamoClient, DynamoError } from './dynamo/client'
import type { TableSpec } from './provision'
import { errorName } from './store-errors'

export const quotaCountersTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'tenant', type: 'S' },
  rangeKey: { name: 'counter', type: 'S' },
  ttlAttribute: 'expiresAt',
})

/** Rounds against other containers before a reservation settles for what it saw left. */
const RACE_ROUNDS = 4

export class DynamoQuotaCounterStore implements QuotaCounterStore {
  private readonly db: DynamoClient
  private readonly table: string

  constructor(opts: { dynamo: DynamoClient; tableName: string }) {
    this.db = opts.dynamo
    this.table = opts.tableName
  }

  async reserve(key: QuotaCounterKey, want: number, limit: number, expiresAt: number): Promise<Reservation> {
    let ask = Math.min(want, limit)
    for (let round = 0; round < RACE_ROUNDS && ask > 0; round++) {
      try {
        const out = await this.db.updateItem<{ used: number }>({
          TableName: this.table,
          Key: { tenant: key.tenant, counter: key.counter },
          UpdateExpression: 'ADD #used :n SET #exp = :exp',
          ConditionExpression: 'attribute_not_exists(#used) OR #used <= :room',
          ExpressionAttributeNames: { '#used': 'used', '#exp': 'expiresAt' },
          ExpressionAttributeValues: { ':n': ask, ':room': limit - ask, ':exp': expiresAt },
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        })
        return { granted: ask, used: out.Attributes?.used ?? ask }
      } catch (e) {
        if (errorName(e) !== 'ConditionalCheckFailedException') throw e
        // the refusal carries the row where DynamoDB supports it; otherwise one consistent read
        const item =
          (e as DynamoError).Item ??
          (await this.db.getItem({ TableName: this.table, Key: { tenant: key.tenant, counter: key.counter }, ConsistentRead: true })).Item
        const used = Number(item?.used ?? 0)
        ask = Math.min(ask, limit - used)
        if (ask <= 0) return { granted: 0, used }
      }
    }
    return { granted: 0, used: limit }
  }

  async read(tenant: string, counters: readonly string[]) {
    const out = new Map<string, number>()
    const unique = [...new Set(counters)]
    for (let i = 0; i < unique.length; i += 100) {
      let keys: Record<string, unknown>[] = unique.slice(i, i + 100).map((counter) => ({ tenant, counter }))
      for (let round = 0; keys.length && round < 8; round++) {
        const res = await this.db.batchGetItem<{ counter: string; used: number }>({
          RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } },
        })
        for (const item of res.Responses[this.table] ?? []) out.set(item.counter, Number(item.used))
        keys = (res.UnprocessedKeys[this.table]?.Keys as Record<string, unknown>[] | undefined) ?? []
      }
    }
    return out
  }
}
