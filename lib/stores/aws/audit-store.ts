/**
 * AuditStore on DynamoDB. Item: `tenant` (hash) + `id` (range, `<ISO time>#<random>`, so a time
 * range is a key condition and newest-first is a backward query), the entry's fields flat
 * (`actorSubject`, `actorIssuer`), and `expiresAt` (epoch seconds) as the table's TTL attribute.
 *
 * Append-only: an entry is written with PutItem on the condition that its key is new, and this
 * adapter sends nothing else but Query. The deployment's IAM policy on the table grants only
 * those two actions (sst.config.ts, checked by test/deploy/sst-config.test.ts).
 *
 * TTL deletes expired items up to days late, and emulators (dynalite) never: reads filter on
 * `expiresAt` themselves.
 */
import type { AuditEntry, AuditFilter, AuditPage, AuditStore } from '../../audit/ports'
import { decodeCursor, encodeCursor, MAX_AUDIT_BATCH } from '../../audit/ports'
import { ServerToolsError } from '../../errors'
import type { DynamoClient, QueryInput } from './dynamo/client'
import type { TableSpec } from './provision'
import { mayHaveLanded } from './write-ids'

/** Audit table: `tenant` + `id`, TTL on `expiresAt`. */
export const auditTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'tenant', type: 'S' },
  rangeKey: { name: 'id', type: 'S' },
  ttlAttribute: 'expiresAt',
})

export interface DynamoAuditStoreOptions {
  dynamo: DynamoClient
  tableName: string
  /**
   * Several entries to one BatchWriteItem (`appendMany`), for `npm start`'s embedded store only:
   * there the store's work runs on the service's own cores (a conditional PutItem per entry cost
   * the process 0.6–1.9 ms, 25 to a batch 0.2–0.4 ms an entry), and no IAM policy exists to keep
   * append-only. On AWS the table's policy grants PutItem and Query only (BatchWriteItem could
   * also delete), so this stays off and every entry is one conditional PutItem.
   */
  batchWrites?: boolean
}

/** The item as stored. */
export interface AuditItem extends Omit<AuditEntry, 'actor'> {
  actorSubject?: string
  actorIssuer?: string
}

/** An entry as its item: the actor's fields flat, undefined fields left out. */
function itemOf(entry: AuditEntry): Record<string, unknown> {
  const { actor, ...rest } = entry
  const item: Record<string, unknown> = { ...rest, actorSubject: actor.subject, actorIssuer: actor.issuer }
  for (const k of Object.keys(item)) if (item[k] === undefined) delete item[k]
  return item
}

/** The put's condition: no entry with this key yet (an item always has its key, so `id` absent = no item). */
const NEW_ID = { id: { Exists: false } } as const

/** Queries one page may send before it answers with what it has (filters that match little cost rounds, not unbounded work). */
const MAX_ROUNDS = 8

export class DynamoAuditStore implements AuditStore {
  private readonly db: DynamoClient
  private readonly table: string
  /** DynamoDB requests sent (the bench counts them). */
  roundTrips = 0

  readonly appendMany?: (entries: AuditEntry[]) => Promise<AuditEntry[]>

  constructor(opts: DynamoAuditStoreOptions) {
    this.db = opts.dynamo
    this.table = opts.tableName
    if (opts.batchWrites) this.appendMany = (entries) => this.putBatch(entries)
  }

  private async putBatch(entries: AuditEntry[]): Promise<AuditEntry[]> {
    if (entries.length > MAX_AUDIT_BATCH) throw new Error(`at most ${MAX_AUDIT_BATCH} audit entries a batch, got ${entries.length}`)
    this.roundTrips++
    const { UnprocessedItems } = await this.db.batchPutItems({ RequestItems: { [this.table]: entries.map(itemOf) } })
    const left = new Set((UnprocessedItems[this.table] ?? []).map((i) => `${i.tenant}\n${i.id}`))
    return left.size ? entries.filter((e) => left.has(`${e.tenant}\n${e.id}`)) : []
  }

  async append(entry: AuditEntry): Promise<void> {
    const item = itemOf(entry)
    this.roundTrips++
    try {
      // The condition `attribute_not_exists(id)` in DynamoDB's conditional-put form that needs no
      // expression: the same check, answer and cost on DynamoDB, while the embedded store
      // (dynalite) parses an expression with a PEG grammar for every entry — a quarter of an
      // audit put's CPU there, paid for each refusal of a denial flood (docs/decisions.md, h12n5).
      await this.db.putItem({ TableName: this.table, Item: item, Expected: NEW_ID })
    } catch (e) {
      if ((e as { name?: string }).name === 'ConditionalCheckFailedException') {
        // an entry id is written by one writer only: after an attempt that may have landed (its
        // answer lost), the entry that is there is ours (./write-ids.ts, the same rule)
        if (mayHaveLanded(e)) return
        throw new ServerToolsError('ALREADY_EXISTS', `audit entry ${entry.id} exists`, undefined, { cause: e })
      }
      throw e
    }
  }

  async query(tenant: string, filter: AuditFilter, page: { limit: number; cursor?: string }, nowSeconds: number): Promise<AuditPage> {
    const names: Record<string, string> = { '#t': 'tenant', '#id': 'id', '#exp': 'expiresAt' }
    const values: Record<string, unknown> = { ':t': tenant, ':now': nowSeconds, ':lo': filter.from ?? '0', ':hi': `${filter.to ?? '9'}#~` }
    const conditions = ['#exp > :now']
    if (filter.actor !== undefined) {
      names['#a'] = 'actorSubject'
      values[':a'] = filter.actor
      conditions.push('#a = :a')
    }
    const prefixOrEqual = (field: string, alias: string, value: string | undefined, prefix: boolean) => {
      if (value === undefined) return
      names[`#${alias}`] = field
      values[`:${alias}`] = value
      conditions.push(prefix ? `begins_with(#${alias}, :${alias})` : `#${alias} = :${alias}`)
    }
    prefixOrEqual('action', 'act', filter.action, filter.action?.endsWith('.') ?? false)
    prefixOrEqual('target', 'tgt', filter.target, filter.target?.endsWith('/') ?? false)

    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
    let startKey: Record<string, unknown> | undefined = after ? { tenant, id: after } : undefined
    const entries: AuditEntry[] = []
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const input: QueryInput = {
        TableName: this.table,
        KeyConditionExpression: '#t = :t AND #id BETWEEN :lo AND :hi',
        FilterExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: page.limit - entries.length,
        ExclusiveStartKey: startKey,
      }
      this.roundTrips++
      const out = await this.db.query<AuditItem>(input)
      for (const item of out.Items) entries.push(entryOf(item))
      startKey = out.LastEvaluatedKey
      if (!startKey || entries.length >= page.limit) break
    }
    const last = startKey ? String(startKey.id) : undefined
    return { entries, ...(last ? { next: encodeCursor(last) } : {}) }
  }
}

function entryOf(item: AuditItem): AuditEntry {
  const { actorSubject, actorIssuer, ...rest } = item
  return {
    ...rest,
    actor: {
      ...(actorSubject !== undefined ? { subject: actorSubject } : {}),
      ...(actorIssuer !== undefined ? { issuer: actorIssuer } : {}),
    },
  }
}
