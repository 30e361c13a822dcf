/**
 * DocumentStore on DynamoDB (items) + a BlobStore (S3, bodies over INLINE_BODY_LIMIT).
 *
 * Item: `scope` (hash) + `path` (range), `version` (N, optimistic lock), `sha256`, `bytes`, the audit
 * fields, and either `body` (inline) or `bodyKey` (blob). Promises kept here:
 * - A lost update is impossible: every write is one UpdateItem whose ConditionExpression pins the
 *   version it replaces (or `attribute_not_exists` for create-only); an unconditional write lets
 *   DynamoDB increment the version atomically. `createdAt`/`createdBy` survive via `if_not_exists`.
 * - Every write and delete carries a write id (./write-ids.ts): a retry of an attempt DynamoDB
 *   applied but whose answer was lost fails its condition, and the store, finding its id in the
 *   item, answers what the first attempt would have (its version, `created` as it was). A
 *   tombstone holds its delete's id, so a retried delete is told from someone else's.
 * - A large body is written to the blob store BEFORE the item, under a key holding the body hash
 *   and a random nonce, so an item never points at missing or foreign bytes. The blob is deleted
 *   on the request path only when the write surely did not land (its condition failed on the
 *   first attempt, or no attempt reached the table); a successful write or a delete removes the
 *   blob it replaced after the item changed. Blobs nothing points at any more (an answer lost
 *   with the replaced key in it, a crash between the two writes) are left to the orphan sweep
 *   (./blob-sweep.ts).
 * - Reads are strongly consistent; a cascade lookup is one BatchGetItem, a listing one Query
 *   (plus pages), and `roundTrips` counts every DynamoDB request so tests and benches can prove it.
 */

import { randomBytes } from 'node:crypto'
import type {
  BlobStore,
  DeleteOptions,
  DocumentKey,
  DocumentStore,
  HeldBody,
  NewDocument,
  PutOptions,
  SizedDocument,
  StoredDocument,
} from '../../documents/ports'
import { carriedWithin, checkedSize, docId, INLINE_BODY_LIMIT } from '../../documents/ports'
import { conflict, notFound, ServerToolsError } from '../../errors'
import type { Clock } from '../../runtime/clock'
import { iso, systemClock } from '../../runtime/clock'
import { sha256 } from '../../runtime/hash'
import type { DynamoClient, QueryInput } from './dynamo/client'
import type { ReadBatcher } from './dynamo/read-batcher'
import { errorName, storeError } from './store-errors'
import { mayHaveLanded, newWriteId, WRITE_ID_SLOTS, writeIdAttribute, writeIdClauses, writesSince } from './write-ids'

export interface DynamoDocumentStoreOptions {
  dynamo: DynamoClient
  tableName: string
  blobs: BlobStore
  clock?: Clock
  /**
   * Whole-item reads go out with the other reads of the same turn (a tenant's stamp, a process,
   * another cascade lookup) as one BatchGetItem: a tool call's first request reads its tool and
   * its quota rules together.
   */
  reads?: ReadBatcher
}

/** The item as stored (attribute names are the table's contract with sst.config.ts and tools). */
export interface DocumentItem {
  scope: string
  path: string
  body?: string
  bodyKey?: string
  /** The JSON form of an inline body's data (StoredDocument.json); never beside a `bodyKey`. */
  json?: string
  bytes?: number
  version: number
  sha256: string
  createdAt: string
  createdBy: string
  updatedAt: string
  updatedBy: string
  /** A tombstone: the document was deleted at `version`; reads skip it, a re-create continues after it. */
  deleted?: boolean
  /** The ids of the last writes (./write-ids.ts): `writeId`, `writeId1`, …; a retried attempt recognises its own. */
  writeId?: string
  /** The write id of the write that created this life of the document (a retried attempt's `created`). */
  createdWriteId?: string
}

/** BatchGetItem accepts at most 100 keys per request. */
const BATCH_GET_LIMIT = 100
/** Retries for UnprocessedKeys before giving up with THROTTLED. */
const UNPROCESSED_RETRIES = 8

