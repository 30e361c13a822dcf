/**
 * ObservedLimitStore on DynamoDB. Table: `tenant` (hash) + `endpoint` (`instance/model`, range).
 * `lower` is one conditional UpdateItem (no live limit, or a larger one), so a larger observation
 * never overwrites a smaller live one, whatever the interleaving. `expiresAt` (epoch seconds) is
 * the table's TTL attribute; DynamoDB deletes late (and dynalite never), so reads filter it too. It carries a
 * write id (./write-ids.ts): a retry of an applied attempt whose answer was lost fails the
 * condition (the value is already there), finds its id, and answers `lowered: true` as it was.
 */

import { ServerToolsError } from '../../errors'
import type { LearnedLimit, ObservedLimitRecord, ObservedLimitStore } from '../../surface/limits'
import { endpointKey } from '../../surface/limits'
import type { DynamoClient } from './dynamo/client'
import type { TableSpec } from './provision'
import { errorName, storeError } from './store-errors'
import { mayHaveLanded, newWriteId, writeIdClauses, writesSince } from './write-ids'

export const observedLimitsTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'tenant', type: 'S' },
  rangeKey: { name: 'endpoint', type: 'S' },
  ttlAttribute: 'expiresAt',
})

const UNPROCESSED_RETRIES = 8
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export class DynamoObservedLimitStore implements ObservedLimitStore {
  private readonly db: DynamoClient
  private readonly table: string
  /** DynamoDB requests sent. */
  roundTrips = 0

  constructor(opts: { dynamo: DynamoClient; tableName: string }) {
    this.db = opts.dynamo
    this.table = opts.tableName
  }

  async lower(r: ObservedLimitRecord, nowSec: number) {
    const writeId = newWriteId()
    const names: Record<string, string> = { '#max': 'maxTools', '#exp': 'expiresAt', '#cat': 'catalog' }
    const values: Record<string, unknown> = {
      ':n': r.maxTools,
      ':at': r.observedAt,
      ':exp': r.expiresAt,
      ':cat': r.catalog,
      ':now': nowSec,
      ...(r.requestedToolCount !== undefined ? { ':req': r.requestedToolCount } : {}),
      ...(r.errorMessage !== undefined ? { ':msg': r.errorMessage } : {}),
    }
    const ids = writeIdClauses(names, values, writeId)
    try {
      await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { tenant: r.tenant, endpoint: endpointKey(r.endpoint) },
          UpdateExpression: `SET #max = :n, observedAt = :at, #exp = :exp, #cat = :cat${r.requestedToolCount !== undefined ? ', requestedToolCount = :req' : ''}${r.errorMessage !== undefined ? ', errorMessage = :msg' : ''}, ${ids.set.join(', ')}`,
          // replaced when absent, larger, expired, or learned under another catalog limit
          ConditionExpression: `(attribute_not_exists(#max) OR #max > :n OR attribute_not_exists(#exp) OR #exp <= :now OR attribute_not_exists(#cat) OR #cat <> :cat) AND ${ids.condition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      )
      return { maxTools: r.maxTools, lowered: true }
    } catch (e) {
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
      const out = await this.send(() =>
        this.db.getItem({ TableName: this.table, Key: { tenant: r.tenant, endpoint: endpointKey(r.endpoint) }, ConsistentRead: true }),
      )
      // ours, applied by an attempt whose answer was lost (later lowerings may have followed it)
      if (mayHaveLanded(e) && writesSince(out.Item, writeId) !== undefined) return { maxTools: r.maxTools, lowered: true }
      return { maxTools: (out.Item?.maxTools as number | undefined) ?? r.maxTools, lowered: false }
    }
  }

  async getMany(tenant: string, endpoints: readonly string[], nowSec: number) {
    const found = new Map<string, LearnedLimit>()
    const unique = [...new Set(endpoints.map(endpointKey))]
    for (let i = 0; i < unique.length; i += 100) {
      let pending: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((endpoint) => ({ tenant, endpoint }))
      for (let retry = 0; pending?.length; retry++) {
        if (retry > UNPROCESSED_RETRIES)
          throw new ServerToolsError('THROTTLED', 'the observed-limits table left keys unprocessed; retry shortly')
        if (retry > 0) await sleep(Math.min(25 * 2 ** retry, 1_000))
        const keys: Record<string, unknown>[] = pending
        const res = await this.send(() => this.db.batchGetItem({ RequestItems: { [this.table]: { Keys: keys, ConsistentRead: true } } }))
        for (const item of res.Responses[this.table] ?? []) {
          // records from before limits expired carry no expiresAt or catalog: they are not believed
          if (typeof item.expiresAt !== 'number' || item.expiresAt <= nowSec || typeof item.catalog !== 'string') continue
          found.set(item.endpoint as string, { maxTools: item.maxTools as number, catalog: item.catalog })
        }
        pending = res.UnprocessedKeys[this.table]?.Keys
      }
    }
    const out = new Map<string, LearnedLimit>()
    for (const e of endpoints) {
      const n = found.get(endpointKey(e))
      if (n !== undefined) out.set(e, n)
    }
    return out
  }

  private async send<T>(request: () => Promise<T>): Promise<T> {
    this.roundTrips++
    try {
      return await request()
    } catch (e) {
      throw storeError(e, 'the observed-limits table')
    }
  }
}
