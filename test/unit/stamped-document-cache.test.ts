/**
 * The per-container document cache behind a tenant stamp (lib/documents/stamped-cache.ts). Each
 * "container" is its own StampedDocumentCache over one shared store and one shared stamp store,
 * as Lambda containers share the DynamoDB tables; a request is an object the cache sees as
 * current while it runs. The stamp store is the in-memory adapter (the DynamoDB one is exercised
 * on dynalite by test/integration/document-cache.test.ts).
 */
import { describe, expect, it } from 'vitest'
import type { DocumentKey } from '../../lib/documents/ports'
import { type StampedCacheOptions, StampedDocumentCache } from '../../lib/documents/stamped-cache'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { MemoryTenantStampStore } from '../../lib/stores/memory/tenant-stamp-store'
import { latch } from '../support/latch'

const KEY: DocumentKey = { scope: 'acme#p1', path: 'server-tools/a.yaml' }
const OTHER: DocumentKey = { scope: 'acme#_tenant', path: 'server-tools/b.yaml' }

function world() {
  let now = 1_000_000
  const clock = { now: () => now }
  const store = new MemoryDocumentStore()
  const stamps = new MemoryTenantStampStore()
  let ids = 0
  let current: object | undefined
  const container = (extra: Partial<StampedCacheOptions> = {}) =>
    new StampedDocumentCache({ store, stamps, request: () => current, clock, newWriteId: () => `w${++ids}`, ...extra })
  /** Runs `fn` as one request (the cache reads the stamp once for it). */
  const request = async <T>(fn: () => Promise<T>): Promise<T> => {
    current = {}
    try {
      return await fn()
    } finally {
      current = undefined
    }
  }
  return { store, stamps, container, request, advance: (ms: number) => (now += ms) }
}

const write = (c: StampedDocumentCache, key: DocumentKey, body: string) => c.put({ key, body, actor: 'u' })