export class DynamoDocumentStore implements DocumentStore {
  private readonly db: DynamoClient
  private readonly table: string
  private readonly blobs: BlobStore
  private readonly clock: Clock
  private readonly reads?: ReadBatcher
  /** DynamoDB requests sent (blob reads are not counted; a read sent with others through `reads` counts as one). */
  roundTrips = 0

  constructor(opts: DynamoDocumentStoreOptions) {
    this.db = opts.dynamo
    this.table = opts.tableName
    this.blobs = opts.blobs
    this.clock = opts.clock ?? systemClock
    this.reads = opts.reads
  }

  async get(key: DocumentKey) {
    const item = await this.readItem(key)
    return item ? this.hydrate(item) : undefined
  }

  async getMany(keys: DocumentKey[]) {
    const out = new Map<string, StoredDocument>()
    // a cascade lookup: two distinct keys, one chunk, bodies inline — read with no staging
    // collections and nothing awaited per item (it runs once per uncached tool call)
    if (keys.length <= BATCH_GET_LIMIT && distinct(keys)) {
      const items = await this.batchGet(keys)
      if (!items.some(inBlob)) {
        for (const item of items) if (!item.deleted) out.set(docId(item), documentOf(item, item.body))
        return out
      }
      return this.hydrateInto(items, out)
    }
    const unique = new Map<string, DocumentKey>()
    for (const k of keys) unique.set(docId(k), { scope: k.scope, path: k.path })
    const chunks: DocumentKey[][] = []
    const all = [...unique.values()]
    for (let i = 0; i < all.length; i += BATCH_GET_LIMIT) chunks.push(all.slice(i, i + BATCH_GET_LIMIT))
    return this.hydrateInto((await Promise.all(chunks.map((c) => this.batchGet(c)))).flat(), out)
  }

  private async hydrateInto(items: DocumentItem[], out: Map<string, StoredDocument>) {
    for (const d of await Promise.all(items.map((item) => this.hydrate(item)))) if (d) out.set(docId(d.key), d)
    return out
  }

  async list(scope: string, prefix: string) {
    const items = await this.query(scope, prefix, false)
    const docs = (await Promise.all(items.map((item) => this.hydrate(item)))).filter((d): d is StoredDocument => !!d)
    // DynamoDB orders range keys by UTF-8 bytes; sort by JS string order like every other adapter.
    return docs.sort((a, b) => (a.key.path < b.key.path ? -1 : a.key.path > b.key.path ? 1 : 0))
  }

  async listSized(scope: string, prefix: string, bodyBytes: number, held?: HeldBody) {
    const items = (await this.query(scope, prefix, false))
      .filter((item) => !item.deleted)
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    // items written before `bytes` was stored are measured from their body (a blob is read for it)
    const sized = await Promise.all(
      items.map(async (item) => {
        if (item.bytes !== undefined) return { item, bytes: Number(item.bytes), doc: undefined }
        const doc = await this.hydrate(item)
        return { item, bytes: doc ? Buffer.byteLength(doc.body) : 0, doc }
      }),
    )
    const carried = carriedWithin(sized, bodyBytes)
    const out = await Promise.all(
      sized.map(async (s): Promise<SizedDocument | undefined> => {
        const { body: _, json: __, ...meta } = documentOf(s.item, undefined)
        if (!carried.has(s)) return { ...meta, bytes: s.bytes, carried: false }
        // the caller holds this version's body: its blob is not read (the listing is the snapshot)
        if (held?.(meta)) return { ...meta, bytes: s.bytes, carried: true }
        const doc = s.doc ?? (await this.hydrate(s.item))
        // deleted while listed (a blob gone with its item): as if the listing had come a moment later
        return doc ? { ...meta, version: doc.version, sha256: doc.sha256, bytes: s.bytes, carried: true, body: doc.body } : undefined
      }),
    )
    return out.filter((d): d is SizedDocument => d !== undefined)
  }

  async listVersions(scope: string, prefix: string) {
    const items = await this.query(scope, prefix, true)
    return items
      .filter((item) => !item.deleted)
      .map((item) => ({ path: item.path, version: Number(item.version) }))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }

