import { ServerToolsError } from '../errors'

/**
 * Storage ports. `scope` is `${tenant}#${project}`; the tenant layer is project `_tenant`.
 * Every adapter (memory, DynamoDB + S3) passes test/contract/document-store.contract.ts.
 */
export interface DocumentKey {
  scope: string
  path: string
}

export interface StoredDocument {
  key: DocumentKey
  body: string
  /**
   * The JSON text of a structured document's data, written with the body by the write that
   * validated it (lib/config/yaml.ts `jsonFormOf`), so a read needs no YAML parser. Absent for
   * unstructured documents, bodies kept in the blob store, data JSON cannot hold exactly, and
   * documents written before it existed; a write without one leaves none behind.
   */
  json?: string
  version: number
  sha256: string
  createdAt: string
  createdBy: string
  updatedAt: string
  updatedBy: string
}

/** A listed document with its size, and whether the listing carries its body. */
export interface SizedDocument extends Omit<StoredDocument, 'body' | 'json'> {
  /** UTF-8 bytes of the body. */
  bytes: number
  /** The body fits what was left of the listing's `bodyBytes` (taken in path order): the answer carries it. */
  carried: boolean
  /** A carried body; absent for one the caller said it holds (`listSized`'s `held`), which was not read. */
  body?: string
}

/**
 * Whether the caller already holds the body of this version of a document (a kept rendering of
 * it), so that it need not be read: the version names one body forever (`DocumentStore.delete`),
 * and its sha256 names the bytes.
 */
export type HeldBody = (doc: { key: DocumentKey; version: number; sha256: string }) => boolean

/** Path order, then each body carried while it fits what is left of `bodyBytes` (SizedDocument's rule). */
export function carriedWithin<T extends { bytes: number }>(sorted: readonly T[], bodyBytes: number): Set<T> {
  const carried = new Set<T>()
  let room = bodyBytes
  for (const d of sorted)
    if (d.bytes <= room) {
      room -= d.bytes
      carried.add(d)
    }
  return carried
}

export interface NewDocument {
  key: DocumentKey
  body: string
  /** The JSON form of the body's data (see StoredDocument.json); stored only with an inline body. */
  json?: string
  actor: string // the token's `sub`, stamped into createdBy/updatedBy
}

export interface PutOptions {
  /** Write only if the stored version equals this (optimistic lock). */
  expectedVersion?: number
  /** Write only if no document exists yet (`If-None-Match: *`). */
  createOnly?: boolean
  /** Write only if a live document exists, whatever its version (`If-Match: *`). */
  mustExist?: boolean
}

export interface DeleteOptions {
  expectedVersion?: number
}

export interface DocumentStore {
  get(key: DocumentKey): Promise<StoredDocument | undefined>
  /** Reads several keys in one round trip (one BatchGetItem); the map is keyed by `docId(key)`. */
  getMany(keys: DocumentKey[]): Promise<Map<string, StoredDocument>>
  /**
   * ConflictError (code CONFLICT) on a stale version, when createOnly meets an existing document or
   * when mustExist finds none.
   * `created` is true when no live document was there before (a first write, or one after a delete).
   */
  put(doc: NewDocument, opts?: PutOptions): Promise<StoredDocument & { created: boolean }>
  /**
   * NOT_FOUND when absent, CONFLICT on a stale version. A deleted document leaves a tombstone:
   * re-creating it continues the version sequence, so (scope, path, version) names one body
   * forever — caches keyed by it stay correct and a pre-delete If-Match can never match again.
   */
  delete(key: DocumentKey, opts?: DeleteOptions): Promise<void>
  /** Every document of a scope whose path starts with prefix, sorted by path (one Query). */
  list(scope: string, prefix: string): Promise<StoredDocument[]>
  /**
   * The path and version of the same documents, nothing else (one Query that reads no body and no
   * blob): what a memo needs to know whether anything under a prefix changed.
   */
  listVersions(scope: string, prefix: string): Promise<DocumentVersion[]>
  /**
   * The same documents with their UTF-8 sizes, a body read only for those that fit `bodyBytes`
   * taken in path order (one that does not fit is passed over; a later, smaller one may still
   * fit). A layer export reads no body it will not carry: 12 blobs of 900 KB were read, decoded
   * and measured for an answer that carried two (issue 21 D3). A carried body the caller holds
   * (`held`) is not read either: an export whose bodies were rendered before copies the renderings,
   * and reading 900 KB blobs only to compare them with those renderings was most of its work.
   * Which bodies are carried never depends on `held`.
   */
  listSized(scope: string, prefix: string, bodyBytes: number, held?: HeldBody): Promise<SizedDocument[]>
  /**
   * Optional. A number that changes whenever any document of the tenant changes, as this request
   * sees it; undefined when the store cannot tell (then a memo of what documents say must re-read
   * them). Memos key on it instead of a time to live (lib/documents/stamped-cache.ts).
   */
  generation?(tenant: string): Promise<number | undefined>
  /**
   * Optional. Start reading what this request's reads of the tenant depend on (the tenant stamp)
   * now, so that it goes out with the caller's other reads (a process) in one request.
   */
  freshen?(tenant: string): Promise<void>
}

/** A live document's path and version. */
export interface DocumentVersion {
  path: string
  version: number
}

/** Large bodies live here; a key is unique to the write that made it, so bytes are never overwritten. */
export interface BlobStore {
  put(key: string, body: string): Promise<void>
  get(key: string): Promise<string | undefined>
  delete(key: string): Promise<void>
  /**
   * One page of the keys under `prefix`, in key order, each with when it was written (epoch ms);
   * `next` continues the listing. For the orphan sweep, never on a request path.
   */
  list(prefix: string, next?: string): Promise<{ blobs: BlobListing[]; next?: string }>
}

export interface BlobListing {
  key: string
  modifiedAt: number
}

export const docId = (key: DocumentKey) => `${key.scope}\u0000${key.path}`
export const scopeOf = (tenant: string, project: string) => `${tenant}#${project}`
export const TENANT_LAYER = '_tenant'

/** Bodies up to this size are stored inline in the item; larger ones go to the BlobStore. */
export const INLINE_BODY_LIMIT = 64 * 1024
/** Largest document accepted at all (413 above). */
export const MAX_DOCUMENT_BYTES = 1024 * 1024

/** The body's UTF-8 size; TOO_LARGE above MAX_DOCUMENT_BYTES (every adapter refuses alike). */
export function checkedSize(doc: NewDocument): number {
  const bytes = Buffer.byteLength(doc.body, 'utf8')
  if (bytes > MAX_DOCUMENT_BYTES) {
    throw new ServerToolsError('TOO_LARGE', `${doc.key.path} is ${bytes} bytes; documents are limited to ${MAX_DOCUMENT_BYTES} bytes`, {
      bytes,
      limit: MAX_DOCUMENT_BYTES,
    })
  }
  return bytes
}
