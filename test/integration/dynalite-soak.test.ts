/**
 * The embedded store does not leak (issue 10 F9): dynalite 4.0.0 never closed its level
 * iterators (patches/dynalite+4.0.0.patch), so every Query kept one, with its snapshot, attached
 * to the database: ~13 KB of heap per Query on the on-disk store `npm start` uses. Measured here
 * as heap after a full GC — a memory bound, not a timing. RSS over a long run: `npm run bench -- soak`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startEmulators } from '../../functions/emulators'
import { ManualClock } from '../../lib/runtime/clock'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { destroyAwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { TEST_CREDENTIALS, TEST_REGION } from '../support/aws'
import { fullGc as gc } from '../support/gc'

/** Heap and RSS in MB after a full GC. */
const memory = () => {
  gc()
  gc()
  const { heapUsed, rss } = process.memoryUsage()
  return { heap: heapUsed / 1048576, rss: rss / 1048576 }
}

const dir = mkdtempSync(join(tmpdir(), 'server-tools-soak-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('dynalite under a soak', () => {
  it('keeps heap and RSS flat over 3,000 listings on the on-disk store npm start uses', async () => {
    const emulators = await startEmulators({ s3Directory: join(dir, 's3'), dynamoPath: join(dir, 'dynamodb') })
    const clients = makeAwsClients({
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
      dynamoEndpoint: emulators.dynamoEndpoint,
      s3Endpoint: emulators.s3Endpoint,
    })
    try {
      await ensureTable(clients.dynamo, documentsTableSpec('soak-documents'))
      await ensureBucket(clients.s3, 'soak-blobs')
      const store = new DynamoDocumentStore({
        dynamo: clients.dynamo,
        tableName: 'soak-documents',
        blobs: new S3BlobStore({ s3: clients.s3, bucket: 'soak-blobs' }),
        clock: new ManualClock(),
      })
      for (let i = 0; i < 20; i++)
        await store.put(
          {
            key: { scope: 'acme#p1', path: `server-tools/t${i}.yaml` },
            body: `type: doc_lookup\\ndescription: ${'x'.repeat(400)}\\n`,
            actor: 'soak',
          },
          {},
        )
      const list = () => store.list('acme#p1', 'server-tools/')
      for (let i = 0; i < 300; i++) await list() // warm-up: JIT, SDK, level caches
      const before = memory()
      for (let i = 0; i < 3_000; i++) expect((await list()).length).toBe(20)
      const after = memory()
      // unpatched: heap +39–52 MB and RSS +140 MB over 3,000 Queries, never released; patched: heap
      // ~+1 MB, RSS a one-time +20–45 MB (LevelDB's caches filling) that does not grow with the count
      expect(after.heap - before.heap).toBeLessThan(10)
      expect(after.rss - before.rss).toBeLessThan(80)
    } finally {
      destroyAwsClients(clients)
      await emulators.close()
    }
  }, 120_000)
})