describe('StampedDocumentCache', () => {
  it('serves repeated requests from the container with one stamp read each and no store read', async () => {
    const { store, stamps, container, request } = world()
    const a = container()
    await write(a, KEY, 'v1')
    // the container's first request of the tenant reads beside its stamp and keeps nothing; the second fills the view
    for (let i = 0; i < 2; i++) {
      await request(() => a.getMany([KEY, OTHER]))
      await request(() => a.list('acme#p1', 'server-tools/'))
    }
    const [reads, stampReads] = [store.roundTrips, stamps.requests]
    for (let i = 0; i < 5; i++)
      await request(async () => {
        expect((await a.getMany([KEY, OTHER])).get(`${KEY.scope}\u0000${KEY.path}`)?.body).toBe('v1')
        expect((await a.get(KEY))?.body).toBe('v1')
        expect((await a.list('acme#p1', 'server-tools/')).map((d) => d.body)).toEqual(['v1'])
      })
    expect(store.roundTrips - reads).toBe(0)
    expect(stamps.requests - stampReads).toBe(5)
  })

  it('serves a repeated export (a sized listing with bodies) from the view, and the next one after a write from the store', async () => {
    const { store, container, request } = world()
    const [a, b] = [container(), container()]
    await write(a, KEY, 'v1')
    const exported = () => request(() => a.listSized('acme#p1', 'server-tools/', 1_000))
    await exported()
    await exported()
    const reads = store.roundTrips
    for (let i = 0; i < 3; i++) expect((await exported()).map((d) => [d.body, d.bytes])).toEqual([['v1', 2]])
    expect(store.roundTrips - reads).toBe(0)
    await write(b, KEY, 'v2!')
    expect((await exported()).map((d) => [d.body, d.bytes, d.version])).toEqual([['v2!', 3, 2]])
  })

  it('keeps an export listing without the bodies its caller held, and reads through for a caller that no longer holds one', async () => {
    const { store, container, request } = world()
    const a = container()
    await write(a, KEY, 'v1')
    let holding = true
    const exported = () => request(() => a.listSized('acme#p1', 'server-tools/', 1_000, () => holding))
    await exported()
    await exported()
    const reads = store.roundTrips
    expect((await exported()).map((d) => [d.carried, d.body])).toEqual([[true, undefined]])
    expect(store.roundTrips - reads).toBe(0)
    holding = false
    expect((await exported()).map((d) => [d.carried, d.body])).toEqual([[true, 'v1']])
    expect(store.roundTrips - reads).toBe(1)
  })

  it('shows a write through one container on the next request of another', async () => {
    const { container, request } = world()
    const [a, b] = [container(), container()]
    await write(a, KEY, 'v1')
    expect(await request(async () => (await b.get(KEY))?.body)).toBe('v1')
    await write(a, KEY, 'v2')
    expect(await request(async () => (await b.get(KEY))?.body)).toBe('v2')
    expect(await request(async () => (await b.list('acme#p1', 'server-tools/')).map((d) => d.version))).toEqual([2])
  })

  it('shows a delete through one container on the next request of another, in reads, batches and listings', async () => {
    const { container, request } = world()
    const [a, b] = [container(), container()]
    await write(a, KEY, 'v1')
    await request(async () => [await b.get(KEY), await b.getMany([KEY]), await b.listVersions('acme#p1', '')])
    await a.delete(KEY)
    const after = await request(async () => ({
      one: await b.get(KEY),
      many: (await b.getMany([KEY])).size,
      versions: await b.listVersions('acme#p1', ''),
    }))
    expect(after).toEqual({ one: undefined, many: 0, versions: [] })
  })

  it('shows a request its own write on its later reads', async () => {
    const { container, request } = world()
    const a = container()
    await write(a, KEY, 'v1')
    const seen = await request(async () => {
      const before = (await a.get(KEY))?.body
      await write(a, KEY, 'v2')
      return [before, (await a.get(KEY))?.body]
    })
    expect(seen).toEqual(['v1', 'v2'])
  })

  it('caches nothing while a write is in progress, and again once an abandoned write is past the horizon', async () => {
    const { store, stamps, container, request, advance } = world()
    const a = container()
    await write(a, KEY, 'v1')
    // a writer that began and died before its end (a crashed container)
    await stamps.begin('acme', 'dead', 1_000_000)
    const reads = store.roundTrips
    for (let i = 0; i < 3; i++) await request(() => a.get(KEY))
    expect(store.roundTrips - reads).toBe(3)
    advance(15 * 60_000)
    for (let i = 0; i < 3; i++) await request(() => a.get(KEY))
    // the first of these holds no view yet (it reads beside its stamp), the second reads and keeps, the third is served
    expect(store.roundTrips - reads).toBe(5)
  })

  it('never lets a read that raced a write into a later request: the next stamp differs', async () => {
    const { store, container, request } = world()
    const [a, b] = [container(), container()]
    await write(a, KEY, 'v1')
    // b's request reads the stamp and the document (v1), then a writes v2 before b's answer is back
    const { opened: gate, open: release } = latch()
    const { opened: hasRead, open: didRead } = latch()
    const inner = store.get.bind(store)
    const slow = Object.assign(store, {
      get: async (k: DocumentKey) => {
        const read = await inner(k)
        didRead()
        await gate
        return read
      },
    })
    const racing = request(async () => {
      await b.freshen('acme')
      return b.get(KEY)
    })
    await hasRead
    await write(a, KEY, 'v2')
    release()
    expect((await racing)?.body).toBe('v1')
    slow.get = inner
    expect(await request(async () => (await b.get(KEY))?.body)).toBe('v2')
  })

  it('never keeps what a cold container read beside its stamp: a write completed between the two reads is seen by the next request', async () => {
    const { stamps, container, request } = world()
    const [a, b] = [container(), container()]
    await write(a, KEY, 'v1')
    // b holds no view of the tenant: its document read goes out beside its stamp read, and here is
    // answered first (v1); a's whole write completes before the stamp read is, which then shows
    // the generation after it — a view holding v1 under that generation would be stale
    const { opened: gate, open: release } = latch()
    const read = stamps.read.bind(stamps)
    stamps.read = async (tenant: string) => {
      await gate
      return read(tenant)
    }
    const racing = request(async () => {
      const doc = await b.get(KEY)
      // the request lasts until its stamp is back (it would read more)
      await b.freshen('acme')
      return doc
    })
    await write(a, KEY, 'v2')
    release()
    expect((await racing)?.body).toBe('v1')
    stamps.read = read
    expect(await request(async () => (await b.get(KEY))?.body)).toBe('v2')
    expect(b.stats.beside).toBe(1)
  })

  it('hands each caller its own objects: what one request changes, the next does not see', async () => {
    const { container, request } = world()
    const a = container()
    await write(a, KEY, 'v1')
    await request(async () => {
      const one = await a.get(KEY)
      if (one) one.body = 'changed by a caller'
      const listed = await a.list('acme#p1', '')
      listed[0].key.path = 'elsewhere'
    })
    const seen = await request(async () => [(await a.get(KEY))?.body, (await a.list('acme#p1', ''))[0].key.path])
    expect(seen).toEqual(['v1', KEY.path])
  })

  it('reads through outside a request', async () => {
    const { store, stamps, container } = world()
    const a = container()
    await write(a, KEY, 'v1')
    const [reads, stampReads] = [store.roundTrips, stamps.requests]
    await a.get(KEY)
    await a.get(KEY)
    expect([store.roundTrips - reads, stamps.requests - stampReads]).toEqual([2, 0])
  })

  it('keeps the bodies it holds under its byte budget, dropping the least recently used tenant', async () => {
    const { store, container, request } = world()
    const a = container({ maxBytes: 10_000 })
    const big = 'x'.repeat(4_000)
    for (const t of ['t1', 't2', 't3']) await write(a, { scope: `${t}#p`, path: 'd' }, big)
    // twice: a tenant's first request on the container keeps nothing
    for (const t of ['t1', 't2', 't3']) for (let i = 0; i < 2; i++) await request(() => a.get({ scope: `${t}#p`, path: 'd' }))
    const reads = store.roundTrips
    // t1 went when t3 came in; t2 and t3 are still held
    await request(() => a.get({ scope: 't3#p', path: 'd' }))
    await request(() => a.get({ scope: 't2#p', path: 'd' }))
    expect(store.roundTrips - reads).toBe(0)
    await request(() => a.get({ scope: 't1#p', path: 'd' }))
    expect(store.roundTrips - reads).toBe(1)
  })
})
