/**
 * ToolUsageStore on DynamoDB. Item: `scope` (hash, `<tenant>#<project>`) + `roleTool` (range,
 * `<role>#<tool>`), with `role`, `tool` and `family` as plain attributes, the counters `calls`,
 * `discoveryHits`, `listedHits` (N), `codeCalls` and `refusals` (N, present once nonzero), the
 * instants `lastCallAt`, `lastDiscoveryAt`, `lastListedAt` (ISO-8601 S), and the calls of the
 * latest UTC day the tool was called: `day` (S) and `dayCalls` (N).
 *
 * One increment is one UpdateItem: `ADD` for the counters (atomic; concurrent writers of the same
 * key never lose a count, and the item is created on first use) and `SET` for the family, names and
 * timestamps. Those rows have no TTL attribute: usage totals have no retention (spec §14.4).
 *
 * Calls per (role, day) ride in the same UpdateItem: it adds to `dayCalls` on condition that `day`
 * is the increment's day, so a Lambda invocation's flush is one request per (role, tool), not one
 * more for the day. Closed days live in day rows: `scope` `<tenant>#<project>#day`, `roleTool`
 * `<YYYY-MM-DD>#<role>`, with `role`, `day`, `calls`, `expiresAt` (epoch seconds, the table's TTL
 * attribute; retention USAGE_DAY_RETENTION_DAYS), `moved` (SS) and write ids. The first increment
 * of a new day finds the condition false and **moves** the closed day, in three steps that each
 * leave a state every reader and writer can finish:
 *   1. the tool row: `day`/`dayCalls` become the new day's, the closed ones `movedDay`/`movedCalls`
 *      (conditional on the row still holding that closed day and count, and on no move pending);
 *   2. the day row of `movedDay`: ADD `calls`, and the tool to `moved`, unless `moved` holds it — so
 *      a move repeated by anyone (a retry, another container, a later writer) is added once;
 *   3. the tool row: REMOVE `movedDay`/`movedCalls`.
 * A writer that stops after step 1 leaves the move pending: the next increment that sees it
 * finishes it, and `listDays` counts it meanwhile (unless the day row's `moved` says step 2 landed).
 * Calls of a day the row has already moved past (a container flushing yesterday's calls after
 * another rolled the row) go straight to their day row with the flush's write id, then to the
 * totals.
 *
 * Write ids (./write-ids.ts) make a retry of an applied attempt whose answer was lost a no-op: the
 * tool row's updates are conditional on the row not holding the flush id, and a refusal is looked
 * at (the item DynamoDB returns with it, or one consistent read) to tell "already applied" from
 * "the day changed" — unless more than three other flushes of the same key landed between the lost
 * answer and the retry.
 */
import type { ToolUsageRecord, ToolUsageStore, UsageDayRecord, UsageIncrement } from '../../usage/ports'
import { compareRecords, dayExpiry, usageDayScope, usageDaySortKey, usageScope, usageSortKey } from '../../usage/ports'
import type { DynamoClient, DynamoError, QueryInput, UpdateInput } from './dynamo/client'
import type { TableSpec } from './provision'
import { errorName, storeError } from './store-errors'
import { newWriteId, writeIdClauses, writesSince } from './write-ids'

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
  /** The latest UTC day this tool was called, and its calls that day (not yet in a day row). */
  day?: string
  dayCalls?: number
  /** A closed day whose move to its day row is under way (step 1 done, step 3 not yet). */
  movedDay?: string
  movedCalls?: number
  /** The last flush ids (lib/stores/aws/write-ids.ts). */
  writeId?: string
  writeId1?: string
  writeId2?: string
  writeId3?: string
}

/** A day row as stored. */
export interface UsageDayItem {
  scope: string
  roleTool: string
  role: string
  day: string
  calls?: number
  expiresAt: number
  /** The tools whose closed day was moved into this row (each is added once). */
  moved?: Set<string>
  writeId?: string
  writeId1?: string
  writeId2?: string
  writeId3?: string
}

/** What an increment does with the row's day count. */
type DayStep =
  /** No calls: the day count is not touched. */
  | { kind: 'none' }
  /** Add the calls to `dayCalls` if the row's day is the increment's (or it has none yet). */
  | { kind: 'same' }
  /** Step 1 of a move: close `old` (holding `oldCalls`) and start the increment's day with its calls. */
  | { kind: 'roll'; old: string; oldCalls: number }

