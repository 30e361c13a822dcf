/**
 * ToolUsageStore on DynamoDB. Item: `scope` (hash, `<tenant>#<project>`) + `roleTool` (range,
 * `<role>#<tool>`), with `role`, `tool` and `family` as plain attributes, the counters `calls`,
 * `discoveryHits`, `listedHits` (N), `codeCalls` and `refusals` (N, present once nonzero) and the instants `lastCallAt`, `lastDiscoveryAt`,
 * `lastListedAt` (ISO-8601 S).
 *
 * One increment is one UpdateItem: `ADD` for the counters (atomic; concurrent writers of the same
 * key never lose a count, and the item is created on first use) and `SET` for the family, names and
 * timestamps. Those rows have no TTL attribute: usage totals have no retention (spec §14.4).
 *
 * An increment carries its flush id as a write id (./write-ids.ts): the update is conditional on
 * the row not holding it, so a retry of an attempt that was applied but whose answer was lost
 * fails that condition, which is then the success it was, and nothing is counted twice — unless
 * more than three other flushes of the same key landed between the lost answer and the retry.
 *
 * Day rows (the calls-per-day chart) share the table in partitions of their own: `scope`
 * `<tenant>#<project>#day`, `roleTool` `<YYYY-MM-DD>#<role>`, with `role`, `day`, `calls`,
 * `expiresAt` (epoch seconds, the table's TTL attribute; retention USAGE_DAY_RETENTION_DAYS) and
 * the same write ids.
 */

import type { ToolUsageRecord, ToolUsageStore, UsageDayIncrement, UsageDayRecord, UsageIncrement } from '../../usage/ports'
import { compareRecords, dayExpiry, usageDayScope, usageDaySortKey, usageScope, usageSortKey } from '../../usage/ports'
import type { DynamoClient, QueryInput } from './dynamo/client'
import type { TableSpec } from './provision'
import { storeError } from './store-errors'
import { newWriteId, writeIdClauses } from './write-ids'

/** ToolUsage table: `scope` (`<tenant>#<project>`) + `roleTool` (`<role>#<tool>`); only day rows carry `expiresAt`. */
export const toolUsageTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'scope', type: 'S' },
  rangeKey: { name: 'roleTool', type: 'S' },
  ttlAttribute: 'expiresAt',
})

export interface DynamoToolUsageStoreOptions {
  dynamo: DynamoClient
  tableName: string
}

/** The item as stored (the table's contract with sst.config.ts and anyone reading it directly). */
export interface ToolUsageItem {
  scope: string
  roleTool: string
  role: string
  tool: string
  family: string
  calls?: number
  discoveryHits?: number
  listedHits?: number
  codeCalls?: number
  refusals?: number
  lastCallAt?: string
  lastDiscoveryAt?: string
  lastListedAt?: string
  /** The last flush ids (lib/stores/aws/write-ids.ts). */
  writeId?: string
  writeId1?: string
  writeId2?: string
  writeId3?: string
}

export class DynamoToolUsageStore implements ToolUsageStore {
  private readonly db: DynamoClient
  private readonly table: string
  /** DynamoDB requests sent. */
  roundTrips = 0

  constructor(opts: DynamoToolUsageStoreOptions) {
    this.db = opts.dynamo
    this.table = opts.tableName
  }

