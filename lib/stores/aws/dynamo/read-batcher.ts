/**
 * Strongly consistent whole-item reads issued in the same turn of the event loop, sent as one
 * BatchGetItem (several tables at once) instead of one GetItem each. A tool call reads its
 * process (processes table) and its tenant's stamp (documents table, ../tenant-stamp-store.ts)
 * side by side: one request on the wire instead of two, and one round trip of latency.
 *
 * A lone read goes out as the GetItem it would have been. Keys BatchGetItem leaves unprocessed
 * (throttling) are asked again with backoff, as the document store does for its own batches.
 */
import { ServerToolsError } from '../../../errors'
import type { Item } from './attribute-values'
import type { DynamoClient } from './client'

/** BatchGetItem takes at most 100 keys. */
const BATCH_LIMIT = 100
const UNPROCESSED_RETRIES = 8

interface Pending {
  table: string
  key: Item
  resolve: (item: Item | undefined) => void
  reject: (e: unknown) => void
}

export class ReadBatcher {
  private queue: Pending[] = []
  private scheduled = false
  /** Requests sent (GetItem or BatchGetItem), for tests and benches. */
  requests = 0

  constructor(
    private readonly db: DynamoClient,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  /** The item at `key` (all its attributes, strongly consistent), read with whatever else is asked in this turn. */
  getItem<T extends object = Item>(table: string, key: Item): Promise<T | undefined> {
    return new Promise<Item | undefined>((resolve, reject) => {
      this.queue.push({ table, key, resolve, reject })
      if (this.scheduled) return
      this.scheduled = true
      // setImmediate, not a microtask: callers reach this through a few awaits each, and every
      // one of them must have queued its read before the batch goes
      setImmediate(() => this.flush())
    }) as Promise<T | undefined>
  }

  private flush() {
    const batch = this.queue
    this.queue = []
    this.scheduled = false
    for (let i = 0; i < batch.length; i += BATCH_LIMIT) void this.send(batch.slice(i, i + BATCH_LIMIT))
  }

  private async send(batch: Pending[]) {
    try {
      if (batch.length === 1) {
        const [one] = batch
        this.requests++
        one.resolve((await this.db.getItem({ TableName: one.table, Key: one.key, ConsistentRead: true })).Item)
        return
      }
      const waiting = new Map<string, Pending[]>()
      for (const p of batch) {
        const id = identity(p.table, p.key, Object.keys(p.key))
        waiting.set(id, [...(waiting.get(id) ?? []), p])
      }
      const keyNames = new Map(batch.map((p) => [p.table, Object.keys(p.key)]))
      let pending: Record<string, Item[]> = {}
      for (const [, [p]] of waiting) (pending[p.table] ??= []).push(p.key)
      for (let retry = 0; Object.keys(pending).length > 0; retry++) {
        if (retry > UNPROCESSED_RETRIES)
          throw new ServerToolsError('THROTTLED', 'DynamoDB left keys of a batched read unprocessed; retry shortly')
        if (retry > 0) await this.sleep(Math.min(25 * 2 ** retry, 1_000) * (0.5 + Math.random() / 2))
        this.requests++
        const out = await this.db.batchGetItem({
          RequestItems: Object.fromEntries(Object.entries(pending).map(([t, keys]) => [t, { Keys: keys, ConsistentRead: true }])),
        })
        for (const [table, items] of Object.entries(out.Responses)) {
          for (const item of items) {
            const id = identity(table, item, keyNames.get(table) ?? [])
            for (const p of waiting.get(id) ?? []) p.resolve(item)
            waiting.delete(id)
          }
        }
        pending = Object.fromEntries(Object.entries(out.UnprocessedKeys).map(([t, r]) => [t, r.Keys]))
      }
      // asked, processed, not returned: absent
      for (const ps of waiting.values()) for (const p of ps) p.resolve(undefined)
    } catch (e) {
      for (const p of batch) p.reject(e)
    }
  }
}

const identity = (table: string, item: Item, names: string[]) =>
  JSON.stringify([table, ...names.sort().map((n) => [n, (item as Record<string, unknown>)[n]])])
