/**
 * A per-container cache of what a turn reads from the document store (tool definitions, recipes,
 * engines, model catalogs, quota rules: every read through the cascade), kept fresh by a tenant
 * stamp read once per request.
 *
 * The stamp (TenantStampStore) is one small item per tenant. Every document write through this
 * store marks the stamp before it touches the document (`begin`: the generation goes up and the
 * write is listed as in progress) and again after (`end`: up again, no longer listed). A request
 * reads the stamp once, on its first document read, and then:
 * - the same generation as the container's cached view, no write in progress: every read is
 *   served from the view (or read once and kept in it);
 * - another generation: the view is dropped; a new one starts at this generation;
 * - a write in progress: nothing is cached or served from the cache in this request.
 *
 * Why that is never stale: a view holds only what was read after a stamp read that showed its
 * generation and no write in progress, and it is served only to requests whose own stamp read
 * showed the same. A document changes only between a `begin` and an `end`, each of which changes
 * the generation before (begin) or as (end) the change becomes complete; so a request that saw the
 * view's generation started before any write after the view's reads began — whatever it is
 * served is what it would have read itself. A write that completed before a request started is
 * seen by that request on every container: its stamp read returns a later generation.
 *
 * A writer that dies between begin and end leaves its write listed: requests then read through
 * (correct, uncached) until the listing is older than `writeHorizonMs`, which must exceed the
 * longest a write can take (the function's timeout bounds it), and the next write removes it.
 *
 * A container that holds no view of a tenant has nothing to serve from: a request's reads of that
 * tenant issued while its stamp read is in flight go out beside it (one BatchGetItem through the
 * read batcher: a cold start's first round trip reads the stamp and the tool together) and are
 * served to that request only, never kept. They are as fresh as any read-through, but may have
 * been answered before the stamp was: a write that completed between the two would leave the old
 * body under a generation that already counts the write. Reads issued once the stamp is back are
 * kept as above, so the container's second request fills the view.
 *
 * Outside a request (`request()` undefined) every read goes to the store. Writes always mark the
 * stamp, whoever makes them.
 */
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
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
} from './ports'
import { docId } from './ports'

/** A tenant's stamp: its generation and the writes in progress (write id → when it began, epoch ms). */
export interface TenantStamp {
  generation: number
  writing: Record<string, number>
}

/** Where stamps live (DynamoDB: lib/stores/aws/tenant-stamp-store.ts; memory: lib/stores/memory/tenant-stamp-store.ts). */
export interface TenantStampStore {
  /** Strongly consistent. A tenant never written reads as generation 0, nothing in progress. */
  read(tenant: string): Promise<TenantStamp>
  /** Lists `writeId` as in progress (at `now`) and raises the generation; the stamp after. */
  begin(tenant: string, writeId: string, now: number): Promise<TenantStamp>
  /** Removes the listed writes and raises the generation. */
  end(tenant: string, writeIds: string[]): Promise<void>
}

export interface StampedCacheOptions {
  store: DocumentStore
  stamps: TenantStampStore
  /** An object that lives exactly as long as the current request (undefined outside one): the stamp is read once per request. */
  request: () => object | undefined
  clock: Clock
  newWriteId: () => string
  log?: Logger
  /** A write listed longer than this is taken as abandoned (default 15 minutes: Lambda's longest invocation). */
  writeHorizonMs?: number
  /** The bodies the cache may hold, all tenants together (default 32 MiB); the least recently used tenants go first. */
  maxBytes?: number
}

interface View {
  tenant: string
  generation: number
  entries: Map<string, Promise<unknown>>
  bytes: number
}

/** One request's stamp check of one tenant. */
interface Check {
  view: Promise<View | undefined>
  /** The container held no view of the tenant and the stamp is not back yet: read beside it, keep nothing. */
  beside: boolean
}

const DEFAULT_HORIZON_MS = 15 * 60_000
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024

export class StampedDocumentCache implements DocumentStore {
  private readonly inner: DocumentStore
  /** Per tenant, least recently used first. */
  private readonly views = new Map<string, View>()
  private bytes = 0
  /** Per request, per tenant: the view this request may use (undefined: read through). */
  private readonly requests = new WeakMap<object, Map<string, Check>>()
  /** Stamp reads sent, requests served from a view, and reads sent beside a stamp read (never kept), for tests and benches. */
  readonly stats = { stampReads: 0, hits: 0, misses: 0, beside: 0 }

  constructor(private readonly opts: StampedCacheOptions) {
    this.inner = opts.store
  }

  /**
   * Reads the tenant's stamp for this request now, if it has not been read yet: a caller about to
   * read something else too (a process) asks for both at once, and the store may send them as one
   * request (lib/stores/aws/dynamo/read-batcher.ts).
   */
  async freshen(tenant: string): Promise<void> {
    await this.view(tenant)
  }