  async increment(inc: UsageIncrement): Promise<void> {
    const names: Record<string, string> = {
      '#role': 'role',
      '#tool': 'tool',
      '#family': 'family',
      '#calls': 'calls',
      '#disc': 'discoveryHits',
      '#listed': 'listedHits',
    }
    const values: Record<string, unknown> = {
      ':role': inc.role,
      ':tool': inc.tool,
      ':family': inc.family,
      ':calls': inc.calls,
      ':disc': inc.discoveryHits,
      ':listed': inc.listedHits,
    }
    const sets = ['#role = :role', '#tool = :tool', '#family = :family']
    const stamp = (attr: keyof UsageIncrement, alias: string) => {
      const value = inc[attr]
      if (value === undefined) return
      names[`#${alias}`] = attr
      values[`:${alias}`] = value
      sets.push(`#${alias} = :${alias}`)
    }
    stamp('lastCallAt', 'lca')
    stamp('lastDiscoveryAt', 'lda')
    stamp('lastListedAt', 'lla')
    const adds = ['#calls :calls', '#disc :disc', '#listed :listed']
    // the counters added later ride in the same UpdateItem, only when they have something to add
    const add = (attr: 'codeCalls' | 'refusals', alias: string) => {
      const value = inc[attr]
      if (!value) return
      names[`#${alias}`] = attr
      values[`:${alias}`] = value
      adds.push(`#${alias} :${alias}`)
    }
    add('codeCalls', 'code')
    add('refusals', 'ref')
    const ids = writeIdClauses(names, values, inc.flushId ?? newWriteId())
    try {
      await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { scope: usageScope(inc.tenant, inc.project), roleTool: usageSortKey(inc.role, inc.tool) },
          // ADD of 0 still creates the attribute, so every row reads back with all three counters.
          UpdateExpression: `SET ${[...sets, ...ids.set].join(', ')} ADD ${adds.join(', ')}`,
          ConditionExpression: ids.condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      )
    } catch (e) {
      // the only condition is our flush id: the row holds it, so this flush was counted already
      if ((e as { name?: string } | null)?.name !== 'ConditionalCheckFailedException') throw e
    }
  }

  async list(tenant: string, project: string, role?: string): Promise<ToolUsageRecord[]> {
    const rows: ToolUsageRecord[] = []
    let startKey: Record<string, unknown> | undefined
    do {
      const input: QueryInput = {
        TableName: this.table,
        ConsistentRead: true,
        KeyConditionExpression: role === undefined ? '#s = :scope' : '#s = :scope AND begins_with(#k, :prefix)',
        ExpressionAttributeNames: { '#s': 'scope', ...(role === undefined ? {} : { '#k': 'roleTool' }) },
        ExpressionAttributeValues: { ':scope': usageScope(tenant, project), ...(role === undefined ? {} : { ':prefix': `${role}#` }) },
        ExclusiveStartKey: startKey,
      }
      const page = await this.send(() => this.db.query<ToolUsageItem>(input))
      for (const item of page.Items) {
        // begins_with('<role>#') also matches a role that itself starts with '<role>#'; the plain attribute decides.
        if (role !== undefined && item.role !== role) continue
        rows.push(recordOf(item))
      }
      startKey = page.LastEvaluatedKey
    } while (startKey)
    return rows.sort(compareRecords)
  }

  async incrementDay(inc: UsageDayIncrement): Promise<void> {
    const names: Record<string, string> = { '#role': 'role', '#day': 'day', '#exp': 'expiresAt', '#calls': 'calls' }
    const values: Record<string, unknown> = { ':role': inc.role, ':day': inc.day, ':exp': dayExpiry(inc.day), ':calls': inc.calls }
    const ids = writeIdClauses(names, values, inc.flushId ?? newWriteId())
    try {
      await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { scope: usageDayScope(inc.tenant, inc.project), roleTool: usageDaySortKey(inc.day, inc.role) },
          UpdateExpression: `SET ${['#role = :role', '#day = :day', '#exp = :exp', ...ids.set].join(', ')} ADD #calls :calls`,
          ConditionExpression: ids.condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      )
    } catch (e) {
      // as for increment: the row holds this flush's id, so it was counted already
      if ((e as { name?: string } | null)?.name !== 'ConditionalCheckFailedException') throw e
    }
  }

  async listDays(tenant: string, project: string, from: string, to: string): Promise<UsageDayRecord[]> {
    const rows: UsageDayRecord[] = []
    let startKey: Record<string, unknown> | undefined
    do {
      const page = await this.send(() =>
        this.db.query<{ role: string; day: string; calls?: number }>({
          TableName: this.table,
          ConsistentRead: true,
          // '$' sorts right after '#': every `<to>#<role>` is below `<to>$`.
          KeyConditionExpression: '#s = :scope AND #k BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#s': 'scope', '#k': 'roleTool' },
          ExpressionAttributeValues: { ':scope': usageDayScope(tenant, project), ':from': `${from}#`, ':to': `${to}$` },
          ExclusiveStartKey: startKey,
        }),
      )
      for (const item of page.Items) rows.push({ role: item.role, day: item.day, calls: Number(item.calls ?? 0) })
      startKey = page.LastEvaluatedKey
    } while (startKey)
    return rows
  }

  /** The stored item as it is (tests prove the layout other readers rely on). */
  async rawItem(key: { tenant: string; project: string; role: string; tool: string }): Promise<ToolUsageItem | undefined> {
    const out = await this.send(() =>
      this.db.getItem<ToolUsageItem>({
        TableName: this.table,
        ConsistentRead: true,
        Key: { scope: usageScope(key.tenant, key.project), roleTool: usageSortKey(key.role, key.tool) },
      }),
    )
    return out.Item
  }

  private async send<T>(request: () => Promise<T>): Promise<T> {
    this.roundTrips++
    try {
      return await request()
    } catch (e) {
      throw storeError(e, 'the tool usage table')
    }
  }
}

function recordOf(item: ToolUsageItem): ToolUsageRecord {
  return {
    role: item.role,
    tool: item.tool,
    family: item.family,
    calls: Number(item.calls ?? 0),
    discoveryHits: Number(item.discoveryHits ?? 0),
    listedHits: Number(item.listedHits ?? 0),
    ...(item.codeCalls ? { codeCalls: Number(item.codeCalls) } : {}),
    ...(item.refusals ? { refusals: Number(item.refusals) } : {}),
    ...(item.lastCallAt !== undefined ? { lastCallAt: item.lastCallAt } : {}),
    ...(item.lastDiscoveryAt !== undefined ? { lastDiscoveryAt: item.lastDiscoveryAt } : {}),
    ...(item.lastListedAt !== undefined ? { lastListedAt: item.lastListedAt } : {}),
  }
}
