/**
 * The DocumentStore contract (DESIGN.md "Storage", EXAMPLES.md E6). Every adapter runs it:
 * test/unit/memory-stores.test.ts (memory) and test/integration/aws-stores.test.ts (dynalite + s3rver).
 */
import { beforeEach, describe, expect, it } from 'vitest'
import type { DocumentStore } from '../../lib/documents/ports'
import { docId, INLINE_BODY_LIMIT, MAX_DOCUMENT_BYTES, scopeOf, TENANT_LAYER } from '../../lib/documents/ports'
import { type ErrorCode, isServerToolsError } from '../../lib/errors'
import { ManualClock } from '../../lib/runtime/clock'
import { sha256 } from '../../lib/runtime/hash'

/** Adapters expose the number of backend requests so "one round trip" is provable. */
export type CountingDocumentStore = DocumentStore & { roundTrips: number }

export async function expectCode(promise: Promise<unknown>, code: ErrorCode) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error, `expected a ${code} error`).toBeDefined()
  expect(isServerToolsError(error) ? error.code : error).toBe(code)
  return error
}

/** A body of exactly `bytes` UTF-8 bytes mixing ASCII and multi-byte characters. */
export function bodyOfBytes(bytes: number) {
  const unit = 'line ✓ ünïcödé 日本語 🚀\n' // 34 bytes
  const unitBytes = Buffer.byteLength(unit)
  const body = unit.repeat(Math.floor(bytes / unitBytes)) + 'x'.repeat(bytes % unitBytes)
  if (Buffer.byteLength(body) !== bytes) throw new Error('bodyOfBytes miscounted')
  return body
}

