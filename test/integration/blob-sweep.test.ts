/**
 * The orphan sweep (lib/stores/aws/blob-sweep.ts) on dynalite + s3rver: blobs nothing points at
 * are deleted once older than the grace, the blob a document points at never is, and what no
 * write makes is left alone. Orphans are made the way the service makes them: a write whose
 * answer is lost leaves the blob it replaced (test/support/lost-answer-proxy.ts).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { INLINE_BODY_LIMIT, scopeOf } from '../../lib/documents/ports'
import { DEFAULT_SWEEP_GRACE_MS, documentKeyOf, sweepOrphanBlobs } from '../../lib/stores/aws/blob-sweep'
import { blobKey, DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { DynamoClient } from '../../lib/stores/aws/dynamo/client'
import { bodyOfBytes } from '../contract/document-store.contract'
import { freshDocumentStore, TEST_CREDENTIALS, TEST_REGION } from '../support/aws'
import { type LostAnswerProxy, loseFirstAttempts, startLostAnswerProxy } from '../support/lost-answer-proxy'

let proxy: LostAnswerProxy
let dynamo: DynamoClient
beforeAll(async () => {
  proxy = await startLostAnswerProxy(inject('dynamoEndpoint'))
  dynamo = new DynamoClient({ region: TEST_REGION, endpoint: proxy.endpoint, credentials: TEST_CREDENTIALS, sleep: async () => {} })
})
afterAll(async () => {
  dynamo.destroy()
  await proxy.close()
})

const big = (n: number) => bodyOfBytes(INLINE_BODY_LIMIT + n)

describe('the orphan blob sweep', () => {
  it('deletes the blobs a lost answer left behind once they are older than the grace, and keeps every blob a document points at', async () => {
    const fresh = await freshDocumentStore()
    const docs = new DynamoDocumentStore({ dynamo, tableName: fresh.tableName, blobs: fresh.blobs, clock: fresh.clock })
    const a = { scope: scopeOf('acme', 'shop'), path: 'documents/a.md' }
    const b = { scope: scopeOf('acme', 'shop'), path: 'scripts/deep/b 100%.js' }
    await docs.put({ key: a, body: big(1), actor: 'alice' })
    await docs.put({ key: b, body: big(2), actor: 'alice' })
    // two replacements and a delete whose answers are lost: the blobs they replaced stay behind
    proxy.lose = loseFirstAttempts('reset', 3)
    await docs.put({ key: a, body: big(3), actor: 'bob' })
    await docs.put({ key: b, body: big(4), actor: 'bob' }, { expectedVersion: 1 })
    await docs.delete(a)
    proxy.lose = () => undefined
    expect(proxy.lost).toHaveLength(3)
    // something no write makes
    await fresh.blobs.put('docs/not-a-blob-key', 'x')

    const before = (await fresh.blobs.list('docs/')).blobs.map((x) => x.key)
    expect(before).toHaveLength(5)
    const current = (await fresh.store.rawItem(b))!.bodyKey!

    // within the grace nothing is touched
    expect(await sweepOrphanBlobs({ documents: fresh.store, blobs: fresh.blobs, now: Date.now() })).toEqual({
      examined: 5,
      deleted: 0,
      foreign: 0,
    })
    const later = Date.now() + DEFAULT_SWEEP_GRACE_MS + 60_000
    expect(await sweepOrphanBlobs({ documents: fresh.store, blobs: fresh.blobs, now: later })).toEqual({
      examined: 5,
      deleted: 3,
      foreign: 1,
    })
    expect((await fresh.blobs.list('docs/')).blobs.map((x) => x.key).sort()).toEqual(['docs/not-a-blob-key', current].sort())
    expect((await fresh.store.get(b))?.version).toBe(2)
    expect(await fresh.store.get(a)).toBeUndefined()
  })

  it('reads back the document key of every blob key a write makes', () => {
    for (const key of [
      { scope: 'acme#shop', path: 'documents/a.md' },
      { scope: 'a b#_tenant', path: 'scripts/x/y z%2F@1.js' },
      { scope: 'ünï#cödé', path: '日本/語.md' },
    ])
      expect(documentKeyOf(blobKey(key, 'f'.repeat(64)))).toEqual(key)
    expect(documentKeyOf('docs/x/y')).toBeUndefined()
  })
})
