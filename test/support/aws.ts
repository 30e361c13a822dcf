/**
 * Helpers for tests that talk to the emulators started by test/support/global-setup.ts.
 * Only lib/stores/aws imports @aws-sdk/*; tests go through it.
 */
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { ManualClock, type Clock } from '../../lib/runtime/clock'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { type AwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'

/** s3rver accepts these; dynalite accepts anything. */
export const TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
export const TEST_REGION = 'us-east-1'

let shared: AwsClients | undefined

/** Clients pointed at this run's dynalite and s3rver (one set per test worker). */
export function awsTestClients(): AwsClients {
  shared ??= makeAwsClients({
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    dynamoEndpoint: inject('dynamoEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
  })
  return shared
}

/** A lower-case random suffix valid in both table and bucket names. */
export const uniqueSuffix = () => `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`

export interface FreshDocumentStore {
  store: DynamoDocumentStore
  blobs: S3BlobStore
  clients: AwsClients
  tableName: string
  bucket: string
  clock: Clock
}

/** A DynamoDocumentStore on its own new table and bucket, so no two tests share state. */
export async function freshDocumentStore(opts: { clock?: Clock } = {}): Promise<FreshDocumentStore> {
  const clients = awsTestClients()
  const suffix = uniqueSuffix()
  const tableName = `documents-${suffix}`
  const bucket = `blobs-${suffix}`
  await Promise.all([ensureTable(clients.ddb, documentsTableSpec(tableName)), ensureBucket(clients.s3, bucket)])
  const clock = opts.clock ?? new ManualClock()
  const blobs = new S3BlobStore({ s3: clients.s3, bucket })
  const store = new DynamoDocumentStore({ ddb: clients.doc, tableName, blobs, clock })
  return { store, blobs, clients, tableName, bucket, clock }
}

/** A fresh, empty bucket wrapped as a BlobStore. */
export async function freshBlobStore(): Promise<S3BlobStore> {
  const clients = awsTestClients()
  const bucket = `blobs-${uniqueSuffix()}`
  await ensureBucket(clients.s3, bucket)
  return new S3BlobStore({ s3: clients.s3, bucket })
}

/**
 * The Lambda entry's environment pointed at the emulators (AWS settings, SST links, secret),
 * then a cold start: the module graph evaluated again with it. SSM has no emulator, so its
 * endpoint is a closed loopback port: a stray secret read can never leave the machine.
 */
export async function coldStartLambda<H>(links: Record<string, string>, jwtSecret: string): Promise<H> {
  const { vi } = await import('vitest')
  vi.stubEnv('SST_RESOURCE_App', JSON.stringify({ name: 'server-tools', stage: 'test' }))
  for (const [name, resource] of Object.entries(links)) {
    vi.stubEnv(`SST_RESOURCE_${name}`, JSON.stringify({ name: resource, type: name === 'Blobs' ? 'sst.aws.Bucket' : 'sst.aws.Dynamo' }))
  }
  vi.stubEnv('AUTH_JWT_SECRET', jwtSecret)
  vi.stubEnv('DYNAMODB_ENDPOINT', inject('dynamoEndpoint'))
  vi.stubEnv('S3_ENDPOINT', inject('s3Endpoint'))
  vi.stubEnv('SSM_ENDPOINT', 'http://127.0.0.1:9')
  vi.stubEnv('AWS_REGION', TEST_REGION)
  vi.stubEnv('AWS_ACCESS_KEY_ID', TEST_CREDENTIALS.accessKeyId)
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', TEST_CREDENTIALS.secretAccessKey)
  vi.stubEnv('LOG_LEVEL', 'error')
  vi.resetModules()
  return (await import('../../functions/api')).handler as unknown as H
}