export function documentStoreContract(name: string, make: (clock: ManualClock) => Promise<CountingDocumentStore>) {
  describe(`DocumentStore contract (${name})`, () => {
    let store: CountingDocumentStore
    let clock: ManualClock
    const project = scopeOf('acme', 'shop')
    const tenant = scopeOf('acme', TENANT_LAYER)
    const otherTenant = scopeOf('globex', 'shop')
    const key = (path: string, scope = project) => ({ scope, path })

    beforeEach(async () => {
      clock = new ManualClock()
      store = await make(clock)
    })

    it('returns undefined for a document that was never written', async () => {
      expect(await store.get(key('server-tools/missing.yaml'))).toBeUndefined()
    })

    it('round-trips a document with version 1, its hash and the audit fields of the writer', async () => {
      const written = await store.put({ key: key('server-tools/add.yaml'), body: 'type: add\n', actor: 'alice' })
      expect(written).toMatchObject({
        key: key('server-tools/add.yaml'),
        body: 'type: add\n',
        version: 1,
        sha256: sha256('type: add\n'),
        createdBy: 'alice',
        updatedBy: 'alice',
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      })
      const { created, ...stored } = written
      expect(created).toBe(true)
      expect(await store.get(key('server-tools/add.yaml'))).toEqual(stored)
    })

    it('keeps createdAt and createdBy on update while updatedBy, updatedAt and the version move on', async () => {
      await store.put({ key: key('a.yaml'), body: 'one', actor: 'alice' })
      clock.advance(60_000)
      const second = await store.put({ key: key('a.yaml'), body: 'two', actor: 'bob' }, { expectedVersion: 1 })
      clock.advance(60_000)
      const third = await store.put({ key: key('a.yaml'), body: 'three', actor: 'carol' })
      expect(second).toMatchObject({
        version: 2,
        createdBy: 'alice',
        updatedBy: 'bob',
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:01:00.000Z',
      })
      expect(third).toMatchObject({ version: 3, createdBy: 'alice', updatedBy: 'carol', updatedAt: '2026-01-01T00:02:00.000Z' })
      expect([second.created, third.created]).toEqual([false, false])
      const { created: _, ...stored } = third
      expect(await store.get(key('a.yaml'))).toEqual(stored)
    })

    it('rejects a create-only write when the document exists and keeps the existing body', async () => {
      await store.put({ key: key('a.yaml'), body: 'first', actor: 'alice' }, { createOnly: true })
      await expectCode(store.put({ key: key('a.yaml'), body: 'second', actor: 'bob' }, { createOnly: true }), 'CONFLICT')
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: 'first', version: 1, updatedBy: 'alice' })
    })

    it('rejects a write with a stale version and keeps the newer body', async () => {
      await store.put({ key: key('a.yaml'), body: 'v1', actor: 'alice' })
      await store.put({ key: key('a.yaml'), body: 'v2', actor: 'bob' }, { expectedVersion: 1 })
      await expectCode(store.put({ key: key('a.yaml'), body: 'stale', actor: 'carol' }, { expectedVersion: 1 }), 'CONFLICT')
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: 'v2', version: 2, updatedBy: 'bob' })
    })

    it('rejects a versioned write to a document that does not exist', async () => {
      await expectCode(store.put({ key: key('ghost.yaml'), body: 'x', actor: 'alice' }, { expectedVersion: 1 }), 'CONFLICT')
      expect(await store.get(key('ghost.yaml'))).toBeUndefined()
    })

    it('lets exactly one of two concurrent writers with the same expected version win', async () => {
      await store.put({ key: key('a.yaml'), body: 'base', actor: 'alice' })
      const results = await Promise.allSettled([
        store.put({ key: key('a.yaml'), body: 'from bob', actor: 'bob' }, { expectedVersion: 1 }),
        store.put({ key: key('a.yaml'), body: 'from carol', actor: 'carol' }, { expectedVersion: 1 }),
      ])
      const won = results.filter((r) => r.status === 'fulfilled')
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      expect(won).toHaveLength(1)
      expect(lost).toHaveLength(1)
      expect(isServerToolsError(lost[0].reason, 'CONFLICT')).toBe(true)
      const winner = (won[0] as PromiseFulfilledResult<{ body: string }>).value
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: winner.body, version: 2 })
    })

    it('writes a must-exist update over any live version and refuses it for a missing or deleted document', async () => {
      await expectCode(store.put({ key: key('a.yaml'), body: 'x', actor: 'alice' }, { mustExist: true }), 'CONFLICT')
      expect(await store.get(key('a.yaml'))).toBeUndefined()
      await store.put({ key: key('a.yaml'), body: 'one', actor: 'alice' })
      await store.put({ key: key('a.yaml'), body: 'two', actor: 'alice' })
      expect(await store.put({ key: key('a.yaml'), body: 'three', actor: 'bob' }, { mustExist: true })).toMatchObject({
        version: 3,
        created: false,
      })
      await store.delete(key('a.yaml'))
      await expectCode(store.put({ key: key('a.yaml'), body: 'four', actor: 'bob' }, { mustExist: true }), 'CONFLICT')
      await expectCode(
        store.put({ key: key('big.md'), body: 'y'.repeat(INLINE_BODY_LIMIT + 1), actor: 'bob' }, { mustExist: true }),
        'CONFLICT',
      )
      expect(await store.get(key('a.yaml'))).toBeUndefined()
      expect(await store.get(key('big.md'))).toBeUndefined()
    })

    it('lets exactly one of two concurrent create-only writers win', async () => {
      const results = await Promise.allSettled([
        store.put({ key: key('new.yaml'), body: 'from bob', actor: 'bob' }, { createOnly: true }),
        store.put({ key: key('new.yaml'), body: 'from carol', actor: 'carol' }, { createOnly: true }),
      ])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      expect((await store.get(key('new.yaml')))?.version).toBe(1)
    })

    it('counts every one of several concurrent unconditional writes as its own version', async () => {
      await Promise.all(['a', 'b', 'c', 'd'].map((actor) => store.put({ key: key('busy.yaml'), body: actor, actor })))
      const doc = await store.get(key('busy.yaml'))
      expect(doc?.version).toBe(4)
      expect(doc?.body).toBe(doc?.updatedBy)
    })

    it('lets the last of 50 concurrent unconditional writers of a large body win, each with its own version', async () => {
      const writers = Array.from({ length: 50 }, (_, i) => `writer-${String(i).padStart(2, '0')}`)
      const bodyOf = (actor: string) => `${actor}\n${'x'.repeat(INLINE_BODY_LIMIT)}`
      const results = await Promise.allSettled(
        writers.map((actor) => store.put({ key: key('documents/big.md'), body: bodyOf(actor), actor })),
      )
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String(r.reason))
      expect(rejected).toEqual([])
      const written = results.map((r) => (r as PromiseFulfilledResult<{ version: number; updatedBy: string }>).value)
      expect(written.map((w) => w.version).sort((a, b) => a - b)).toEqual(writers.map((_, i) => i + 1))
      const last = written.find((w) => w.version === 50)!
      const doc = await store.get(key('documents/big.md'))
      expect(doc).toMatchObject({ version: 50, updatedBy: last.updatedBy })
      expect(doc?.body === bodyOf(last.updatedBy)).toBe(true)
    })

    it('deletes a document, after which it reads as absent', async () => {
      await store.put({ key: key('a.yaml'), body: 'x', actor: 'alice' })
      await store.delete(key('a.yaml'))
      expect(await store.get(key('a.yaml'))).toBeUndefined()
    })

    it('reports NOT_FOUND when deleting a document that does not exist, with or without a version', async () => {
      await expectCode(store.delete(key('ghost.yaml')), 'NOT_FOUND')
      await expectCode(store.delete(key('ghost.yaml'), { expectedVersion: 3 }), 'NOT_FOUND')
    })

    it('reports CONFLICT when deleting with a stale version and keeps the document', async () => {
      await store.put({ key: key('a.yaml'), body: 'v1', actor: 'alice' })
      await store.put({ key: key('a.yaml'), body: 'v2', actor: 'alice' })
      await expectCode(store.delete(key('a.yaml'), { expectedVersion: 1 }), 'CONFLICT')
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: 'v2', version: 2 })
      await store.delete(key('a.yaml'), { expectedVersion: 2 })
      expect(await store.get(key('a.yaml'))).toBeUndefined()
    })

    it('continues the version sequence when a deleted document is written anew, with fresh audit fields', async () => {
      await store.put({ key: key('a.yaml'), body: 'old', actor: 'alice' })
      await store.put({ key: key('a.yaml'), body: 'old 2', actor: 'alice' })
      await store.delete(key('a.yaml'))
      clock.advance(1_000)
      const again = await store.put({ key: key('a.yaml'), body: 'new', actor: 'bob' }, { createOnly: true })
      expect(again).toMatchObject({ version: 4, created: true, createdBy: 'bob', createdAt: '2026-01-01T00:00:01.000Z' })
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: 'new', version: 4, createdBy: 'bob' })
      expect((await store.put({ key: key('a.yaml'), body: 'newer', actor: 'bob' })).created).toBe(false)
    })

    it('never lets a version from before a delete match the re-created document', async () => {
      await store.put({ key: key('a.yaml'), body: 'first', actor: 'alice' })
      await store.delete(key('a.yaml'))
      await store.put({ key: key('a.yaml'), body: 'second', actor: 'bob' })
      await expectCode(store.put({ key: key('a.yaml'), body: 'stale edit', actor: 'alice' }, { expectedVersion: 1 }), 'CONFLICT')
      await expectCode(store.delete(key('a.yaml'), { expectedVersion: 1 }), 'CONFLICT')
      expect(await store.get(key('a.yaml'))).toMatchObject({ body: 'second' })
    })

    it('hides a deleted document from getMany and list, and deleting it again is NOT_FOUND', async () => {
      await store.put({ key: key('gone.yaml'), body: 'x', actor: 'alice' })
      await store.put({ key: key('kept.yaml'), body: 'y', actor: 'alice' })
      await store.delete(key('gone.yaml'))
      expect([...(await store.getMany([key('gone.yaml'), key('kept.yaml')])).values()].map((d) => d.key.path)).toEqual(['kept.yaml'])
      expect((await store.list(project, '')).map((d) => d.key.path)).toEqual(['kept.yaml'])
      await expectCode(store.delete(key('gone.yaml')), 'NOT_FOUND')
      await expectCode(store.put({ key: key('gone.yaml'), body: 'z', actor: 'alice' }, { expectedVersion: 2 }), 'CONFLICT')
    })

    it('continues the version sequence for a large body written over a deleted document', async () => {
      await store.put({ key: key('big.md'), body: 'small', actor: 'alice' })
      await store.delete(key('big.md'))
      const body = bodyOfBytes(100 * 1024)
      expect((await store.put({ key: key('big.md'), body, actor: 'alice' }, { createOnly: true })).version).toBe(3)
      expect((await store.get(key('big.md')))?.body).toBe(body)
      await store.delete(key('big.md'))
      expect((await store.put({ key: key('big.md'), body, actor: 'alice' })).version).toBe(5)
    })

    it('reads the project and tenant layers in one round trip and omits missing keys', async () => {
      await store.put({ key: key('server-tools/a.yaml', project), body: 'project a', actor: 'alice' })
      await store.put({ key: key('server-tools/a.yaml', tenant), body: 'tenant a', actor: 'alice' })
      await store.put({ key: key('server-tools/b.yaml', tenant), body: 'tenant b', actor: 'alice' })
      const keys = [
        key('server-tools/a.yaml', project),
        key('server-tools/a.yaml', tenant),
        key('server-tools/b.yaml', project),
        key('server-tools/b.yaml', tenant),
      ]
      const before = store.roundTrips
      const found = await store.getMany(keys)
      expect(store.roundTrips - before).toBe(1)
      expect([...found.keys()].sort()).toEqual([docId(keys[0]), docId(keys[1]), docId(keys[3])].sort())
      expect(found.get(docId(keys[0]))?.body).toBe('project a')
      expect(found.get(docId(keys[1]))?.body).toBe('tenant a')
      expect(found.get(docId(keys[3]))?.body).toBe('tenant b')
    })

    it('tolerates the same key twice in one getMany', async () => {
      await store.put({ key: key('a.yaml'), body: 'x', actor: 'alice' })
      const found = await store.getMany([key('a.yaml'), key('a.yaml')])
      expect(found.size).toBe(1)
      expect(found.get(docId(key('a.yaml')))?.body).toBe('x')
    })

    it('reads large bodies through getMany byte-identically', async () => {
      const big = bodyOfBytes(INLINE_BODY_LIMIT + 1)
      await store.put({ key: key('big.md', tenant), body: big, actor: 'alice' })
      await store.put({ key: key('small.md', project), body: 'small', actor: 'alice' })
      const found = await store.getMany([key('big.md', tenant), key('small.md', project)])
      expect(found.get(docId(key('big.md', tenant)))?.body).toBe(big)
      expect(found.get(docId(key('small.md', project)))?.body).toBe('small')
    })

    it('lists a scope by path prefix, sorted by path, never showing another scope', async () => {
      for (const path of [
        'server-tools/zeta.yaml',
        'scripts/x.js',
        'server-tools/alpha.yaml',
        'server-tools/mid.yaml',
        'server-toolsx.yaml',
      ]) {
        await store.put({ key: key(path), body: path, actor: 'alice' })
      }
      await store.put({ key: key('server-tools/beta.yaml', tenant), body: 'tenant', actor: 'alice' })
      await store.put({ key: key('server-tools/beta.yaml', otherTenant), body: 'other tenant', actor: 'mallory' })
      const before = store.roundTrips
      const listed = await store.list(project, 'server-tools/')
      expect(store.roundTrips - before).toBe(1)
      expect(listed.map((d) => d.key.path)).toEqual(['server-tools/alpha.yaml', 'server-tools/mid.yaml', 'server-tools/zeta.yaml'])
      expect(listed.every((d) => d.key.scope === project && d.body === d.key.path)).toBe(true)
      expect((await store.list(tenant, 'server-tools/')).map((d) => d.body)).toEqual(['tenant'])
    })

    it('lists every document of a scope for an empty prefix and nothing for an unknown scope', async () => {
      await store.put({ key: key('b.md'), body: 'b', actor: 'alice' })
      await store.put({ key: key('a.md'), body: 'a', actor: 'alice' })
      await store.put({ key: key('c.md', tenant), body: 'c', actor: 'alice' })
      expect((await store.list(project, '')).map((d) => d.key.path)).toEqual(['a.md', 'b.md'])
      expect(await store.list(scopeOf('nobody', 'nothing'), '')).toEqual([])
    })

    it('lists large bodies byte-identically alongside small ones', async () => {
      const big = bodyOfBytes(100 * 1024)
      await store.put({ key: key('docs/big.md'), body: big, actor: 'alice' })
      await store.put({ key: key('docs/small.md'), body: 'small', actor: 'alice' })
      const listed = await store.list(project, 'docs/')
      expect(listed.map((d) => [d.key.path, d.body])).toEqual([
        ['docs/big.md', big],
        ['docs/small.md', 'small'],
      ])
    })

    it('keeps unicode bodies and paths byte-identical', async () => {
      const body = 'Grüße, 世界! 🚀 — naïve café\u0000\r\n\tend ǅ \u{1F468}\u200D\u{1F469}\u200D\u{1F467}'
      const path = 'documents/ünïcödé 文档.md'
      await store.put({ key: key(path), body, actor: 'zoë' })
      const read = await store.get(key(path))
      expect(read?.body).toBe(body)
      expect(Buffer.from(read!.body, 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true)
      expect(read?.sha256).toBe(sha256(body))
      expect(read?.createdBy).toBe('zoë')
      expect((await store.list(project, 'documents/')).map((d) => d.key.path)).toEqual([path])
    })

    it('round-trips an empty body', async () => {
      await store.put({ key: key('empty.md'), body: '', actor: 'alice' })
      expect(await store.get(key('empty.md'))).toMatchObject({ body: '', version: 1, sha256: sha256('') })
    })

    it('round-trips a 200 KiB body byte-identically', async () => {
      const body = bodyOfBytes(200 * 1024)
      const written = await store.put({ key: key('big.md'), body, actor: 'alice' })
      expect(written).toMatchObject({ version: 1, sha256: sha256(body) })
      const read = await store.get(key('big.md'))
      expect(read?.sha256).toBe(sha256(body))
      expect(read?.body === body).toBe(true)
    })

    it('accepts a body of exactly the inline limit and exactly the maximum size', async () => {
      const atInline = bodyOfBytes(INLINE_BODY_LIMIT)
      const atMax = bodyOfBytes(MAX_DOCUMENT_BYTES)
      await store.put({ key: key('inline.md'), body: atInline, actor: 'alice' })
      await store.put({ key: key('max.md'), body: atMax, actor: 'alice' })
      expect((await store.get(key('inline.md')))?.body === atInline).toBe(true)
      expect((await store.get(key('max.md')))?.body === atMax).toBe(true)
    })

    it('rejects a body over 1 MiB as TOO_LARGE and writes nothing', async () => {
      await expectCode(store.put({ key: key('huge.md'), body: bodyOfBytes(MAX_DOCUMENT_BYTES + 1), actor: 'alice' }), 'TOO_LARGE')
      expect(await store.get(key('huge.md'))).toBeUndefined()
    })

    it('measures the limit in UTF-8 bytes, not characters', async () => {
      const chars = '€'.repeat(Math.floor(MAX_DOCUMENT_BYTES / 3) + 1) // 3 bytes each, fewer chars than the limit
      expect(chars.length).toBeLessThan(MAX_DOCUMENT_BYTES)
      await expectCode(store.put({ key: key('euro.md'), body: chars, actor: 'alice' }), 'TOO_LARGE')
    })

    it('updates a large body to a small one and back, reading the right bytes each time', async () => {
      const big1 = bodyOfBytes(150 * 1024)
      const big2 = `${bodyOfBytes(90 * 1024)}second`
      await store.put({ key: key('flip.md'), body: big1, actor: 'alice' })
      const small = await store.put({ key: key('flip.md'), body: 'tiny', actor: 'bob' }, { expectedVersion: 1 })
      expect(small.version).toBe(2)
      expect(await store.get(key('flip.md'))).toMatchObject({ body: 'tiny', version: 2, createdBy: 'alice' })
      await store.put({ key: key('flip.md'), body: big2, actor: 'carol' }, { expectedVersion: 2 })
      const read = await store.get(key('flip.md'))
      expect(read?.version).toBe(3)
      expect(read?.body === big2).toBe(true)
      await store.put({ key: key('flip.md'), body: big1, actor: 'dave' })
      expect((await store.get(key('flip.md')))?.body === big1).toBe(true)
    })

    it('deletes a large document completely', async () => {
      await store.put({ key: key('big.md'), body: bodyOfBytes(80 * 1024), actor: 'alice' })
      await store.delete(key('big.md'), { expectedVersion: 1 })
      expect(await store.get(key('big.md'))).toBeUndefined()
      expect(await store.getMany([key('big.md')])).toEqual(new Map())
    })

    it('rejects a stale large write and keeps the newer large body', async () => {
      const v1 = bodyOfBytes(70 * 1024)
      const v2 = bodyOfBytes(71 * 1024)
      await store.put({ key: key('big.md'), body: v1, actor: 'alice' })
      await store.put({ key: key('big.md'), body: v2, actor: 'bob' }, { expectedVersion: 1 })
      await expectCode(store.put({ key: key('big.md'), body: bodyOfBytes(72 * 1024), actor: 'carol' }, { expectedVersion: 1 }), 'CONFLICT')
      const read = await store.get(key('big.md'))
      expect(read?.version).toBe(2)
      expect(read?.body === v2).toBe(true)
    })

    it('stores the JSON form of a document with its body and returns it from get, getMany and list', async () => {
      const json = '{"type":"add","description":"Adds."}'
      const written = await store.put({ key: key('server-tools/add.yaml'), body: 'type: add\ndescription: Adds.\n', json, actor: 'alice' })
      expect(written.json).toBe(json)
      expect((await store.get(key('server-tools/add.yaml')))?.json).toBe(json)
      expect((await store.getMany([key('server-tools/add.yaml')])).get(docId(key('server-tools/add.yaml')))?.json).toBe(json)
      expect((await store.list(project, 'server-tools/')).map((d) => d.json)).toEqual([json])
    })

    it("never keeps an earlier version's JSON form: a write without one, a large body or a delete drops it", async () => {
      const path = 'server-tools/add.yaml'
      await store.put({ key: key(path), body: 'type: add\n', json: '{"type":"add"}', actor: 'alice' })
      await store.put({ key: key(path), body: 'type: sub\n', actor: 'bob' })
      expect((await store.get(key(path)))?.json).toBeUndefined()

      await store.put({ key: key(path), body: 'type: add\n', json: '{"type":"add"}', actor: 'alice' })
      const large = `{"type":"add","description":"${'x'.repeat(INLINE_BODY_LIMIT)}"}`
      const big = await store.put({ key: key(path), body: large, json: large, actor: 'bob' })
      expect(big.json).toBeUndefined()
      expect((await store.get(key(path)))?.json).toBeUndefined()

      await store.put({ key: key(path), body: 'type: add\n', json: '{"type":"add"}', actor: 'alice' })
      await store.delete(key(path))
      await store.put({ key: key(path), body: 'type: mul\n', actor: 'carol' })
      expect((await store.get(key(path)))?.json).toBeUndefined()
    })

    it('lists every live document under a prefix with its UTF-8 size, carrying bodies in path order while they fit', async () => {
      const big = bodyOfBytes(INLINE_BODY_LIMIT + 10)
      await store.put({ key: key('notes/a.md'), body: big, actor: 'alice' })
      await store.put({ key: key('notes/b.md'), body: bodyOfBytes(300), actor: 'alice' })
      await store.put({ key: key('notes/c.md'), body: big, actor: 'bob' })
      await store.put({ key: key('notes/d.md'), body: 'd', actor: 'alice' })
      await store.put({ key: key('notes/gone.md'), body: 'x', actor: 'alice' })
      await store.delete(key('notes/gone.md'))
      await store.put({ key: key('other/e.md'), body: 'e', actor: 'alice' })
      const listed = await store.listSized(project, 'notes/', INLINE_BODY_LIMIT + 10 + 300)
      expect(listed.map((d) => [d.key.path, d.bytes, d.body === undefined ? undefined : Buffer.byteLength(d.body)])).toEqual([
        ['notes/a.md', INLINE_BODY_LIMIT + 10, INLINE_BODY_LIMIT + 10],
        ['notes/b.md', 300, 300],
        ['notes/c.md', INLINE_BODY_LIMIT + 10, undefined],
        ['notes/d.md', 1, undefined],
      ])
      expect(listed[0].body === big).toBe(true)
      const all = await store.list(project, 'notes/')
      expect(listed.map((d) => d.carried)).toEqual([true, true, false, false])
      expect(listed.map(({ body: _, bytes: __, carried: ___, ...meta }) => meta)).toEqual(all.map(({ body: _, json: __, ...meta }) => meta))
      expect((await store.listSized(project, 'notes/', 0)).every((d) => d.body === undefined && !d.carried)).toBe(true)
    })

    it('carries the bodies the caller holds without handing them over, and carries the same documents as without', async () => {
      const big = bodyOfBytes(INLINE_BODY_LIMIT + 10)
      await store.put({ key: key('notes/a.md'), body: big, actor: 'alice' })
      await store.put({ key: key('notes/b.md'), body: bodyOfBytes(300), actor: 'alice' })
      await store.put({ key: key('notes/c.md'), body: big, actor: 'bob' })
      await store.put({ key: key('notes/a.md'), body: `${big.slice(1)}!`, actor: 'alice' })
      const bodies: Record<string, string> = { 'notes/a.md': `${big.slice(1)}!`, 'notes/b.md': bodyOfBytes(300) }
      const asked: string[] = []
      const listed = await store.listSized(project, 'notes/', INLINE_BODY_LIMIT + 10 + 300, (d) => {
        asked.push(`${d.key.scope} ${d.key.path} ${d.version} ${d.sha256 === sha256(bodies[d.key.path])}`)
        return d.key.path === 'notes/a.md' && d.version === 2
      })
      expect(listed.map((d) => [d.key.path, d.version, d.carried, d.body === undefined ? undefined : Buffer.byteLength(d.body)])).toEqual([
        ['notes/a.md', 2, true, undefined],
        ['notes/b.md', 1, true, 300],
        ['notes/c.md', 1, false, undefined],
      ])
      // asked only about the bodies the listing carries, each under the version it lists
      expect(asked).toEqual([`${project} notes/a.md 2 true`, `${project} notes/b.md 1 true`])
      // an earlier version held is not this one: the body is handed over
      const stale = await store.listSized(project, 'notes/', INLINE_BODY_LIMIT + 10, (d) => d.key.path === 'notes/a.md' && d.version === 1)
      expect(stale[0].body === `${big.slice(1)}!`).toBe(true)
    })

    it('lists the path and version of every live document under a prefix, sorted, in one round trip', async () => {
      await store.put({ key: key('server-tools/b.yaml'), body: 'b', actor: 'alice' })
      await store.put({ key: key('server-tools/a.yaml'), body: bodyOfBytes(INLINE_BODY_LIMIT + 10), actor: 'alice' })
      await store.put({ key: key('server-tools/a.yaml'), body: 'a2', actor: 'bob' })
      await store.put({ key: key('server-tools/gone.yaml'), body: 'x', actor: 'alice' })
      await store.delete(key('server-tools/gone.yaml'))
      await store.put({ key: key('documents/c.md'), body: 'c', actor: 'alice' })
      await store.put({ key: key('server-tools/other.yaml', otherTenant), body: 'o', actor: 'alice' })
      const before = store.roundTrips
      expect(await store.listVersions(project, 'server-tools/')).toEqual([
        { path: 'server-tools/a.yaml', version: 2 },
        { path: 'server-tools/b.yaml', version: 1 },
      ])
      expect(store.roundTrips - before).toBe(1)
      expect((await store.listVersions(project, '')).map((d) => d.path)).toEqual([
        'documents/c.md',
        'server-tools/a.yaml',
        'server-tools/b.yaml',
      ])
      expect(await store.listVersions(scopeOf('nobody', 'none'), '')).toEqual([])
    })

    it('returns copies, so mutating a result never changes the store', async () => {
      const written = await store.put({ key: key('a.yaml'), body: 'x', actor: 'alice' })
      written.body = 'mutated'
      written.key.path = 'elsewhere'
      const read = await store.get(key('a.yaml'))
      expect(read?.body).toBe('x')
      read!.body = 'mutated again'
      expect((await store.get(key('a.yaml')))?.body).toBe('x')
    })
  })
}
