/**
 * Scheduled entry (sst.config.ts: `BlobSweep`, once a day): the orphan sweep of document bodies
 * (lib/stores/aws/blob-sweep.ts). Not on any request path; it reads the same links and settings
 * as the API function.
 */
import { S3BlobStore } from '../lib/stores/aws/blob-store'
import { sweepOrphanBlobs } from '../lib/stores/aws/blob-sweep'
import { makeAwsClients } from '../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../lib/stores/aws/document-store'
import { awsCredentialsFromEnv, awsRegionFromEnv, envLogger, STORE_CALL_DEADLINE_MS, storeSettingsFromEnv } from './settings'
import { Resource } from './sst-resource'

export async function handler() {
  const clients = makeAwsClients({
    region: awsRegionFromEnv(),
    credentials: awsCredentialsFromEnv(),
    ...storeSettingsFromEnv(),
    storeCallDeadlineMs: STORE_CALL_DEADLINE_MS,
  })
  try {
    const blobs = new S3BlobStore({ s3: clients.s3, bucket: Resource.Blobs.name })
    const documents = new DynamoDocumentStore({ dynamo: clients.dynamo, tableName: Resource.Documents.name, blobs })
    const report = await sweepOrphanBlobs({ documents, blobs, now: Date.now() })
    envLogger().log('info', 'blobs.swept', { ...report })
    return report
  } finally {
    clients.destroy()
  }
}