  async get(key: DocumentKey) {
    if (this.beside([key.scope])) return this.inner.get(key)
    const view = await this.view(tenantOf(key.scope))
    if (!view) return this.inner.get(key)
    return copyDoc(await this.cached(view, `d\u0000${docId(key)}`, () => this.inner.get(key), docBytes))
  }

  async getMany(keys: DocumentKey[]) {
    if (this.beside(keys.map((k) => k.scope))) return this.inner.getMany(keys)
    const tenants = new Set(keys.map((k) => tenantOf(k.scope)))
    const views = await Promise.all([...tenants].map((t) => this.view(t)))
    if (views.some((v) => !v)) return this.inner.getMany(keys)
    const byTenant = new Map([...tenants].map((t, i) => [t, views[i] as View]))
    const out = new Map<string, StoredDocument>()
    const missing: DocumentKey[] = []
    const found: Promise<void>[] = []
    for (const key of keys) {
      const view = byTenant.get(tenantOf(key.scope)) as View
      const entry = view.entries.get(`d\u0000${docId(key)}`) as Promise<StoredDocument | undefined> | undefined
      if (entry) found.push(entry.then((d) => void (d && out.set(docId(key), copyDoc(d) as StoredDocument))))
      else missing.push(key)
    }
    if (missing.length) {
      this.stats.misses++
      const batch = this.inner.getMany(missing)
      for (const key of missing) {
        const view = byTenant.get(tenantOf(key.scope)) as View
        this.keep(view, `d\u0000${docId(key)}`, () => batch.then((m) => m.get(docId(key))), docBytes)
      }
      for (const [id, d] of await batch) out.set(id, copyDoc(d) as StoredDocument)
    } else this.stats.hits++
    await Promise.all(found)
    return out
  }

  async list(scope: string, prefix: string) {
    if (this.beside([scope])) return this.inner.list(scope, prefix)
    const view = await this.view(tenantOf(scope))
    if (!view) return this.inner.list(scope, prefix)
    const docs = await this.cached(
      view,
      `l\u0000${scope}\u0000${prefix}`,
      () => this.inner.list(scope, prefix),
      (docs) => docs.reduce((n, d) => n + docBytes(d), 0),
    )
    return docs.map((d) => copyDoc(d) as StoredDocument)
  }

  async listSized(scope: string, prefix: string, bodyBytes: number, held?: HeldBody): Promise<SizedDocument[]> {
    if (this.beside([scope])) return this.inner.listSized(scope, prefix, bodyBytes, held)
    const view = await this.view(tenantOf(scope))
    if (!view) return this.inner.listSized(scope, prefix, bodyBytes, held)
    // the listing is kept as its first caller got it: without the bodies that caller held
    const docs = await this.cached(
      view,
      `s\u0000${scope}\u0000${prefix}\u0000${bodyBytes}`,
      () => this.inner.listSized(scope, prefix, bodyBytes, held),
      (docs) => docs.reduce((n, d) => n + (d.body?.length ?? 0) + 256, 0),
    )
    // a body left unread then that this caller does not hold (its rendering was dropped since): read through
    if (docs.some((d) => d.carried && d.body === undefined && !held?.(d))) return this.inner.listSized(scope, prefix, bodyBytes, held)
    return docs.map((d) => ({ ...d, key: { ...d.key } }))
  }

  async listVersions(scope: string, prefix: string): Promise<DocumentVersion[]> {
    if (this.beside([scope])) return this.inner.listVersions(scope, prefix)
    const view = await this.view(tenantOf(scope))
    if (!view) return this.inner.listVersions(scope, prefix)
    const versions = await this.cached(
      view,
      `v\u0000${scope}\u0000${prefix}`,
      () => this.inner.listVersions(scope, prefix),
      (vs) => 32 * vs.length,
    )
    return versions.map((v) => ({ ...v }))
  }

  async put(doc: NewDocument, opts?: PutOptions) {
    return this.writing(tenantOf(doc.key.scope), () => this.inner.put(doc, opts))
  }

  async delete(key: DocumentKey, opts?: DeleteOptions) {
    return this.writing(tenantOf(key.scope), () => this.inner.delete(key, opts))
  }

  /** The generation this request saw for the tenant, when its reads are cached (the quota rules memo keys on it). */
  async generation(tenant: string): Promise<number | undefined> {
    return (await this.view(tenant))?.generation
  }

  // ---------------------------------------------------------------------------------------------