  /** Every item of a scope under a prefix, page by page; `versionsOnly` projects the key, version and tombstone flag. */
  private async query(scope: string, prefix: string, versionsOnly: boolean): Promise<DocumentItem[]> {
    const items: DocumentItem[] = []
    let startKey: Record<string, unknown> | undefined
    do {
      const input: QueryInput = {
        TableName: this.table,
        ConsistentRead: true,
        KeyConditionExpression: prefix ? '#s = :scope AND begins_with(#p, :prefix)' : '#s = :scope',
        ExpressionAttributeNames: {
          '#s': 'scope',
          ...(prefix || versionsOnly ? { '#p': 'path' } : {}),
          ...(versionsOnly ? { '#v': 'version', '#del': 'deleted' } : {}),
        },
        ExpressionAttributeValues: { ':scope': scope, ...(prefix ? { ':prefix': prefix } : {}) },
        ...(versionsOnly ? { ProjectionExpression: '#s, #p, #v, #del' } : {}),
        ExclusiveStartKey: startKey,
      }
      const page = await this.send(() => this.db.query<DocumentItem>(input))
      items.push(...page.Items)
      startKey = page.LastEvaluatedKey
    } while (startKey)
    return items
  }

  async put(doc: NewDocument, opts: PutOptions = {}) {
    const bytes = checkedSize(doc)
    if (opts.createOnly && bytes > INLINE_BODY_LIMIT) {
      // Refuse before uploading: a create-only write over a live document would only upload bytes
      // to delete them again.
      const current = await this.readItem(doc.key, true)
      if (current && !current.deleted) throw conflict(`${doc.key.path} already exists (version ${current.version})`)
    }
    return this.write(doc, bytes, sha256(doc.body), opts)
  }

