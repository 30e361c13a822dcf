import type { BlobListing, BlobStore } from '../../documents/ports'
import { type Clock, systemClock } from '../../runtime/clock'

/** Keys per listing page, as S3's ListObjectsV2 answers at most. */
const PAGE = 1000

/** In-process BlobStore with the same promises as S3BlobStore (deleting a missing key is a no-op). */
export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, { body: string; modifiedAt: number }>()
  /** Requests served, mirroring S3BlobStore.requests. */
  requests = 0

  constructor(private readonly clock: Clock = systemClock) {}

  async put(key: string, body: string) {
    this.requests++
    this.blobs.set(key, { body, modifiedAt: this.clock.now() })
  }

  async get(key: string) {
    this.requests++
    return this.blobs.get(key)?.body
  }

  async delete(key: string) {
    this.requests++
    this.blobs.delete(key)
  }

  async list(prefix: string, next?: string): Promise<{ blobs: BlobListing[]; next?: string }> {
    this.requests++
    const keys = this.keys().filter((k) => k.startsWith(prefix) && (next === undefined || k > next))
    const page = keys.slice(0, PAGE).map((key) => ({ key, modifiedAt: this.blobs.get(key)!.modifiedAt }))
    return { blobs: page, ...(keys.length > PAGE ? { next: page[page.length - 1].key } : {}) }
  }

  /** Keys currently stored, sorted (diagnostics and tests). */
  keys() {
    return [...this.blobs.keys()].sort()
  }
}
