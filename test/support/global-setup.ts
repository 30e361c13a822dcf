/**
 * vitest globalSetup: one dynalite (in-memory DynamoDB) and one s3rver (S3 on a temp dir) for the
 * whole run, listening on 127.0.0.1 with OS-assigned ports. Test files read the endpoints with
 * `inject('dynamoEndpoint')` / `inject('s3Endpoint')` (see test/support/aws.ts) and create their own
 * table and bucket with a random suffix, so parallel workers never share state.
 *
 * Emulator gaps to keep in mind: dynalite has no TTL API, no streams and ignores
 * ReturnValuesOnConditionCheckFailure; neither emulator ever throttles.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {} from 'vitest'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string
    s3Endpoint: string
  }
}

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
const dynalite = require('dynalite') as DynaliteFactory
const S3rver = require('s3rver') as S3rverCtor

const HOST = '127.0.0.1'

export default async function setup(project: TestProject) {
  const dynamo = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject)
    dynamo.listen(0, HOST, () => resolve())
  })
  const dynamoPort = (dynamo.address() as AddressInfo).port

  const directory = await mkdtemp(join(tmpdir(), 'server-tools-s3rver-'))
  const s3 = new S3rver({ address: HOST, port: 0, silent: true, directory, configureBuckets: [] })
  const s3Address = await s3.run()

  project.provide('dynamoEndpoint', `http://${HOST}:${dynamoPort}`)
  project.provide('s3Endpoint', `http://${HOST}:${s3Address.port}`)

  return async () => {
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
    await rm(directory, { recursive: true, force: true })
  }
}
