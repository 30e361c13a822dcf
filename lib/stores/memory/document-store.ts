import type {
  DeleteOptions,
  DocumentKey,
  DocumentStore,
  DocumentVersion,
  HeldBody,
  NewDocument,
  PutOptions,
  SizedDocument,
  StoredDocument,
} from '../../documents/ports'
import { carriedWithin, checkedSize, docId, INLINE_BODY_LIMIT } from '../../documents/ports'
import { conflict, notFound } from '../../errors'
import type { Clock } from '../../runtime/clock'
import { iso, systemClock } from '../../runtime/clock'
import { sha256 } from '../../runtime/hash'

/** In-process DocumentStore with the same promises as the DynamoDB adapter. */
export class MemoryDocumentStore implements DocumentStore {
  private readonly docs = new Map<string, StoredDocument>()
  /** Each scope's documents sorted by path, rebuilt after a write to that scope. */
  private readonly sorted = new Map<string, StoredDocument[]>()
  /** The last version of each deleted document: a re-created one continues after it, never reuses it. */
  private readonly tombstones = new Map<string, number>()
  /** Round trips served, so tests and benches can prove "one read per cascade lookup". */
  roundTrips = 0
  /** Per tenant: writes so far (DocumentStore.generation; exact, the store being the process's own). */
  private readonly generations = new Map<string, number>()

  constructor(private readonly clock: Clock = systemClock) {}

  async get(key: DocumentKey) {
    this.roundTrips++
    return clone(this.docs.get(docId(key)))
  }

  async getMany(keys: DocumentKey[]) {
    this.roundTrips++
    const out = new Map<string, StoredDocument>()
    for (const key of keys) {
      const doc = this.docs.get(docId(key))
      if (doc) out.set(docId(key), clone(doc)!)
    }
    return out
  }

  async put(doc: NewDocument, opts: PutOptions = {}) {
    const bytes = checkedSize(doc)
    this.roundTrips++
    const id = docId(doc.key)
    const current = this.docs.get(id)
    if (opts.createOnly && current) throw conflict(`${doc.key.path} already exists (version ${current.version})`)
    if (opts.mustExist && !current) throw conflict(`${doc.key.path} does not exist`)
    if (opts.expectedVersion !== undefined && current?.version !== opts.expectedVersion) {
      throw conflict(`${doc.key.path} is at version ${current?.version ?? 'none'}, not ${opts.expectedVersion}`)
    }
    const now = iso(this.clock.now())
    const stored: StoredDocument = {
      key: { ...doc.key },
      body: doc.body,
      ...(doc.json !== undefined && bytes <= INLINE_BODY_LIMIT ? { json: doc.json } : {}),
      version: (current?.version ?? this.tombstones.get(id) ?? 0) + 1,
      sha256: sha256(doc.body),
      createdAt: current?.createdAt ?? now,
      createdBy: current?.createdBy ?? doc.actor,
      updatedAt: now,
      updatedBy: doc.actor,
    }
    this.docs.set(id, stored)
    this.tombstones.delete(id)
    this.sorted.delete(doc.key.scope)
    this.bump(doc.key.scope)
    return { ...clone(stored)!, created: !current }
  }

  async delete(key: DocumentKey, opts: DeleteOptions = {}) {
    this.roundTrips++
    const current = this.docs.get(docId(key))
    if (!current) throw notFound(`${key.path} does not exist`)
    if (opts.expectedVersion !== undefined && current.version !== opts.expectedVersion) {
      throw conflict(`${key.path} is at version ${current.version}, not ${opts.expectedVersion}`)
    }
    this.docs.delete(docId(key))
    this.tombstones.set(docId(key), current.version + 1)
    this.sorted.delete(key.scope)
    this.bump(key.scope)
  }

  async generation(tenant: string) {
    return this.generations.get(tenant) ?? 0
  }

  private bump(scope: string) {
    const tenant = scope.slice(0, scope.indexOf('#'))
    this.generations.set(tenant, (this.generations.get(tenant) ?? 0) + 1)
  }

  async list(scope: string, prefix: string) {
    this.roundTrips++
    const out: StoredDocument[] = []
    for (const d of this.sortedScope(scope)) if (d.key.path.startsWith(prefix)) out.push(clone(d)!)
    return out
  }

  async listSized(scope: string, prefix: string, bodyBytes: number, held?: HeldBody) {
    this.roundTrips++
    const docs = this.sortedScope(scope)
      .filter((d) => d.key.path.startsWith(prefix))
      .map((d) => ({ doc: d, bytes: this.bytesOf(d) }))
    const carried = carriedWithin(docs, bodyBytes)
    return docs.map(({ doc, bytes }, i): SizedDocument => {
      const { body, json: _, ...meta } = clone(doc)!
      if (!carried.has(docs[i])) return { ...meta, bytes, carried: false }
      return { ...meta, bytes, carried: true, ...(held?.(meta) ? {} : { body }) }
    })
  }

  /** Sizes measured once per stored body (a stored document object is replaced, never changed, by a write). */
  private readonly sizes = new WeakMap<StoredDocument, number>()
  private bytesOf(d: StoredDocument): number {
    let n = this.sizes.get(d)
    if (n === undefined) this.sizes.set(d, (n = Buffer.byteLength(d.body)))
    return n
  }

  async listVersions(scope: string, prefix: string) {
    this.roundTrips++
    const out: DocumentVersion[] = []
    for (const d of this.sortedScope(scope)) if (d.key.path.startsWith(prefix)) out.push({ path: d.key.path, version: d.version })
    return out
  }

  private sortedScope(scope: string): StoredDocument[] {
    let docs = this.sorted.get(scope)
    if (!docs) {
      docs = [...this.docs.values()]
        .filter((d) => d.key.scope === scope)
        .sort((a, b) => (a.key.path < b.key.path ? -1 : a.key.path > b.key.path ? 1 : 0))
      this.sorted.set(scope, docs)
    }
    return docs
  }
}

const clone = (d: StoredDocument | undefined) => (d ? { ...d, key: { ...d.key } } : undefined)
