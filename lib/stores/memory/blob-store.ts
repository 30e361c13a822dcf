import type { BlobStore } from '../../documents/ports'

/** In-process BlobStore with the same promises as S3BlobStore (deleting a missing key is a no-op). */
export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, string>()
  /** Requests served, mirroring S3BlobStore.requests. */
  requests = 0

  async put(key: string, body: string) {
    this.requests++
    this.blobs.set(key, body)
  }

  async get(key: string) {
    this.requests++
    return this.blobs.get(key)
  }

  async delete(key: string) {
    this.requests++
    this.blobs.delete(key)
  }

  /** Keys currently stored, sorted (diagnostics and tests). */
  keys() {
    return [...this.blobs.keys()].sort()
  }
}
