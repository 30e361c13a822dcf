/**
 * AWS SDK clients for the stores. Everything arrives as arguments (this module reads no environment): the edge
 * (functions/, test/support/) decides endpoints and credentials. With no region or credentials the
 * SDK's own default chain applies (which is what a Lambda wants).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { S3Client } from '@aws-sdk/client-s3'
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
  s3: S3Client
}

export function makeAwsClients(opts: AwsClientOptions = {}): AwsClients {
  const common = {
    ...(opts.region ? { region: opts.region } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  }
  const ddb = new DynamoDBClient({ ...common, ...(opts.dynamoEndpoint ? { endpoint: opts.dynamoEndpoint } : {}) })
  const doc = DynamoDBDocumentClient.from(ddb, {
    marshallOptions: { removeUndefinedValues: true },
  })
  const s3 = new S3Client({
    ...common,
    ...(opts.s3Endpoint ? { endpoint: opts.s3Endpoint } : {}),
    // Emulators (s3rver) and custom endpoints address buckets by path, not by subdomain.
    forcePathStyle: true,
    // With the default (WHEN_SUPPORTED) the SDK sends aws-chunked bodies with trailing checksums;
    // s3rver stores that chunk framing as the object's bytes. Only checksum when S3 requires it.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return { ddb, doc, s3 }
}

/** Closes the sockets of all three clients (tests, `npm start` shutdown). */
export function destroyAwsClients(clients: AwsClients) {
  clients.doc.destroy()
  clients.ddb.destroy()
  clients.s3.destroy()
}