  private async writing<T>(tenant: string, write: () => Promise<T>): Promise<T> {
    const { stamps, clock, newWriteId } = this.opts
    const id = newWriteId()
    const now = clock.now()
    const before = await stamps.begin(tenant, id, now)
    this.drop(tenant)
    // this request's later reads of the tenant go to the store (they must see its own write)
    const scope = this.opts.request()
    if (scope) this.requests.get(scope)?.set(tenant, { view: Promise.resolve(undefined), beside: false })
    const abandoned = Object.entries(before.writing)
      .filter(([w, at]) => w !== id && now - at >= this.horizon)
      .map(([w]) => w)
    try {
      return await write()
    } finally {
      try {
        await stamps.end(tenant, [id, ...abandoned])
      } catch (e) {
        // the write stays listed: every container reads this tenant uncached until the horizon
        this.opts.log?.log('warn', 'documents.stamp_end_failed', { tenant, error: String(e) })
      }
    }
  }

  private get horizon() {
    return this.opts.writeHorizonMs ?? DEFAULT_HORIZON_MS
  }

  private view(tenant: string): Promise<View | undefined> {
    return this.checkOf(tenant)?.view ?? Promise.resolve(undefined)
  }

  /** This request's stamp check of the tenant, begun now if it has not been (undefined outside a request). */
  private checkOf(tenant: string): Check | undefined {
    const scope = this.opts.request()
    if (!scope) return undefined
    let perRequest = this.requests.get(scope)
    if (!perRequest) this.requests.set(scope, (perRequest = new Map()))
    let check = perRequest.get(tenant)
    if (!check) {
      const c: Check = { beside: !this.views.has(tenant), view: this.check(tenant) }
      // check() never rejects
      if (c.beside) void c.view.then(() => (c.beside = false))
      perRequest.set(tenant, (check = c))
    }
    return check
  }

  /** Whether a read of these scopes goes out now, beside a stamp read in flight, and is kept nowhere (stamps are read for each tenant first). */
  private beside(scopes: string[]): boolean {
    let beside = false
    for (const scope of scopes) if (this.checkOf(tenantOf(scope))?.beside) beside = true
    if (beside) this.stats.beside++
    return beside
  }

  private async check(tenant: string): Promise<View | undefined> {
    this.stats.stampReads++
    let stamp: TenantStamp
    try {
      stamp = await this.opts.stamps.read(tenant)
    } catch (e) {
      // the reads themselves will say what is wrong with the table, uncached
      this.opts.log?.log('warn', 'documents.stamp_read_failed', { tenant, error: String(e) })
      return undefined
    }
    const now = this.opts.clock.now()
    const current = this.views.get(tenant)
    if (Object.values(stamp.writing).some((at) => now - at < this.horizon)) {
      this.drop(tenant)
      return undefined
    }
    if (current && current.generation === stamp.generation) {
      // least recently used last
      this.views.delete(tenant)
      this.views.set(tenant, current)
      return current
    }
    this.drop(tenant)
    const view: View = { tenant, generation: stamp.generation, entries: new Map(), bytes: 0 }
    this.views.set(tenant, view)
    return view
  }

  private drop(tenant: string) {
    const view = this.views.get(tenant)
    if (!view) return
    this.views.delete(tenant)
    this.bytes -= view.bytes
  }

  private cached<T>(view: View, key: string, load: () => Promise<T>, weigh: (t: T) => number): Promise<T> {
    const hit = view.entries.get(key) as Promise<T> | undefined
    if (hit) {
      this.stats.hits++
      return hit
    }
    this.stats.misses++
    return this.keep(view, key, load, weigh)
  }

  private keep<T>(view: View, key: string, load: () => Promise<T>, weigh: (t: T) => number): Promise<T> {
    const p = load()
    view.entries.set(key, p)
    p.then(
      (value) => {
        if (view.entries.get(key) !== p || this.views.get(view.tenant) !== view) return
        const w = weigh(value) + key.length
        view.bytes += w
        this.bytes += w
        this.evict()
      },
      () => {
        if (view.entries.get(key) === p) view.entries.delete(key)
      },
    )
    return p
  }

  private evict() {
    const max = this.opts.maxBytes ?? DEFAULT_MAX_BYTES
    for (const [tenant] of this.views) {
      if (this.bytes <= max) return
      this.drop(tenant)
    }
  }
}

/** `<tenant>#<project>` → tenant (tenant ids hold no '#'). */
const tenantOf = (scope: string) => {
  const i = scope.indexOf('#')
  return i < 0 ? scope : scope.slice(0, i)
}

/** Every caller gets its own object, as from the store itself: what one changes, no other request sees. */
const copyDoc = (d: StoredDocument | undefined) => d && { ...d, key: { ...d.key } }

const docBytes = (d: StoredDocument | undefined) => (d ? d.body.length + (d.json?.length ?? 0) + 256 : 16)