/** Rounds against other writers of the same row before an increment gives up (the recorder retries it). */
const WRITE_ROUNDS = 8

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
    const flushId = inc.flushId ?? newWriteId()
    if (!(inc.calls > 0)) {
      await this.writeTool(inc, flushId, { kind: 'none' })
      return
    }
    for (let round = 0; round < WRITE_ROUNDS; round++) {
      const seen = await this.writeTool(inc, flushId, { kind: 'same' })
      if (!seen) return
      if (seen.movedDay !== undefined) await this.finishMove(inc, seen.movedDay, Number(seen.movedCalls ?? 0))
      // an earlier attempt of this flush landed and its answer was lost
      if (writesSince(seen, flushId) !== undefined) return
      // the row moved on to this day between the refusal and the read: the plain add fits now
      if (seen.day === undefined || seen.day === inc.day) continue
      if (seen.day > inc.day) {
        // a day the row has closed: its calls go to the day row directly; day row first, so a retry of
        // the whole flush finds the totals not yet written and comes back here (the day row keeps the id)
        await this.addLateCalls(inc, flushId)
        await this.writeTool(inc, flushId, { kind: 'none' })
        return
      }
      const oldCalls = Number(seen.dayCalls ?? 0)
      if (await this.writeTool(inc, flushId, { kind: 'roll', old: seen.day, oldCalls })) continue
      try {
        await this.finishMove(inc, seen.day, oldCalls)
      } catch {
        // this increment is stored, and so is the closed day (pending in the tool row): readers
        // count it there and the next increment of the key finishes the move, so nothing is lost
      }
      return
    }
    throw new Error(`usage row ${inc.role}#${inc.tool} changed under ${WRITE_ROUNDS} writes in a row`)
  }

  /**
   * One UpdateItem of the tool row; undefined when applied, else the row as it was when the
   * condition failed (our flush id in it when an earlier attempt landed).
   */
  private async writeTool(inc: UsageIncrement, flushId: string, step: DayStep): Promise<ToolUsageItem | undefined> {
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
    const ids = writeIdClauses(names, values, flushId)
    const conditions = [ids.condition]
    if (step.kind !== 'none') {
      names['#day'] = 'day'
      names['#dayCalls'] = 'dayCalls'
      values[':day'] = inc.day
    }
    if (step.kind === 'same') {
      sets.push('#day = :day')
      adds.push('#dayCalls :calls')
      conditions.push('(attribute_not_exists(#day) OR #day = :day)')
    } else if (step.kind === 'roll') {
      names['#movedDay'] = 'movedDay'
      names['#movedCalls'] = 'movedCalls'
      values[':old'] = step.old
      values[':oldCalls'] = step.oldCalls
      sets.push('#movedDay = :old', '#movedCalls = :oldCalls', '#day = :day', '#dayCalls = :calls')
      conditions.push('#day = :old', '#dayCalls = :oldCalls', 'attribute_not_exists(#movedDay)')
    }
    const key = { scope: usageScope(inc.tenant, inc.project), roleTool: usageSortKey(inc.role, inc.tool) }
    const input: UpdateInput = {
      TableName: this.table,
      Key: key,
      // ADD of 0 still creates the attribute, so every row reads back with all three counters.
      UpdateExpression: `SET ${[...sets, ...ids.set].join(', ')} ADD ${adds.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      // DynamoDB answers a refusal with the row; an emulator that does not costs one read more
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }
    try {
      await this.send(() => this.db.updateItem(input))
      return undefined
    } catch (e) {
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
      const item =
        ((e as DynamoError).Item as ToolUsageItem | undefined) ??
        (await this.send(() => this.db.getItem<ToolUsageItem>({ TableName: this.table, Key: key, ConsistentRead: true }))).Item
      // the refusal with only our id's condition failing is the success it was
      return item ?? { ...key, role: inc.role, tool: inc.tool, family: inc.family }
    }
  }

  /** Steps 2 and 3 of a move; each is a no-op when someone has done it already. */
  private async finishMove(key: { tenant: string; project: string; role: string; tool: string }, day: string, calls: number) {
    try {
      await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { scope: usageDayScope(key.tenant, key.project), roleTool: usageDaySortKey(day, key.role) },
          UpdateExpression: 'SET #role = :role, #day = :day, #exp = :exp ADD #calls :calls, #moved :tools',
          ConditionExpression: 'NOT contains(#moved, :tool)',
          ExpressionAttributeNames: { '#role': 'role', '#day': 'day', '#exp': 'expiresAt', '#calls': 'calls', '#moved': 'moved' },
          ExpressionAttributeValues: {
            ':role': key.role,
            ':day': day,
            ':exp': dayExpiry(day),
            ':calls': calls,
            ':tools': new Set([key.tool]),
            ':tool': key.tool,
          },
        }),
      )
    } catch (e) {
      // the day row names this tool: its move was added already
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
    }
    try {
      await this.send(() =>
        this.db.updateItem({
          TableName: this.table,
          Key: { scope: usageScope(key.tenant, key.project), roleTool: usageSortKey(key.role, key.tool) },
          UpdateExpression: 'REMOVE #movedDay, #movedCalls',
          ConditionExpression: '#movedDay = :day',
          ExpressionAttributeNames: { '#movedDay': 'movedDay', '#movedCalls': 'movedCalls' },
          ExpressionAttributeValues: { ':day': day },
        }),
      )
    } catch (e) {
      // someone else finished this move
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
    }
  }

  /** Calls of a day the tool row has closed, added to that day row once per flush id. */
  private async addLateCalls(inc: UsageIncrement, flushId: string) {
    const names: Record<string, string> = { '#role': 'role', '#day': 'day', '#exp': 'expiresAt', '#calls': 'calls' }
    const values: Record<string, unknown> = { ':role': inc.role, ':day': inc.day, ':exp': dayExpiry(inc.day), ':calls': inc.calls }
    const ids = writeIdClauses(names, values, flushId)
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
      // the day row holds this flush's id: counted already
      if (errorName(e) !== 'ConditionalCheckFailedException') throw e
    }
  }

  async list(tenant: string, project: string, role?: string): Promise<ToolUsageRecord[]> {
    const rows: ToolUsageRecord[] = []
    for (const item of await this.toolItems(tenant, project, role)) rows.push(recordOf(item))
    return rows.sort(compareRecords)
  }

  /** A project's tool rows (optionally one role's). */
  private async toolItems(tenant: string, project: string, role?: string): Promise<ToolUsageItem[]> {
    const items: ToolUsageItem[] = []
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
      // begins_with('<role>#') also matches a role that itself starts with '<role>#'; the plain attribute decides.
      for (const item of page.Items) if (role === undefined || item.role === role) items.push(item)
      startKey = page.LastEvaluatedKey
    } while (startKey)
    return items
  }

  /**
   * The day rows of the window, plus what the tool rows still hold: each tool's latest day, and a
   * closed day whose move is pending (unless its day row already names the tool). A read that
   * races a move itself may see that one tool's closed day twice or not at all; the next is exact.
   */
  async listDays(tenant: string, project: string, from: string, to: string): Promise<UsageDayRecord[]> {
    const [dayItems, toolItems] = await Promise.all([this.dayItems(tenant, project, from, to), this.toolItems(tenant, project)])
    const out = new Map<string, UsageDayRecord>()
    const moved = new Map<string, ReadonlySet<string>>()
    const addTo = (role: string, day: string, calls: number) => {
      const k = usageDaySortKey(day, role)
      const row = out.get(k)
      if (row) row.calls += calls
      else out.set(k, { role, day, calls })
    }
    for (const item of dayItems) {
      addTo(item.role, item.day, Number(item.calls ?? 0))
      if (item.moved) moved.set(usageDaySortKey(item.day, item.role), item.moved)
    }
    const inWindow = (day: string | undefined): day is string => day !== undefined && day >= from && day <= to
    for (const t of toolItems) {
      if (inWindow(t.day) && Number(t.dayCalls ?? 0) > 0) addTo(t.role, t.day, Number(t.dayCalls))
      if (inWindow(t.movedDay) && !moved.get(usageDaySortKey(t.movedDay, t.role))?.has(t.tool))
        addTo(t.role, t.movedDay, Number(t.movedCalls ?? 0))
    }
    return [...out.values()]
      .filter((r) => r.calls > 0)
      .sort((a, b) => (a.day !== b.day ? (a.day < b.day ? -1 : 1) : a.role < b.role ? -1 : a.role > b.role ? 1 : 0))
  }

  private async dayItems(tenant: string, project: string, from: string, to: string): Promise<UsageDayItem[]> {
    const items: UsageDayItem[] = []
    let startKey: Record<string, unknown> | undefined
    do {
      const page = await this.send(() =>
        this.db.query<UsageDayItem>({
          TableName: this.table,
          ConsistentRead: true,
          // '$' sorts right after '#': every `<to>#<role>` is below `<to>$`.
          KeyConditionExpression: '#s = :scope AND #k BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#s': 'scope', '#k': 'roleTool' },
          ExpressionAttributeValues: { ':scope': usageDayScope(tenant, project), ':from': `${from}#`, ':to': `${to}$` },
          ExclusiveStartKey: startKey,
        }),
      )
      items.push(...page.Items)
      startKey = page.LastEvaluatedKey
    } while (startKey)
    return items
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

  /** A stored day row as it is. */
  async rawDayItem(tenant: string, project: string, role: string, day: string): Promise<UsageDayItem | undefined> {
    const out = await this.send(() =>
      this.db.getItem<UsageDayItem>({
        TableName: this.table,
        ConsistentRead: true,
        Key: { scope: usageDayScope(tenant, project), roleTool: usageDaySortKey(day, role) },
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
