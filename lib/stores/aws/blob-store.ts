import type { S3Client } from '@aws-sdk/client-s3'
import type { BlobListing, BlobStore } from '../../documents/ports'
import { ServerToolsError } from '../../errors'
import { noopTracer, type Tracer } from '../../runtime/tracer'
import { loadS3Sdk } from './clients'

export interface S3BlobStoreOptions {
  /** The client, built on first use (AwsClients.s3): most requests never read a blob. */
  s3: () => Promise<S3Client>
  bucket: string
  /** A client span per request (default: none). */
  tracer?: Tracer
}

/** BlobStore on one S3 bucket. Bodies are UTF-8 text; a missing key reads as undefined. */
export class S3BlobStore implements BlobStore {
  private readonly s3: () => Promise<S3Client>
  private readonly bucket: string
  private readonly tracer: Tracer
  /** S3 requests sent (diagnostics, benches). */
  requests = 0

  constructor(opts: S3BlobStoreOptions) {
    this.s3 = opts.s3
    this.bucket = opts.bucket
    this.tracer = opts.tracer ?? noopTracer
  }

  async put(key: string, body: string) {
    const bytes = Buffer.from(body, 'utf8')
    const [s3, { PutObjectCommand }] = await Promise.all([this.s3(), loadS3Sdk()])
    await this.guard('PutObject', () =>
      s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: 'text/plain; charset=utf-8',
        }),
      ),
    )
  }

  async get(key: string) {
    const [s3, { GetObjectCommand }] = await Promise.all([this.s3(), loadS3Sdk()])
    try {
      const out = await this.guard('GetObject', () => s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })))
      if (!out.Body) return ''
      const bytes = await out.Body.transformToByteArray()
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
    } catch (e) {
      if (errorName(e) === 'NoSuchKey') return undefined
      throw e
    }
  }

  async delete(key: string) {
    const [s3, { DeleteObjectCommand }] = await Promise.all([this.s3(), loadS3Sdk()])
    await this.guard('DeleteObject', () => s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })))
  }

  async list(prefix: string, next?: string): Promise<{ blobs: BlobListing[]; next?: string }> {
    const [s3, { ListObjectsV2Command }] = await Promise.all([this.s3(), loadS3Sdk()])
    const out = await this.guard('ListObjectsV2', () =>
      s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(next ? { ContinuationToken: next } : {}) })),
    )
    return {
      blobs: (out.Contents ?? []).map((o) => ({ key: o.Key ?? '', modifiedAt: o.LastModified?.getTime() ?? 0 })),
      ...(out.IsTruncated && out.NextContinuationToken ? { next: out.NextContinuationToken } : {}),
    }
  }

  /** Counts the request, in a client span, and maps S3 throttling to THROTTLED; everything else is rethrown as is. */
  private guard<T>(operation: string, request: () => Promise<T>): Promise<T> {
    this.requests++
    const attributes = { 'rpc.system': 'aws-api', 'rpc.service': 'S3', 'rpc.method': operation, 'aws.s3.bucket': this.bucket }
    return this.tracer.span(`S3.${operation}`, { kind: 'client', attributes }, async () => {
      try {
        return await request()
      } catch (e) {
        if (errorName(e) === 'SlowDown' || errorName(e) === 'ThrottlingException') {
          throw new ServerToolsError('THROTTLED', 'the blob store is throttling requests; retry shortly', undefined, { cause: e })
        }
        throw e
      }
    })
  }
}

const errorName = (e: unknown) => (e as { name?: string } | null)?.name
