/**
 * Tenant stamps (lib/documents/stamped-cache.ts) in the documents table: one item per tenant,
 * `scope` = the tenant id alone (every document's scope is `<tenant>#<project>`, so no document
 * or listing ever meets it), `path` = `~stamp`. Attributes: `generation` (N) and one `w_<write id>`
 * (N, epoch ms) per write in progress — top-level attributes, so `begin` needs no map to exist first.
 *
 * Every request of a tenant reads a stamp (strongly consistent, 1 RRU), and one item serves at
 * most 3,000 such reads a second. So a tenant's stamp is kept in STAMP_SHARDS copies (`~stamp`,
 * `~stamp#1`, …): a writer marks every copy (begin on all before the document, end on all after),
 * a container reads only the copy it picked at cold start — so the generations it compares all
 * come from one copy — and the containers of a busy tenant spread over the copies: 3,000 ×
 * STAMP_SHARDS requests a second per tenant (docs/operations/scale-and-cost.md).
 */
import type { TenantStamp, TenantStampStore } from '../../documents/stamped-cache'
import type { DynamoClient } from './dynamo/client'
import type { ReadBatcher } from './dynamo/read-batcher'
import { storeError } from './store-errors'

export const STAMP_PATH = '~stamp'
/** Copies of each tenant's stamp: a document write costs 2 UpdateItems per copy, a read one GetItem of one copy. */
export const STAMP_SHARDS = 4
const WRITE_PREFIX = 'w_'

interface StampItem {
  generation?: number
  [write: string]: unknown
}

export class DynamoTenantStampStore implements TenantStampStore {
  private readonly db: DynamoClient
  private readonly table: string
  private readonly reads?: ReadBatcher

  private readonly shards: number
  /** The copy this container reads. */
  private readonly shard: number

  /** `reads`: the stamp read goes out with the process read of the same turn as one BatchGetItem. */
  constructor(opts: { dynamo: DynamoClient; tableName: string; reads?: ReadBatcher; shards?: number; shard?: number }) {
    this.db = opts.dynamo
    this.table = opts.tableName
    this.reads = opts.reads
    this.shards = Math.max(1, opts.shards ?? STAMP_SHARDS)
    this.shard = (opts.shard ?? Math.floor(Math.random() * this.shards)) % this.shards
  }

  async read(tenant: string): Promise<TenantStamp> {
    const Key = { scope: tenant, path: stampPath(this.shard) }
    const reads = this.reads
    const item = await this.send(async () =>
      reads
        ? reads.getItem<StampItem>(this.table, Key)
        : (await this.db.getItem<StampItem>({ TableName: this.table, Key, ConsistentRead: true })).Item,
    )
    return stampOf(item)
  }

  async begin(tenant: string, writeId: string, now: number): Promise<TenantStamp> {
    const marked = await Promise.allSettled(Array.from({ length: this.shards }, (_, i) => this.beginOne(tenant, i, writeId, now)))
    const failed = marked.find((m) => m.status === 'rejected')
    if (failed) {
      // the copies that were marked must not stay so (their readers would read uncached until the horizon)
      await this.end(tenant, [writeId]).catch(() => undefined)
      throw failed.reason
    }
    // every copy lists the same writes but for abandoned ones; the first copy's list stands for all
    return (marked[0] as PromiseFulfilledResult<TenantStamp>).value
  }

  private async beginOne(tenant: string, shard: number, writeId: string, now: number): Promise<TenantStamp> {
    const out = await this.send(() =>
      this.db.updateItem<StampItem>({
        TableName: this.table,
        Key: { scope: tenant, path: stampPath(shard) },
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
    await Promise.all(
      Array.from({ length: this.shards }, (_, shard) =>
        this.send(() =>
          this.db.updateItem({
            TableName: this.table,
            Key: { scope: tenant, path: stampPath(shard) },
            UpdateExpression: `ADD #g :one${writeIds.length ? ` REMOVE ${writeIds.map((_, i) => `#w${i}`).join(', ')}` : ''}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: { ':one': 1 },
          }),
        ),
      ),
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

const stampPath = (shard: number) => (shard === 0 ? STAMP_PATH : `${STAMP_PATH}#${shard}`)

function stampOf(item: StampItem | undefined): TenantStamp {
  const writing: Record<string, number> = {}
  for (const [k, v] of Object.entries(item ?? {})) if (k.startsWith(WRITE_PREFIX)) writing[k.slice(WRITE_PREFIX.length)] = Number(v)
  return { generation: Number(item?.generation ?? 0), writing }
}
