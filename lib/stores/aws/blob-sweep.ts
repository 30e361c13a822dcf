/**
 * The orphan sweep: deletes document bodies in the blob store that no item points at any more.
 *
 * The request path deletes a blob only when its write surely did not land, or after the item
 * stopped pointing at it (document-store.ts). What it cannot see is left here: the blob a write
 * replaced when that write's answer was lost (the old key travelled only in the lost answer), the
 * blob of a write whose outcome stayed unknown, a process that died between upload and item
 * write. A blob younger than `graceMs` is never touched: a write that uploaded it may still be
 * about to point an item at it (a store call ends within its deadline, seconds; the grace is an
 * hour by default). An older blob is deleted when the item its key names does not point at it —
 * read strongly, so the item cannot be about to point at it either.
 *
 * Run by the scheduled function functions/sweep.ts (sst.config.ts: once a day).
 */
import type { BlobStore } from '../../documents/ports'
import type { DynamoDocumentStore } from './document-store'

export interface SweepOptions {
  documents: DynamoDocumentStore
  blobs: BlobStore
  /** Epoch ms the sweep takes as now (blob ages are measured against it). */
  now: number
  /** Blobs younger than this are kept whatever points at them (default 1 h). */
  graceMs?: number
}

export interface SweepReport {
  examined: number
  deleted: number
  /** Keys of a shape no write makes (left alone, reported). */
  foreign: number
}

export const DEFAULT_SWEEP_GRACE_MS = 60 * 60_000

export async function sweepOrphanBlobs(opts: SweepOptions): Promise<SweepReport> {
  const grace = opts.graceMs ?? DEFAULT_SWEEP_GRACE_MS
  const report: SweepReport = { examined: 0, deleted: 0, foreign: 0 }
  let next: string | undefined
  do {
    const page = await opts.blobs.list('docs/', next)
    next = page.next
    for (const blob of page.blobs) {
      report.examined++
      if (opts.now - blob.modifiedAt < grace) continue
      const key = documentKeyOf(blob.key)
      if (!key) {
        report.foreign++
        continue
      }
      const item = await opts.documents.rawItem(key)
      if (item?.bodyKey === blob.key) continue
      await opts.blobs.delete(blob.key)
      report.deleted++
    }
  } while (next)
  return report
}

/** The document a blob key belongs to: the inverse of document-store.ts `blobKey`. */
export function documentKeyOf(blobKey: string): { scope: string; path: string } | undefined {
  const m = /^docs\/([^/]+)\/(.+)@[0-9a-f]{16}-[0-9a-f]{16}$/.exec(blobKey)
  if (!m) return undefined
  try {
    return { scope: decodeURIComponent(m[1]), path: m[2].split('/').map(decodeURIComponent).join('/') }
  } catch {
    return undefined
  }
}
