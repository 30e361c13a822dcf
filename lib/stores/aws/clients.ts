/**
 * AWS clients for the stores. Everything arrives as arguments (this module reads no environment): the edge
 * (functions/, test/support/) decides region, endpoints and credentials. DynamoDB goes through our
 * own client (./dynamo/client.ts, docs/operations/cold-start-and-latency.md); S3 through the SDK, loaded when a
 * large body is first touched. With no credentials given, the SDK's default chain applies, loaded
 * on first use (a Lambda passes the role credentials of its environment instead).
 */
import type { S3Client } from '@aws-sdk/client-s3'
import type { Metrics } from '../../runtime/metrics'
import type { Tracer } from '../../runtime/tracer'
import { DynamoClient } from './dynamo/client'
import { sdkDefaultCredentials } from './dynamo/credentials'
import type { AwsCredentials } from './dynamo/sigv4'

export interface AwsClientOptions {
  /** Required for DynamoDB (signing and the default endpoint). */
  region: string
  /** e.g. the dynalite URL in tests and `npm start`; omit for the real service. */
  dynamoEndpoint?: string
  /** The FIPS / dual-stack DynamoDB endpoint (S3's SDK client reads the same settings itself). */
  useFips?: boolean
  useDualStack?: boolean
  /** The longest a DynamoDB call may take, its retries included (DynamoClientOptions.deadlineMs). */
  storeCallDeadlineMs?: number
  /** e.g. the s3rver URL in tests and `npm start`; omit for the real service. */
  s3Endpoint?: string
  credentials?: AwsCredentials
  /** DynamoDB's own, where they differ from `credentials` (`npm start`'s embedded dynalite serves only a key made at start). */
  dynamoCredentials?: AwsCredentials
  /** DynamoDB client spans, retries and throttles counted (default: neither). */
  tracer?: Tracer
  metrics?: Metrics
}

export interface AwsClients {
  dynamo: DynamoClient
  /**
   * S3 holds only document bodies over the inline limit, so most requests never touch it: the
   * client, and the ~100 KiB of SDK code behind it, are loaded on first use (docs/operations/cold-start-and-latency.md).
   */
  s3(): Promise<S3Client>
  /** Closes the sockets of every client built so far. */
  destroy(): void
}

let s3Sdk: Promise<typeof import('@aws-sdk/client-s3')> | undefined
/** The S3 SDK module, imported once, when something first needs it. */
export const loadS3Sdk = () => (s3Sdk ??= import('@aws-sdk/client-s3'))

export function makeAwsClients(opts: AwsClientOptions): AwsClients {
  const common = {
    region: opts.region,
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  }
  const dynamo = new DynamoClient({
    region: opts.region,
    endpoint: opts.dynamoEndpoint,
    useFips: opts.useFips,
    useDualStack: opts.useDualStack,
    deadlineMs: opts.storeCallDeadlineMs,
    credentials: opts.dynamoCredentials ?? opts.credentials ?? sdkDefaultCredentials(),
    tracer: opts.tracer,
    metrics: opts.metrics,
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
    dynamo,
    s3: () => (s3 ??= makeS3()),
    destroy() {
      dynamo.destroy()
      built?.destroy()
    },
  }
}

/** Closes the sockets of the clients (tests, `npm start` shutdown). */
export function destroyAwsClients(clients: AwsClients) {
  clients.destroy()
}
