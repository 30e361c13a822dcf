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
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type {} from 'vitest'
import type { TestProject } from 'vitest/node'
import { startEmulators } from '../../functions/emulators'

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string
    s3Endpoint: string
  }
}

export default async function setup(project: TestProject) {
  const directory = await mkdtemp(join(tmpdir(), 'server-tools-s3rver-'))
  const emulators = await startEmulators({ s3Directory: directory })
  project.provide('dynamoEndpoint', emulators.dynamoEndpoint)
  project.provide('s3Endpoint', emulators.s3Endpoint)
  return async () => {
    await emulators.close()
    await rm(directory, { recursive: true, force: true })
  }
}
