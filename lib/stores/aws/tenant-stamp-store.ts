/**
 * Tenant stamps (lib/documents/stamped-cache.ts) in the documents table: one item per tenant,
 * `scope` = the tenant id alone (every document's scope is `<tenant>#<project>`, so no document
 * or listing ever meets it), `path` = `~stamp`. Attributes: `generation` (N) and one `w_<write id>`
 * (N, epoch ms) per write in progress — top-level attributes, so `begin` needs no map to exist first.
 *
 * Every request of a tenant reads this item (strongly consistent, 1 RRU): it is the tenant's hot
 * key, at DynamoDB's 3,000 reads a second per item (docs/operations/scale-and-cost.md).
 */
import type { TenantStamp, TenantStampStore } from '../../documents/stamped-cache'
import type { DynamoClient } from './dynamo/client'
import type { ReadBatcher } from './dynamo/read-batcher'
import { storeError } from './store-errors'

export const STAMP_PATH = '~stamp'
const WRITE_PREFIX = 'w_'

interface StampItem {
  generation?: number
  [write: string]: unknown
}

export class DynamoTenantStampStore implements TenantStampStore {
  private readonly db: DynamoClient
  private readonly table: string
  private readonly reads?: ReadBatcher

  /** `reads`: the stamp read goes out with the process read of the same turn as one BatchGetItem. */
  constructor(opts: { dynamo: DynamoClient; tableName: string; reads?: ReadBatcher }) {
    this.db = opts.dynamo
    this.table = opts.tableName
    this.reads = opts.reads
  }

  async read(tenant: string): Promise<TenantStamp> {
    const Key = { scope: tenant, path: STAMP_PATH }
    const reads = this.reads
    const item = await this.send(async () =>
      reads
        ? reads.getItem<StampItem>(this.table, Key)
        : (await this.db.getItem<StampItem>({ TableName: this.table, Key, ConsistentRead: true })).Item,
    )
    return stampOf(item)
  }

  async begin(tenant: string, writeId: string, now: number): Promise<TenantStamp> {
    const out = await this.send(() =>
      this.db.updateItem<StampItem>({
        TableName: this.table,
        Key: { scope: tenant, path: STAMP_PATH },
        UpdateExpression: 'SET #w = :now ADD #g :one',
        ExpressionAttributeNames: { '#w': `${WRITE_PREFIX}${writeId}`, '#g': 'generation' },
        ExpressionAttributeValues: { ':now': now, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    )
    return stampOf(out.Attributes)
  }

  async end(tenant: string, writeIds: string[]): Promise<void> {
    const names: Record<string, string> = { '#g': 'generation' }
    writeIds.forEach((id, i) => {
      names[`#w${i}`] = `${WRITE_PREFIX}${id}`
    })
    await this.send(() =>
      this.db.updateItem({
        TableName: this.table,
        Key: { scope: tenant, path: STAMP_PATH },
        UpdateExpression: `ADD #g :one${writeIds.length ? ` REMOVE ${writeIds.map((_, i) => `#w${i}`).join(', ')}` : ''}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':one': 1 },
      }),
    )
  }

  private async send<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request()
    } catch (e) {
      throw storeError(e, 'the documents table')
    }
  }
}

function stampOf(item: StampItem | undefined): TenantStamp {
  const writing: Record<string, number> = {}
  for (const [k, v] of Object.entries(item ?? {})) if (k.startsWith(WRITE_PREFIX)) writing[k.slice(WRITE_PREFIX.length)] = Number(v)
  return { generation: Number(item?.generation ?? 0), writing }
}
