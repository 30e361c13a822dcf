/**
 * Embedded DynamoDB (dynalite) and S3 (s3rver) on loopback: the stores `npm start` runs on, and
 * the ones the test setup starts. The same AWS adapters talk to them as to AWS.
 * dynalite has no TTL API and no streams; neither emulator throttles.
 */
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

// Neither package ships type declarations; these are the slices we use.
type DynaliteFactory = (opts: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number; path?: string }) => Server
interface S3rverInstance {
  httpServer?: Server
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
type S3rverCtor = new (opts: {
  address: string
  port: number
  silent: boolean
  directory: string
  configureBuckets: unknown[]
}) => S3rverInstance

const require = createRequire(import.meta.url)

export const LOOPBACK = '127.0.0.1'

export interface Emulators {
  dynamoEndpoint: string
  s3Endpoint: string
  close(): Promise<void>
}

/**
 * Starts both emulators on 127.0.0.1. `dynamoPath` keeps DynamoDB data on disk (leveldb);
 * without it the data lives in memory. `s3Directory` is where s3rver keeps objects.
 */
export async function startEmulators(opts: {
  s3Directory: string
  dynamoPath?: string
  dynamoPort?: number
  s3Port?: number
}): Promise<Emulators> {
  const dynalite = require('dynalite') as DynaliteFactory
  const S3rver = require('s3rver') as S3rverCtor
  const dynamo = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(opts.dynamoPath ? { path: opts.dynamoPath } : {}) })
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject)
    dynamo.listen(opts.dynamoPort ?? 0, LOOPBACK, () => resolve())
  })
  const dynamoPort = (dynamo.address() as AddressInfo).port
  const s3 = new S3rver({ address: LOOPBACK, port: opts.s3Port ?? 0, silent: true, directory: opts.s3Directory, configureBuckets: [] })
  const s3Address = await s3.run()
  return {
    dynamoEndpoint: `http://${LOOPBACK}:${dynamoPort}`,
    s3Endpoint: `http://${LOOPBACK}:${s3Address.port}`,
    async close() {
      await Promise.allSettled([
        new Promise<void>((resolve) => {
          dynamo.close(() => resolve())
          // Keep-alive sockets from SDK clients would otherwise hold close() open.
          dynamo.closeAllConnections()
        }),
        (async () => {
          const closing = s3.close()
          s3.httpServer?.closeAllConnections()
          await closing
        })(),
      ])
    },
  }
}
