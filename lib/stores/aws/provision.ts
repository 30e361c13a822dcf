/**
 * Idempotent provisioning for `npm start`, tests and benches (production tables come from
 * sst.config.ts). Other tables (Processes, ToolUsage, ObservedLimits) reuse `ensureTable` with their
 * own `TableSpec`.
 */
import { CreateBucketCommand, HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3'
import type { DynamoClient } from './dynamo/client'

export type KeyType = 'S' | 'N' | 'B'

export interface KeyAttribute {
  name: string
  type: KeyType
}

/** A PAY_PER_REQUEST table with a hash key and an optional range key. */
export interface TableSpec {
  name: string
  hashKey: KeyAttribute
  rangeKey?: KeyAttribute
  /**
   * Attribute holding an epoch-seconds expiry. Enabled best-effort: emulators without a TTL API
   * (dynalite) are tolerated, so code must never rely on TTL for correctness, only for cleanup.
   */
  ttlAttribute?: string
}

/** Documents table: `scope` (`<tenant>#<project>`) + `path`. */
export const documentsTableSpec = (name: string): TableSpec => ({
  name,
  hashKey: { name: 'scope', type: 'S' },
  rangeKey: { name: 'path', type: 'S' },
})

export interface WaitOptions {
  /** Give up after this long (default 60 s). */
  timeoutMs?: number
}

/** Creates the table when it is missing and waits until it is ACTIVE. Safe to call concurrently. */
export async function ensureTable(ddb: DynamoClient, spec: TableSpec, wait: WaitOptions = {}): Promise<void> {
  let status = await tableStatus(ddb, spec.name)
  if (status === undefined) {
    const keys = [spec.hashKey, ...(spec.rangeKey ? [spec.rangeKey] : [])]
    try {
      await ddb.call('CreateTable', {
        TableName: spec.name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: keys.map((k) => ({ AttributeName: k.name, AttributeType: k.type })),
        KeySchema: [
          { AttributeName: spec.hashKey.name, KeyType: 'HASH' },
          ...(spec.rangeKey ? [{ AttributeName: spec.rangeKey.name, KeyType: 'RANGE' }] : []),
        ],
      })
    } catch (e) {
      if (errorName(e) !== 'ResourceInUseException') throw e // someone else created it meanwhile
    }
    status = await tableStatus(ddb, spec.name)
  }
  // a monotonic deadline: this waits on the emulator or AWS, it reads no domain time
  const deadline = performance.now() + (wait.timeoutMs ?? 60_000)
  let delay = 50
  while (status !== 'ACTIVE') {
    if (performance.now() > deadline) throw new Error(`table ${spec.name} is still ${status ?? 'missing'} after waiting`)
    await sleep(delay)
    delay = Math.min(delay * 2, 2_000)
    status = await tableStatus(ddb, spec.name)
  }
  if (spec.ttlAttribute) await ensureTtl(ddb, spec.name, spec.ttlAttribute)
}

async function ensureTtl(ddb: DynamoClient, table: string, attribute: string) {
  try {
    const current = await ddb.call('DescribeTimeToLive', { TableName: table })
    const d = current.TimeToLiveDescription as { AttributeName?: string; TimeToLiveStatus?: string } | undefined
    if (d?.AttributeName === attribute && (d.TimeToLiveStatus === 'ENABLED' || d.TimeToLiveStatus === 'ENABLING')) return
    await ddb.call('UpdateTimeToLive', { TableName: table, TimeToLiveSpecification: { AttributeName: attribute, Enabled: true } })
  } catch (e) {
    // dynalite has no TTL API; any other failure is real.
    if (errorName(e) === 'UnknownOperationException') return
    throw e
  }
}

async function tableStatus(ddb: DynamoClient, name: string): Promise<string | undefined> {
  try {
    const out = await ddb.call('DescribeTable', { TableName: name })
    return (out.Table as { TableStatus?: string } | undefined)?.TableStatus
  } catch (e) {
    if (errorName(e) === 'ResourceNotFoundException') return undefined
    throw e
  }
}

/** Creates the bucket when it is missing. Safe to call repeatedly and concurrently. */
export async function ensureBucket(client: S3Client | (() => Promise<S3Client>), name: string): Promise<void> {
  const s3 = typeof client === 'function' ? await client() : client
  try {
    await s3.send(new HeadBucketCommand({ Bucket: name }))
    return
  } catch (e) {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
    if (errorName(e) !== 'NotFound' && errorName(e) !== 'NoSuchBucket' && status !== 404) throw e
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket: name }))
  } catch (e) {
    if (errorName(e) !== 'BucketAlreadyOwnedByYou' && errorName(e) !== 'BucketAlreadyExists') throw e
  }
}

const errorName = (e: unknown) => (e as { name?: string } | null)?.name
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
