/**
 * AWS SDK clients for the stores. Everything arrives as arguments (this module reads no environment): the edge
 * (functions/, test/support/) decides endpoints and credentials. With no region or credentials the
 * SDK's own default chain applies (which is what a Lambda wants).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { S3Client } from '@aws-sdk/client-s3'
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'

export interface AwsClientOptions {
  region?: string
  /** e.g. the dynalite URL in tests and `npm start`; omit for the real service. */
  dynamoEndpoint?: string
  /** e.g. the s3rver URL in tests and `npm start`; omit for the real service. */
  s3Endpoint?: string
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
}

export interface AwsClients {
  ddb: DynamoDBClient
  doc: DynamoDBDocumentClient
  /**
   * S3 holds only document bodies over the inline limit, so most requests never touch it: the
   * client, and the ~100 KiB of SDK code behind it, are loaded on first use (cold start, README).
   */
  s3(): Promise<S3Client>
  /** Closes the sockets of every client built so far. */
  destroy(): void
}

let s3Sdk: Promise<typeof import('@aws-sdk/client-s3')> | undefined
/** The S3 SDK module, imported once, when something first needs it. */
export const loadS3Sdk = () => (s3Sdk ??= import('@aws-sdk/client-s3'))

export function makeAwsClients(opts: AwsClientOptions = {}): AwsClients {
  const common = {
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  }
  const ddb = new DynamoDBClient({ ...common, ...(opts.dynamoEndpoint ? { endpoint: opts.dynamoEndpoint } : {}) })
  const doc = DynamoDBDocumentClient.from(ddb, {
    marshallOptions: { removeUndefinedValues: true },
  })
  let s3: Promise<S3Client> | undefined
  let built: S3Client | undefined
  const makeS3 = async () => {
    const { S3Client } = await loadS3Sdk()
    return (built = new S3Client({
      ...common,
      ...(opts.s3Endpoint ? { endpoint: opts.s3Endpoint } : {}),
      // Emulators (s3rver) and custom endpoints address buckets by path, not by subdomain.
      forcePathStyle: true,
      // With the default (WHEN_SUPPORTED) the SDK sends aws-chunked bodies with trailing checksums;
      // s3rver stores that chunk framing as the object's bytes. Only checksum when S3 requires it.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }))
  }
  return {
    ddb,
    doc,
    s3: () => (s3 ??= makeS3()),
    destroy() {
      doc.destroy()
      ddb.destroy()
      built?.destroy()
    },
  }
}

/** Closes the sockets of the clients (tests, `npm start` shutdown). */
export function destroyAwsClients(clients: AwsClients) {
  clients.destroy()
}
