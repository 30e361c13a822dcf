/** The BlobStore contract, run against MemoryBlobStore and S3BlobStore (on s3rver). */
import { beforeEach, describe, expect, it } from 'vitest'
import type { BlobStore } from '../../lib/documents/ports'
import { bodyOfBytes } from './document-store.contract'

export function blobStoreContract(name: string, make: () => Promise<BlobStore>) {
  describe(`BlobStore contract (${name})`, () => {
    let blobs: BlobStore
    beforeEach(async () => {
      blobs = await make()
    })

    it('lists the keys under a prefix in key order, each with when it was written', async () => {
      const before = Date.now()
      for (const key of ['docs/b@2', 'docs/a@1', 'other/x', 'docs/c/d@3']) await blobs.put(key, 'x')
      const after = Date.now()
      const page = await blobs.list('docs/')
      expect(page.blobs.map((b) => b.key)).toEqual(['docs/a@1', 'docs/b@2', 'docs/c/d@3'])
      expect(page.next).toBeUndefined()
      // S3 keeps whole seconds
      for (const b of page.blobs) expect(b.modifiedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000)
      for (const b of page.blobs) expect(b.modifiedAt).toBeLessThanOrEqual(after)
      expect((await blobs.list('none/')).blobs).toEqual([])
    })

    it('reads a missing key as undefined', async () => {
      expect(await blobs.get('docs/never-written')).toBeUndefined()
    })

    it('round-trips a body under a key with slashes, hashes and percent signs', async () => {
      const key = 'docs/acme%23shop/server-tools/a.yaml@v1-abc'
      await blobs.put(key, 'hello')
      expect(await blobs.get(key)).toBe('hello')
    })

    it('keeps unicode bodies byte-identical', async () => {
      const body = 'Grüße 世界 🚀 \u0000 \r\n end'
      await blobs.put('u', body)
      const read = await blobs.get('u')
      expect(Buffer.from(read!, 'utf8').equals(Buffer.from(body, 'utf8'))).toBe(true)
    })

    it('round-trips a 1 MiB body byte-identically', async () => {
      const body = bodyOfBytes(1024 * 1024)
      await blobs.put('big', body)
      expect((await blobs.get('big')) === body).toBe(true)
    })

    it('round-trips an empty body', async () => {
      await blobs.put('empty', '')
      expect(await blobs.get('empty')).toBe('')
    })

    it('replaces the body when a key is written again', async () => {
      await blobs.put('k', 'one')
      await blobs.put('k', 'two')
      expect(await blobs.get('k')).toBe('two')
    })

    it('deletes a body, after which the key reads as undefined', async () => {
      await blobs.put('k', 'one')
      await blobs.delete('k')
      expect(await blobs.get('k')).toBeUndefined()
    })

    it('treats deleting a missing key as done', async () => {
      await expect(blobs.delete('never-written')).resolves.toBeUndefined()
    })
  })
}
