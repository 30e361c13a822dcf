/** The store contracts on DynamoDB + S3 (dynalite + s3rver), plus what only the AWS adapter promises. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { INLINE_BODY_LIMIT, scopeOf } from '../../lib/documents/ports'
import { isServerToolsError } from '../../lib/errors'
import { sha256 } from '../../lib/runtime/hash'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { DynamoClient, RETRY } from '../../lib/stores/aws/dynamo/client'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { blobStoreContract } from '../contract/blob-store.contract'
import { bodyOfBytes, documentStoreContract, expectCode } from '../contract/document-store.contract'
import {
  awsTestClients,
  type FreshDocumentStore,
  freshBlobStore,
  freshDocumentStore,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueSuffix,
} from '../support/aws'

documentStoreContract('dynamodb+s3', async (clock) => (await freshDocumentStore({ clock })).store)
documentStoreContract('dynamodb+s3, reads batched', async (clock) => (await freshDocumentStore({ clock, batchedReads: true })).store)
blobStoreContract('s3', freshBlobStore)

describe('DynamoDocumentStore on dynalite + s3rver', () => {
  let fresh: FreshDocumentStore
  const key = { scope: scopeOf('acme', 'shop'), path: 'documents/big.md' }

  beforeEach(async () => {
    fresh = await freshDocumentStore()
  })

  it('lists a layer of large documents reading only the blobs of the bodies it carries', async () => {
    for (let i = 0; i < 6; i++)
      await fresh.store.put({ key: { ...key, path: `notes/n${i}.md` }, body: bodyOfBytes(200_000), actor: 'alice' })
    const get = vi.spyOn(fresh.blobs, 'get')
    const listed = await fresh.store.listSized(key.scope, 'notes/', 450_000)
    expect(listed.map((d) => d.body !== undefined)).toEqual([true, true, false, false, false, false])
    expect(get).toHaveBeenCalledTimes(2)
  })

  it('reads no blob of a carried body the caller holds, and reads it again once a write makes a new version', async () => {
    for (let i = 0; i < 3; i++)
      await fresh.store.put({ key: { ...key, path: `notes/n${i}.md` }, body: bodyOfBytes(200_000), actor: 'alice' })
    const held = new Set<string>()
    const holding = (d: { key: { path: string }; version: number }) => held.has(`${d.key.path} ${d.version}`)
    const get = vi.spyOn(fresh.blobs, 'get')
    const first = await fresh.store.listSized(key.scope, 'notes/', 1_000_000, holding)
    expect(get).toHaveBeenCalledTimes(3)
    for (const d of first) held.add(`${d.key.path} ${d.version}`)
    const second = await fresh.store.listSized(key.scope, 'notes/', 1_000_000, holding)
    expect(second.map((d) => [d.carried, d.body])).toEqual([
      [true, undefined],
      [true, undefined],
      [true, undefined],
    ])
    expect(get).toHaveBeenCalledTimes(3)
    await fresh.store.put({ key: { ...key, path: 'notes/n1.md' }, body: bodyOfBytes(200_001), actor: 'bob' })
    const third = await fresh.store.listSized(key.scope, 'notes/', 1_000_000, holding)
    expect(third.map((d) => (d.body === undefined ? undefined : Buffer.byteLength(d.body)))).toEqual([undefined, 200_001, undefined])
    expect(get).toHaveBeenCalledTimes(4)
  })

  it('stores a small body inline in the item', async () => {
    await fresh.store.put({ key, body: 'small', actor: 'alice' })
    const item = await fresh.store.rawItem(key)
    expect(item).toMatchObject({ body: 'small', version: 1, sha256: sha256('small'), bytes: 5 })
    expect(item).not.toHaveProperty('bodyKey')
  })

  it('stores a large body in S3 under a key unique to the write and puts only bodyKey in the item', async () => {
    const body = bodyOfBytes(INLINE_BODY_LIMIT + 1)
    await fresh.store.put({ key, body, actor: 'alice' })
    const item = await fresh.store.rawItem(key)
    expect(item).not.toHaveProperty('body')
    expect(item?.bodyKey).toMatch(/^docs\/acme%23shop\/documents\/big\.md@[0-9a-f]{16}-[0-9a-f]{16}$/)
    expect(item?.bodyKey).toContain(`@${sha256(body).slice(0, 16)}-`)
    expect((await fresh.blobs.get(item!.bodyKey!)) === body).toBe(true)

    await fresh.store.put({ key, body: `${body}!`, actor: 'bob' }, { expectedVersion: 1 })
    const next = await fresh.store.rawItem(key)
    expect(next?.version).toBe(2)
    expect(next?.bodyKey).toContain(`@${sha256(`${body}!`).slice(0, 16)}-`)
    // The replaced blob is cleaned up once nothing points at it.
    expect(await fresh.blobs.get(item!.bodyKey!)).toBeUndefined()
  })

  it('switches between bodyKey and inline body without leaving the other attribute behind', async () => {
    await fresh.store.put({ key, body: bodyOfBytes(100_000), actor: 'alice' })
    const large = await fresh.store.rawItem(key)
    await fresh.store.put({ key, body: 'small now', actor: 'alice' })
    const small = await fresh.store.rawItem(key)
    expect(small).toMatchObject({ body: 'small now', version: 2 })
    expect(small).not.toHaveProperty('bodyKey')
    expect(await fresh.blobs.get(large!.bodyKey!)).toBeUndefined()
  })

  it('leaves the current document readable with its own bytes after a conflicting large write', async () => {
    const current = bodyOfBytes(80 * 1024)
    await fresh.store.put({ key, body: current, actor: 'alice' })
    const loser = bodyOfBytes(90 * 1024)
    const putBlob = vi.spyOn(fresh.blobs, 'put')
    const deleteBlob = vi.spyOn(fresh.blobs, 'delete')
    await expectCode(fresh.store.put({ key, body: loser, actor: 'mallory' }, { expectedVersion: 7 }), 'CONFLICT')
    await expectCode(fresh.store.put({ key, body: loser, actor: 'mallory' }, { createOnly: true }), 'CONFLICT')

    const read = await fresh.store.get(key)
    expect(read).toMatchObject({ version: 1, updatedBy: 'alice', sha256: sha256(current) })
    expect(read?.body === current).toBe(true)
    // The stale versioned write uploaded its bytes first and removed them again; the create-only
    // one saw the live document before uploading anything. The winner's blob stays.
    const orphanKeys = putBlob.mock.calls.map((c) => c[0])
    expect(orphanKeys).toHaveLength(1)
    expect(deleteBlob.mock.calls.map((c) => c[0])).toEqual(orphanKeys)
    for (const k of orphanKeys) expect(await fresh.blobs.get(k)).toBeUndefined()
    expect(orphanKeys).not.toContain((await fresh.store.rawItem(key))?.bodyKey)
  })

  it('keeps each of two concurrent large writers with the same body on its own blob', async () => {
    const base = await fresh.store.put({ key, body: 'base', actor: 'alice' })
    const same = bodyOfBytes(70 * 1024)
    const results = await Promise.allSettled([
      fresh.store.put({ key, body: same, actor: 'bob' }, { expectedVersion: base.version }),
      fresh.store.put({ key, body: same, actor: 'carol' }, { expectedVersion: base.version }),
    ])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    // The loser deletes only its own upload, so the winner's bytes are still there.
    expect((await fresh.store.get(key))?.body === same).toBe(true)
  })

  it('re-reads the item when a writer replaced a large body between the item read and the blob read', async () => {
    const v1 = bodyOfBytes(70 * 1024)
    const v2 = bodyOfBytes(75 * 1024)
    await fresh.store.put({ key, body: v1, actor: 'alice' })
    const realGet = fresh.blobs.get.bind(fresh.blobs)
    vi.spyOn(fresh.blobs, 'get').mockImplementationOnce(async (blobKey) => {
      // The reader holds the v1 item; v2 lands and deletes v1's blob before the reader fetches it.
      await fresh.store.put({ key, body: v2, actor: 'bob' }, { expectedVersion: 1 })
      return realGet(blobKey)
    })
    const read = await fresh.store.get(key)
    expect(read?.version).toBe(2)
    expect(read?.body === v2).toBe(true)
  })

  it('reads a large document deleted between the item read and the blob read as absent', async () => {
    await fresh.store.put({ key, body: bodyOfBytes(70 * 1024), actor: 'alice' })
    const realGet = fresh.blobs.get.bind(fresh.blobs)
    vi.spyOn(fresh.blobs, 'get').mockImplementationOnce(async (blobKey) => {
      await fresh.store.delete(key)
      return realGet(blobKey)
    })
    expect(await fresh.store.get(key)).toBeUndefined()
  })

  it('reads a cascade of two scopes with one BatchGetItem even when bodies are large', async () => {
    const tenantKey = { scope: scopeOf('acme', '_tenant'), path: key.path }
    await fresh.store.put({ key, body: bodyOfBytes(70_000), actor: 'alice' })
    await fresh.store.put({ key: tenantKey, body: bodyOfBytes(75_000), actor: 'alice' })
    const before = fresh.store.roundTrips
    const found = await fresh.store.getMany([key, tenantKey])
    expect(fresh.store.roundTrips - before).toBe(1)
    expect(found.size).toBe(2)
  })

  it('splits getMany into requests of at most 100 keys', async () => {
    const keys = Array.from({ length: 150 }, (_, i) => ({ scope: key.scope, path: `many/${String(i).padStart(3, '0')}` }))
    await Promise.all(keys.slice(0, 120).map((k) => fresh.store.put({ key: k, body: k.path, actor: 'alice' })))
    const before = fresh.store.roundTrips
    const found = await fresh.store.getMany(keys)
    expect(fresh.store.roundTrips - before).toBe(2)
    expect(found.size).toBe(120)
  })

  it('pages through a listing larger than one Query page', async () => {
    // ~60 KiB inline bodies: 1 MB of items per Query page forces several pages.
    const body = bodyOfBytes(60 * 1024)
    const paths = Array.from({ length: 40 }, (_, i) => `pages/${String(i).padStart(2, '0')}.md`)
    for (const path of paths) await fresh.store.put({ key: { scope: key.scope, path }, body, actor: 'alice' })
    const before = fresh.store.roundTrips
    const listed = await fresh.store.list(key.scope, 'pages/')
    expect(fresh.store.roundTrips - before).toBeGreaterThan(1)
    expect(listed.map((d) => d.key.path)).toEqual(paths)
  })

  it('works when given a plain DynamoDBClient instead of a document client', async () => {
    const store = new DynamoDocumentStore({ dynamo: fresh.clients.dynamo, tableName: fresh.tableName, blobs: fresh.blobs })
    await store.put({ key, body: 'via the low-level client', actor: 'alice' })
    expect((await fresh.store.get(key))?.body).toBe('via the low-level client')
  })

  it('rethrows errors it does not understand, such as a missing table', async () => {
    const store = new DynamoDocumentStore({ dynamo: fresh.clients.dynamo, tableName: `missing-${uniqueSuffix()}`, blobs: fresh.blobs })
    const error = await store.get(key).catch((e: unknown) => e)
    expect(isServerToolsError(error)).toBe(false)
    expect((error as Error).name).toBe('ResourceNotFoundException')
  })

  describe('throttling', () => {
    // dynalite (like every local emulator) never throttles, so DynamoDB's refusal comes from a
    // server on loopback that answers every request with it: the client retries it (4 attempts, as the SDK),
    // then the store must surface it as THROTTLED with the original kept as cause.
    let server: Server
    let endpoint: string
    let requests = 0
    beforeEach(async () => {
      requests = 0
      server = createServer((req, res) => {
        requests++
        req.resume().on('end', () => {
          res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' })
          res.end(
            JSON.stringify({
              __type: `com.amazonaws.dynamodb.v20120810#${throttleName}`,
              message: 'Rate of requests exceeds the allowed throughput.',
            }),
          )
        })
      })
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    afterEach(async () => {
      await new Promise((r) => server.close(r))
    })
    let throttleName = ''

    for (const name of ['ProvisionedThroughputExceededException', 'ThrottlingException']) {
      it(`maps ${name} to THROTTLED after the client's retries and keeps the original as cause`, async () => {
        throttleName = name
        const dynamo = new DynamoClient({ region: TEST_REGION, endpoint, credentials: TEST_CREDENTIALS, sleep: async () => {} })
        const store = new DynamoDocumentStore({ dynamo, tableName: 'throttled', blobs: fresh.blobs })
        try {
          const error = await expectCode(store.get(key), 'THROTTLED')
          expect(((error as Error).cause as Error).name).toBe(name)
          expect(requests).toBe(RETRY.maxAttempts)
          await expectCode(store.put({ key, body: 'x', actor: 'alice' }), 'THROTTLED')
          await expectCode(store.getMany([key]), 'THROTTLED')
          await expectCode(store.list(key.scope, ''), 'THROTTLED')
          await expectCode(store.delete(key), 'THROTTLED')
        } finally {
          dynamo.destroy()
        }
      })
    }

    it('maps a conditional check failure to CONFLICT and keeps the original as cause', async () => {
      await fresh.store.put({ key, body: 'v1', actor: 'alice' })
      const error = await expectCode(fresh.store.put({ key, body: 'v2', actor: 'bob' }, { expectedVersion: 5 }), 'CONFLICT')
      expect(((error as Error).cause as Error).name).toBe('ConditionalCheckFailedException')
    })
  })
})

describe('AWS clients', () => {
  it('address S3 by path and checksum only when required, so s3rver never stores chunk framing', async () => {
    // With the default (WHEN_SUPPORTED) a streamed PutObject reaches s3rver as aws-chunked framing
    // ("9\r\nhello ✓\r\n0\r\nx-amz-checksum-crc32:…") and is stored verbatim. S3BlobStore sends
    // Buffers today; this pins the client settings for anything that streams later.
    const s3 = await awsTestClients().s3()
    expect(s3.config.forcePathStyle).toBe(true)
    expect(await s3.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED')
    expect(await s3.config.responseChecksumValidation()).toBe('WHEN_REQUIRED')
  })
})

describe('provisioning', () => {
  it('creates a table and a bucket once and is idempotent when called again, even concurrently', async () => {
    const { dynamo: ddb, s3 } = awsTestClients()
    const name = `provision-${uniqueSuffix()}`
    await Promise.all([ensureTable(ddb, documentsTableSpec(name)), ensureTable(ddb, documentsTableSpec(name))])
    await ensureTable(ddb, documentsTableSpec(name))
    await Promise.all([ensureBucket(s3, name), ensureBucket(s3, name)])
    await ensureBucket(s3, name)
  })

  it('tolerates a TTL attribute on an emulator without a TTL API', async () => {
    const { dynamo: ddb } = awsTestClients()
    await ensureTable(ddb, { name: `ttl-${uniqueSuffix()}`, hashKey: { name: 'id', type: 'S' }, ttlAttribute: 'expiresAt' })
  })
})