  async delete(key: DocumentKey, opts: DeleteOptions = {}) {
    const versioned = opts.expectedVersion !== undefined
    const writeId = newWriteId()
    const names: Record<string, string> = {
      '#s': 'scope',
      '#cw': 'createdWriteId',
      '#v': 'version',
      '#del': 'deleted',
      '#ua': 'updatedAt',
      '#body': 'body',
      '#bodyKey': 'bodyKey',
      '#json': 'json',
      '#sha': 'sha256',
      '#bytes': 'bytes',
      '#ca': 'createdAt',
      '#cb': 'createdBy',
      '#ub': 'updatedBy',
    }
    const values: Record<string, unknown> = {
      ':true': true,
      ':one': 1,
      ':now': iso(this.clock.now()),
      ...(versioned ? { ':expected': opts.expectedVersion } : {}),
    }
    const ids = writeIdClauses(names, values, writeId)
    let old: DocumentItem | undefined
    try {
      // A tombstone, not a DeleteItem: the version sequence must survive a delete (see the port).
      const out = await this.send(() =>
        this.db.updateItem<DocumentItem>({
          TableName: this.table,
          Key: { scope: key.scope, path: key.path },
          UpdateExpression: `SET #del = :true, #v = #v + :one, #ua = :now, ${ids.set.join(', ')} REMOVE #body, #bodyKey, #json, #sha, #bytes, #ca, #cb, #ub, #cw`,
          ConditionExpression: `attribute_exists(#s) AND attribute_not_exists(#del)${versioned ? ' AND #v = :expected' : ''} AND ${ids.condition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      old = out.Attributes
    } catch (e) {
      if (!isConditionFailure(e)) throw e
      // DynamoDB returns the current item with the failure; emulators may not, so read it then.
      // Our own delete, applied by an earlier attempt whose answer was lost (and maybe followed
      // by other writes since), is the success it was. The blob it replaced is named only in that
      // lost answer: the orphan sweep removes it.
      if (mayHaveLanded(e) && writesSince(conditionItem(e) ?? (await this.readItem(key, true)), writeId) !== undefined) return
      // Unconditional, the write failed only because the document was absent or deleted when it
      // ran: a 404, even if a racing PUT has created it again since (reading it now would say so).
      if (!versioned) throw notFound(`${key.path} does not exist`)
      const current = conditionItem(e) ?? (await this.readItem(key, true))
      if (!current || current.deleted) throw notFound(`${key.path} does not exist`)
      throw conflict(`${key.path} is at version ${current.version}, not ${opts.expectedVersion}`, e)
    }
    if (old?.bodyKey) await this.deleteBlobQuietly(old.bodyKey)
  }

  /**
   * The raw item (diagnostics and integration tests: e.g. proving a large body lives in the blob
   * store). Not part of the DocumentStore port.
   */
  async rawItem(key: DocumentKey): Promise<DocumentItem | undefined> {
    return this.readItem(key)
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * One UpdateItem, inline or large alike. Mode: createOnly (no live document; a tombstone's
   * version is continued), expectedVersion (of a live document), mustExist (any live version), or
   * unconditional — in the last two DynamoDB
   * increments the version atomically, so concurrent unconditional writers never race: each gets
   * its own version and the last one wins, whatever the body size.
   */
  private async write(doc: NewDocument, bytes: number, hash: string, opts: PutOptions): Promise<StoredDocument & { created: boolean }> {
    const { key, body, actor } = doc
    const now = iso(this.clock.now())
    const inline = bytes <= INLINE_BODY_LIMIT
    const nextVersion = opts.expectedVersion !== undefined ? opts.expectedVersion + 1 : undefined

    const bodyKey = inline ? undefined : blobKey(key, hash)
    if (bodyKey) await this.blobs.put(bodyKey, body)
    const writeId = newWriteId()

    const names: Record<string, string> = {
      '#v': 'version',
      '#sha': 'sha256',
      '#bytes': 'bytes',
      '#body': 'body',
      '#bodyKey': 'bodyKey',
      '#json': 'json',
      '#ca': 'createdAt',
      '#cb': 'createdBy',
      '#ua': 'updatedAt',
      '#ub': 'updatedBy',
      '#del': 'deleted',
      '#s': 'scope',
      '#cw': 'createdWriteId',
    }
    const values: Record<string, unknown> = { ':sha': hash, ':bytes': bytes, ':now': now, ':actor': actor }
    const ids = writeIdClauses(names, values, writeId)
    const set = [
      ...ids.set,
      // the write that created this life of the document (a tombstone removes it): a retried
      // attempt tells `created` from it
      '#cw = if_not_exists(#cw, :wid)',
      '#sha = :sha',
      '#bytes = :bytes',
      '#ua = :now',
      '#ub = :actor',
      '#ca = if_not_exists(#ca, :now)',
      '#cb = if_not_exists(#cb, :actor)',
    ]
    if (nextVersion === undefined) {
      set.push('#v = if_not_exists(#v, :zero) + :one')
      values[':zero'] = 0
      values[':one'] = 1
    } else {
      set.push('#v = :next')
      values[':next'] = nextVersion
    }
    // every write replaces the JSON form or removes it: never one left from an earlier body
    const json = inline ? doc.json : undefined
    const remove: string[] = ['#del']
    if (inline) {
      set.push('#body = :body')
      values[':body'] = body
      remove.push('#bodyKey')
    } else {
      set.push('#bodyKey = :bodyKey')
      values[':bodyKey'] = bodyKey
      remove.push('#body')
    }
    if (json !== undefined) {
      set.push('#json = :json')
      values[':json'] = json
    } else remove.push('#json')
    // a retry of an attempt that was applied finds its own write id and fails here (see the catch)
    let condition = ids.condition
    if (opts.createOnly) {
      condition += ' AND (attribute_not_exists(#s) OR attribute_exists(#del))'
    } else if (opts.expectedVersion !== undefined) {
      condition += ' AND #v = :expected AND attribute_not_exists(#del)'
      values[':expected'] = opts.expectedVersion
    } else if (opts.mustExist) {
      condition += ' AND attribute_exists(#s) AND attribute_not_exists(#del)'
    }
    if (!condition.includes('#s')) delete names['#s'] // DynamoDB refuses names an expression does not use

    let old: DocumentItem | undefined
    try {
      const out = await this.send(() =>
        this.db.updateItem<DocumentItem>({
          TableName: this.table,
          Key: { scope: key.scope, path: key.path },
          UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      )
      old = out.Attributes
    } catch (e) {
      const conditionFailed = isConditionFailure(e)
      if (conditionFailed && mayHaveLanded(e)) {
        const current = await this.readItem(key)
        const since = writesSince(current, writeId)
        if (current && since !== undefined) {
          // An earlier attempt was applied; its answer was lost (and `since` writes, each one
          // version up, followed it). The blob it replaced is named only in that answer: the
          // orphan sweep removes it.
          return {
            key: { scope: key.scope, path: key.path },
            body,
            ...(json !== undefined ? { json } : {}),
            version: Number(current.version) - since,
            sha256: hash,
            createdAt: current.createdAt,
            createdBy: current.createdBy,
            updatedAt: now,
            updatedBy: actor,
            created: current.createdWriteId === writeId,
          }
        }
        // Not ours now, but ours may have landed and been replaced since: the blob may have been
        // read by someone; the sweep decides once nothing points at it.
      } else if (bodyKey && (conditionFailed || !mayHaveLanded(e))) await this.deleteBlobQuietly(bodyKey)
      if (!conditionFailed) throw e
      const current = conditionItem(e)
      if (opts.createOnly) {
        throw conflict(`${key.path} already exists${current ? ` (version ${current.version})` : ''}`, e)
      }
      if (opts.expectedVersion === undefined) throw conflict(`${key.path} does not exist`, e)
      throw conflict(
        current
          ? `${key.path} is at version ${current.version}, not ${opts.expectedVersion}`
          : `${key.path} is not at version ${opts.expectedVersion}`,
        e,
      )
    }
    // The replaced blob is unreachable now; readers that still hold the old item re-read it.
    if (old?.bodyKey && old.bodyKey !== bodyKey) await this.deleteBlobQuietly(old.bodyKey)

    return {
      key: { scope: key.scope, path: key.path },
      body,
      ...(json !== undefined ? { json } : {}),
      version: nextVersion ?? (old?.version ?? 0) + 1,
      sha256: hash,
      createdAt: old?.createdAt ?? now,
      createdBy: old?.createdBy ?? actor,
      updatedAt: now,
      updatedBy: actor,
      created: !old || !!old.deleted,
    }
  }

  private async readItem(key: DocumentKey, versionOnly = false): Promise<DocumentItem | undefined> {
    const reads = this.reads
    if (reads && !versionOnly) return this.send(() => reads.getItem<DocumentItem>(this.table, { scope: key.scope, path: key.path }))
    const out = await this.send(() =>
      this.db.getItem<DocumentItem>({
        TableName: this.table,
        Key: { scope: key.scope, path: key.path },
        ConsistentRead: true,
        ...(versionOnly
          ? {
              ProjectionExpression: `#s, #p, #v, #del, ${Array.from({ length: WRITE_ID_SLOTS }, (_, i) => `#wid${i}`).join(', ')}`,
              ExpressionAttributeNames: {
                '#s': 'scope',
                '#p': 'path',
                '#v': 'version',
                '#del': 'deleted',
                ...Object.fromEntries(Array.from({ length: WRITE_ID_SLOTS }, (_, i) => [`#wid${i}`, writeIdAttribute(i)])),
              },
            }
          : {}),
      }),
    )
    return out.Item
  }

  private async batchGet(keys: DocumentKey[]): Promise<DocumentItem[]> {
    const reads = this.reads
    if (reads) {
      const found = await this.send(() =>
        Promise.all(keys.map((k) => reads.getItem<DocumentItem>(this.table, { scope: k.scope, path: k.path }))),
      )
      return found.filter((item): item is DocumentItem => item !== undefined)
    }
    const items: DocumentItem[] = []
    let pending: Record<string, unknown>[] | undefined = keys.map((k) => ({ scope: k.scope, path: k.path }))
    for (let retry = 0; pending && pending.length > 0; retry++) {
      if (retry > UNPROCESSED_RETRIES) {
        throw new ServerToolsError('THROTTLED', `the documents table left ${pending.length} keys unprocessed; retry shortly`)
      }
      if (retry > 0) await sleep(Math.min(25 * 2 ** retry, 1_000) * (0.5 + Math.random() / 2))
      const keysNow: Record<string, unknown>[] = pending
      const out = await this.send(() =>
        this.db.batchGetItem<DocumentItem>({ RequestItems: { [this.table]: { Keys: keysNow, ConsistentRead: true } } }),
      )
      items.push(...(out.Responses[this.table] ?? []))
      pending = out.UnprocessedKeys[this.table]?.Keys
    }
    return items
  }

  /**
   * Item → document, fetching a large body. If the blob is gone, a writer replaced or deleted the
   * document after we read the item: read the item again (the newest version, or nothing).
   */
  private async hydrate(item: DocumentItem, rereads = 3): Promise<StoredDocument | undefined> {
    if (item.deleted) return undefined
    let body = item.body
    if (item.bodyKey !== undefined) {
      body = await this.blobs.get(item.bodyKey)
      if (body === undefined) {
        const fresh = await this.readItem({ scope: item.scope, path: item.path })
        if (!fresh || fresh.deleted) return undefined
        if (fresh.bodyKey === item.bodyKey || rereads <= 0) {
          throw new Error(`document ${item.scope} ${item.path} v${item.version} points at missing blob ${item.bodyKey}`)
        }
        return this.hydrate(fresh, rereads - 1)
      }
    }
    return documentOf(item, body)
  }

  private async deleteBlobQuietly(key: string) {
    try {
      await this.blobs.delete(key)
    } catch {
      // Best-effort: an orphan blob costs storage, never correctness (nothing points at it).
    }
  }

  /** Counts the request and maps throttling to THROTTLED; everything else is rethrown unchanged. */
  private async send<T>(request: () => Promise<T>): Promise<T> {
    this.roundTrips++
    try {
      return await request()
    } catch (e) {
      throw storeError(e, 'the documents table')
    }
  }
}

