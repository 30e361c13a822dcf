/**
 * Embedded DynamoDB (dynalite) and S3 (s3rver) on loopback: the stores `npm start` runs on, and
 * the ones the test setup starts. The same AWS adapters talk to them as to AWS.
 * dynalite has no TTL API and no streams; neither emulator throttles.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { type AddressInfo, createServer } from 'node:net'

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
  /** Empty when that emulator was not asked for (`only`). */
  dynamoEndpoint: string
  s3Endpoint: string
  close(): Promise<void>
}

export interface EmulatorOptions {
  s3Directory: string
  dynamoPath?: string
  dynamoPort?: number
  s3Port?: number
  /** Start only these (default both): `npm start` with one store given elsewhere. */
  only?: { dynamo: boolean; s3: boolean }
  /**
   * DynamoDB requests signed with another access key id are refused (`npm start`: a key made at
   * start, so that no other process writes the tables whose tenant stamps this one keeps in
   * memory — docs/decisions.md). Default: any key, as dynalite itself.
   */
  dynamoAccessKeyId?: string
}

/**
 * Starts both emulators on 127.0.0.1, on the calling thread (the test setup's way; `npm start`
 * runs them on a thread of their own, functions/emulator-thread.ts). `dynamoPath` keeps DynamoDB
 * data on disk (leveldb); without it the data lives in memory. `s3Directory` is where s3rver keeps objects.
 */
/** Resolves when `port` can be bound on loopback (and is free again), rejects with the bind's error. */
function portIsFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(port, LOOPBACK, () => probe.close(() => resolve()))
  })
}

export async function startEmulators(opts: EmulatorOptions): Promise<Emulators> {
  const only = opts.only ?? { dynamo: true, s3: true }
  let dynamo: Server | undefined
  let s3: S3rverInstance | undefined
  let dynamoEndpoint = ''
  let s3Endpoint = ''
  if (only.dynamo) {
    // dynalite opens its leveldb as it is made, and closes it only through a server that listened:
    // a port found taken after that would leave the database open in a thread about to end (a
    // worker terminated mid-open can take the whole process down), so a given port is tried first
    if (opts.dynamoPort) await portIsFree(opts.dynamoPort)
    const dynalite = require('dynalite') as DynaliteFactory
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(opts.dynamoPath ? { path: opts.dynamoPath } : {}) })
    survivesAbortedRequests(server)
    if (opts.dynamoAccessKeyId) servesOnlyKey(server, opts.dynamoAccessKeyId)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(opts.dynamoPort ?? 0, LOOPBACK, () => resolve())
    })
    dynamo = server
    dynamoEndpoint = `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`
  }
  if (only.s3) {
    const S3rver = require('s3rver') as S3rverCtor
    s3 = new S3rver({ address: LOOPBACK, port: opts.s3Port ?? 0, silent: true, directory: opts.s3Directory, configureBuckets: [] })
    try {
      s3Endpoint = `http://${LOOPBACK}:${(await s3.run()).port}`
    } catch (e) {
      // the DynamoDB side is up: closed, so its leveldb is not left open behind a failed start
      const started = dynamo
      if (started) await new Promise<void>((resolve) => started.close(() => resolve()))
      throw e
    }
  }
  return {
    dynamoEndpoint,
    s3Endpoint,
    async close() {
      await Promise.allSettled([
        new Promise<void>((resolve) => {
          if (!dynamo) return resolve()
          dynamo.close(() => resolve())
          // Keep-alive sockets from SDK clients would otherwise hold close() open.
          dynamo.closeAllConnections()
        }),
        (async () => {
          if (!s3) return
          const closing = s3.close()
          s3.httpServer?.closeAllConnections()
          await closing
        })(),
      ])
    },
  }
}

/**
 * dynalite answers a request stream's 'error' with `throw err`: a client that goes away mid-body
 * (an SDK attempt timing out, a killed client) was an uncaught exception — the whole `npm start`
 * process while the stores ran on its thread, every store after that since. Its listener is
 * taken off each request as it arrives, and the half-read request's socket just closed.
 */
function survivesAbortedRequests(server: Server) {
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
  server.removeAllListeners('request')
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const own = new Set(req.listeners('error'))
    for (const handle of handlers) handle.call(server, req, res)
    for (const listener of req.listeners('error')) if (!own.has(listener)) req.off('error', listener as (e: Error) => void)
    req.on('error', () => res.destroy())
  })
}

/**
 * Only requests whose SigV4 credential scope names `accessKeyId` reach dynalite; others are
 * answered as DynamoDB answers an unknown key (400 UnrecognizedClientException), before their body
 * is read. One substring search of a header per request.
 */
function servesOnlyKey(server: Server, accessKeyId: string) {
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[]
  server.removeAllListeners('request')
  const scope = `Credential=${accessKeyId}/`
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization?.includes(scope)) for (const handle of handlers) handle.call(server, req, res)
    else
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', connection: 'close' }).end(
        JSON.stringify({
          __type: 'com.amazonaws.dynamodb.v20120810#UnrecognizedClientException',
          message: 'these embedded tables serve only the process that started them',
        }),
      )
  })
}
