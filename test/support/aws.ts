/**
 * Helpers for tests that talk to the emulators started by test/support/global-setup.ts.
 * Only lib/stores/aws imports @aws-sdk/*; tests go through it.
 */
import { randomBytes } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { readdirSync, readFileSync } from 'node:fs'
import type { ClientRequest } from 'node:http'
import { inject } from 'vitest'
import { type Clock, ManualClock } from '../../lib/runtime/clock'
import { S3BlobStore } from '../../lib/stores/aws/blob-store'
import { type AwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../../lib/stores/aws/document-store'
import { ReadBatcher } from '../../lib/stores/aws/dynamo/read-batcher'
import { documentsTableSpec, ensureBucket, ensureTable, type TableSpec } from '../../lib/stores/aws/provision'
import { installLambdaRuntime, invokeStreaming } from '../../scripts/lambda-streaming-runtime.mjs'

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
/** `batchedReads`: its whole-item reads go through a ReadBatcher, as in the Lambda composition (functions/deps.ts). */
export async function freshDocumentStore(opts: { clock?: Clock; batchedReads?: boolean } = {}): Promise<FreshDocumentStore> {
  const clients = awsTestClients()
  const suffix = uniqueSuffix()
  const tableName = `documents-${suffix}`
  const bucket = `blobs-${suffix}`
  await Promise.all([ensureTable(clients.dynamo, documentsTableSpec(tableName)), ensureBucket(clients.s3, bucket)])
  const clock = opts.clock ?? new ManualClock()
  const blobs = new S3BlobStore({ s3: clients.s3, bucket })
  const reads = opts.batchedReads ? new ReadBatcher(clients.dynamo) : undefined
  const store = new DynamoDocumentStore({ dynamo: clients.dynamo, tableName, blobs, clock, reads })
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
 * then a cold start: the module graph evaluated again with it, under a stand-in for the Lambda
 * runtime's response streaming (scripts/lambda-streaming-runtime.mjs). SSM has no emulator, so
 * its endpoint is a closed loopback port: a stray secret read can never leave the machine.
 * Returns the streaming handler itself, for invokeStreaming (the stand-in) or `bufferedInvoker`.
 */
export async function coldStartLambdaStreaming(links: Record<string, string>, jwtSecret: string): Promise<unknown> {
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
  installLambdaRuntime()
  return (await import('../../functions/api')).handler
}

/** coldStartLambdaStreaming, called the way most tests want it: one awaited result per event. */
export async function coldStartLambda<H = LambdaHandler>(links: Record<string, string>, jwtSecret: string): Promise<H> {
  return bufferedInvoker(await coldStartLambdaStreaming(links, jwtSecret)) as H
}

/** A streaming handler as `(event, context) → result`, resolved once the invocation has ended (not only its response). */
export function bufferedInvoker(handler: unknown): LambdaHandler {
  return async (event, context) => {
    const { response, done } = invokeStreaming(handler, event, context)
    const [res] = await Promise.all([response, done])
    return {
      statusCode: res.statusCode,
      headers: res.headers,
      cookies: res.cookies,
      body: res.body.toString('utf8'),
      isBase64Encoded: false,
    }
  }
}

/** Every `Resource.X` functions/api.ts reads. */
function linkedResources(): string[] {
  const src = readFileSync(new URL('../../functions/api.ts', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
  return [...new Set([...src.matchAll(/\bResource\.(\w+)/g)].map((m) => m[1]))]
}

/** `<name>TableSpec` exports of lib/stores/aws, keyed by the resource name they imply (documentsTableSpec → Documents). */
async function tableSpecsByResource(): Promise<Map<string, (name: string) => TableSpec>> {
  const dir = new URL('../../lib/stores/aws/', import.meta.url)
  const specs = new Map<string, (name: string) => TableSpec>()
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    if (!/export\s+(const|function)\s+\w+TableSpec\b/.test(readFileSync(new URL(file, dir), 'utf8'))) continue
    const mod = (await import(new URL(file, dir).href)) as Record<string, unknown>
    for (const [name, value] of Object.entries(mod)) {
      const m = /^(\w+)TableSpec$/.exec(name)
      if (m && typeof value === 'function') specs.set(m[1][0].toUpperCase() + m[1].slice(1), value as (name: string) => TableSpec)
    }
  }
  return specs
}

/**
 * A fresh table or bucket (named `<prefix>-<resource>-<suffix>`) behind each link SST puts in the
 * Lambda's environment; the link → name map is what coldStartLambda takes.
 */
export async function provisionLambdaLinks(prefix: string): Promise<Record<string, string>> {
  const clients = awsTestClients()
  const suffix = uniqueSuffix()
  const specs = await tableSpecsByResource()
  const names: Record<string, string> = {}
  await Promise.all(
    linkedResources().map(async (resource) => {
      const name = `${prefix}-${resource.toLowerCase()}-${suffix}`
      names[resource] = name
      if (resource === 'Blobs') {
        await ensureBucket(clients.s3, name)
        return
      }
      const spec = specs.get(resource)
      if (!spec)
        throw new Error(
          `functions/api.ts reads Resource.${resource}, but lib/stores/aws has no ${resource[0].toLowerCase()}${resource.slice(1)}TableSpec`,
        )
      await ensureTable(clients.dynamo, spec(name))
    }),
  )
  return names
}

/** One invocation's answer in the shape of a buffered Lambda result (bodies of streamed answers are never base64). */
export interface LambdaResult {
  statusCode: number
  headers?: Record<string, string>
  cookies?: string[]
  body: string
  isBase64Encoded: boolean
}
export type LambdaHandler = (event: unknown, context: unknown) => Promise<LambdaResult>

/**
 * A `fetch` that delivers each request to the next of `handlers` in turn as a Function URL
 * (payload format 2.0) event — what Lambda does when requests land on different containers.
 */
export function lambdaFetch(handlers: LambdaHandler[], onInvoke?: (index: number) => void) {
  let next = 0
  return async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input))
    const headers = Object.fromEntries(new Headers(init.headers).entries())
    const body = init.body === undefined || init.body === null ? undefined : String(init.body)
    const method = init.method ?? 'GET'
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      headers: { host: 'abc123.lambda-url.us-east-1.on.aws', 'x-forwarded-proto': 'https', ...headers },
      requestContext: {
        accountId: 'anonymous',
        apiId: 'abc123',
        domainName: 'abc123.lambda-url.us-east-1.on.aws',
        domainPrefix: 'abc123',
        http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? 'test' },
        requestId: randomBytes(8).toString('hex'),
        routeKey: '$default',
        stage: '$default',
        time: '01/Jan/2026:00:00:00 +0000',
        timeEpoch: Date.now(),
      },
      isBase64Encoded: false,
      ...(body !== undefined ? { body } : {}),
    }
    const index = next++ % handlers.length
    onInvoke?.(index)
    const res = await handlers[index](event, { awsRequestId: event.requestContext.requestId, functionName: 'server-tools-test-Api' })
    const payload = res.isBase64Encoded ? Buffer.from(res.body, 'base64') : res.body
    const status = res.statusCode
    const responseHeaders = new Headers(res.headers ?? {})
    for (const cookie of res.cookies ?? []) responseHeaders.append('set-cookie', cookie)
    return new Response(status === 202 || status === 204 || payload.length === 0 ? null : payload, { status, headers: responseHeaders })
  }
}

/**
 * Counts the DynamoDB operations this process sends (by the request's `x-amz-target`, seen on
 * Node's `http.client.request.start` channel) while `counted` runs: what a request asked of the
 * table, by name.
 */
export class DynamoOperationCounter {
  private readonly seen: string[] = []
  private readonly onRequest = (message: unknown) => {
    const target = (message as { request: ClientRequest }).request.getHeader('x-amz-target')
    if (typeof target === 'string' && target.startsWith('DynamoDB_20120810.')) this.seen.push(target.slice('DynamoDB_20120810.'.length))
  }
  start(): void {
    subscribe('http.client.request.start', this.onRequest)
  }
  stop(): void {
    unsubscribe('http.client.request.start', this.onRequest)
  }
  /** The DynamoDB operations `run` sent, by name. */
  async counted(run: () => Promise<unknown>): Promise<Record<string, number>> {
    this.seen.length = 0
    await run()
    const out: Record<string, number> = {}
    for (const op of this.seen) out[op] = (out[op] ?? 0) + 1
    return out
  }
}