/** An item and its body (inline, or read from its blob) as a document. */
function documentOf(item: DocumentItem, body: string | undefined): StoredDocument {
  const doc: StoredDocument = {
    key: { scope: item.scope, path: item.path },
    body: body ?? '',
    version: Number(item.version),
    sha256: item.sha256,
    createdAt: item.createdAt,
    createdBy: item.createdBy,
    updatedAt: item.updatedAt,
    updatedBy: item.updatedBy,
  }
  if (item.json !== undefined && item.bodyKey === undefined) doc.json = item.json
  return doc
}

const inBlob = (item: DocumentItem) => item.bodyKey !== undefined && !item.deleted

/** No key twice (BatchGetItem refuses duplicates); a lookup's few keys compared pairwise. */
function distinct(keys: DocumentKey[]): boolean {
  for (let i = 1; i < keys.length; i++)
    for (let j = 0; j < i; j++) if (keys[i].scope === keys[j].scope && keys[i].path === keys[j].path) return false
  return true
}

/**
 * `docs/<scope>/<path>@<sha prefix>-<nonce>`: unique per write attempt, never reused. It holds no
 * version: the blob is uploaded before the item learns its version, so an unconditional write
 * needs no read-then-pin round (which lost to concurrent writers) and the nonce alone keeps two
 * writers of the same bytes apart.
 */
export function blobKey(key: DocumentKey, hash: string) {
  const path = key.path.split('/').map(encodeURIComponent).join('/')
  return `docs/${encodeURIComponent(key.scope)}/${path}@${hash.slice(0, 16)}-${randomBytes(8).toString('hex')}`
}

const isConditionFailure = (e: unknown) => errorName(e) === 'ConditionalCheckFailedException'
/**
 * The current version from the item DynamoDB returns with ReturnValuesOnConditionCheckFailure (the
 * client unmarshalls it). Undefined when the item is absent or the service (an emulator) did not
 * return it.
 */
function conditionItem(e: unknown): (Record<string, unknown> & { version: number; deleted: boolean }) | undefined {
  const item = (e as { Item?: Partial<DocumentItem> }).Item
  if (item?.version === undefined) return undefined
  return { ...item, version: Number(item.version), deleted: !!item.deleted }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
