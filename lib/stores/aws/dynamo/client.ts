/**
 * A DynamoDB client for the stores: the JSON protocol (`POST /`, `X-Amz-Target`), SigV4, retries,
 * and the document shape the stores work in (plain values in, plain values out). It replaces the
 * SDK's DynamoDBClient + DocumentClient, whose ~200 KiB were most of what a cold start loaded and
 * never ran, and whose first request resolved endpoint rules and credentials it did not need
 * (docs/operations/durability.md). What it keeps from the SDK's behaviour:
 * - standard retries: 3 attempts, full-jitter exponential backoff (base 100 ms, 500 ms after
 *   throttling, capped at 20 s), on throttling, 5xx, 429, timeouts and dropped connections;
 * - a clock-skew correction when DynamoDB says the signature's time is off;
 * - errors named for the exception (`e.name === 'ConditionalCheckFailedException'`) with the
 *   response's fields on them (`Item` unmarshalled, `CancellationReasons`) and `$metadata`;
 * - keep-alive connections (one agent per client).
 * It does not verify the optional `x-amz-crc32` response checksum: TLS already guards the bytes.
 */
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { type Clock, systemClock } from '../../../runtime/clock'
import { type AttributeValue, type Item, marshallItem, unmarshallItem, type WireItem } from './attribute-values'
import { type CredentialSource, cachedCredentials } from './credentials'
import { type AwsCredentials, signRequest } from './sigv4'

export interface DynamoClientOptions {
  region: string
  /** e.g. dynalite's URL; default `https://dynamodb.<region>.amazonaws.com`. */
  endpoint?: string
  credentials: CredentialSource
  /** Attempts per request, the first included (default 3, as the SDK). */
  maxAttempts?: number
  /** An attempt fails when its socket is idle this long (default 10 s); it is then retried. */
  attemptTimeoutMs?: number
  clock?: Clock
  /** How the client waits between attempts (tests record it instead). */
  sleep?: (ms: number) => Promise<void>
}

/** What DynamoDB (or the way to it) said went wrong. */
/** What an error body may not overwrite on the error it becomes. */
const OWN_ERROR_KEYS = new Set(['name', 'message', 'stack', 'cause', '$metadata', '$retryable'])

export class DynamoError extends Error {
  /** ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure: the current item. */
  declare Item?: Item
  declare CancellationReasons?: unknown[]
  /** The Date header of the refusal: what a clock-skew correction goes by. */
  declare $serverDate?: string
  readonly $metadata: { httpStatusCode?: number; requestId?: string; attempts: number }
  readonly $retryable: boolean

  constructor(
    name: string,
    message: string,
    meta: { httpStatusCode?: number; requestId?: string; retryable: boolean; fields?: Record<string, unknown> },
    options?: ErrorOptions,
  ) {
    super(message || name, options)
    this.name = name
    this.$retryable = meta.retryable
    this.$metadata = { httpStatusCode: meta.httpStatusCode, requestId: meta.requestId, attempts: 1 }
    for (const [k, v] of Object.entries(meta.fields ?? {})) if (!OWN_ERROR_KEYS.has(k)) (this as Record<string, unknown>)[k] = v
  }
}

type Names = Record<string, string>
interface Expressions {
  ExpressionAttributeNames?: Names
  ExpressionAttributeValues?: Item
}
export interface GetInput {
  TableName: string
  Key: Item
  ConsistentRead?: boolean
  ProjectionExpression?: string
  ExpressionAttributeNames?: Names
}
export type ReturnValues = 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW'
interface WriteInput extends Expressions {
  TableName: string
  ConditionExpression?: string
  ReturnValues?: ReturnValues
  ReturnValuesOnConditionCheckFailure?: 'NONE' | 'ALL_OLD'
}
export interface PutInput extends WriteInput {
  Item: object
}
export interface UpdateInput extends WriteInput {
  Key: Item
  UpdateExpression: string
}
export interface DeleteInput extends WriteInput {
  Key: Item
}
export interface QueryInput extends Expressions {
  TableName: string
  KeyConditionExpression: string
  IndexName?: string
  FilterExpression?: string
  ProjectionExpression?: string
  ConsistentRead?: boolean
  ScanIndexForward?: boolean
  Limit?: number
  ExclusiveStartKey?: Item
}
export interface BatchGetInput {
  RequestItems: Record<string, { Keys: Item[]; ConsistentRead?: boolean; ProjectionExpression?: string; ExpressionAttributeNames?: Names }>
}

const TARGET_PREFIX = 'DynamoDB_20120810.'
/** A BatchGetItem answer is at most 16 MiB of items; more than twice that is not DynamoDB talking. */
const MAX_RESPONSE_BYTES = 40 * 1024 * 1024
const THROTTLING = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'TransactionInProgressException',
  'LimitExceededException',
  'Throttling',
  'TooManyRequestsException',
])
const TRANSIENT = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'InternalServerError',
])
const CLOCK_SKEW = new Set(['RequestTimeTooSkewed', 'RequestExpired', 'RequestInTheFuture', 'InvalidSignatureException'])
const SKEW_TOLERANCE_MS = 4 * 60_000

type HttpModule = typeof import('node:http')
let httpModule: Promise<HttpModule> | undefined
let httpsModule: Promise<HttpModule> | undefined
/** node:http(s) load with the first request, not with the module (cold start). */
const transportFor = (protocol: string): Promise<HttpModule> =>
  // node:https's request and Agent have node:http's shapes (its types differ only in TLS options)
  protocol === 'https:' ? (httpsModule ??= import('node:https') as unknown as Promise<HttpModule>) : (httpModule ??= import('node:http'))

export class DynamoClient {
  private readonly url: URL
  private readonly region: string
  private readonly credentials: () => Promise<AwsCredentials>
  private readonly maxAttempts: number
  private readonly attemptTimeoutMs: number
  private readonly clock: Clock
  private readonly sleep: (ms: number) => Promise<void>
  private agent: Promise<{ http: HttpModule; agent: Agent }> | undefined
  /** Server time minus ours, learned from a clock-skew refusal. */
  private skewMs = 0

  constructor(opts: DynamoClientOptions) {
    this.region = opts.region
    this.url = new URL(opts.endpoint ?? defaultEndpoint(opts.region))
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:')
      throw new TypeError(`DynamoDB endpoint must be http(s): ${opts.endpoint}`)
    this.clock = opts.clock ?? systemClock
    this.credentials = cachedCredentials(opts.credentials, this.clock)
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? 3)
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 10_000
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
  }

  // The item type parameters are the caller's word for what the table holds, as with the SDK's
  // DocumentClient: the client checks the wire format, not the caller's schema.

  async getItem<T extends object = Item>(input: GetInput): Promise<{ Item?: T }> {
    const out = await this.call('GetItem', { ...input, Key: marshallItem(input.Key) })
    return { Item: itemOf<T>(out.Item) }
  }

  async putItem<T extends object = Item>(input: PutInput): Promise<{ Attributes?: T }> {
    const out = await this.call('PutItem', { ...input, Item: marshallItem(input.Item), ...values(input) })
    return { Attributes: itemOf<T>(out.Attributes) }
  }

  async updateItem<T extends object = Item>(input: UpdateInput): Promise<{ Attributes?: T }> {
    const out = await this.call('UpdateItem', { ...input, Key: marshallItem(input.Key), ...values(input) })
    return { Attributes: itemOf<T>(out.Attributes) }
  }

  async deleteItem<T extends object = Item>(input: DeleteInput): Promise<{ Attributes?: T }> {
    const out = await this.call('DeleteItem', { ...input, Key: marshallItem(input.Key), ...values(input) })
    return { Attributes: itemOf<T>(out.Attributes) }
  }

  async query<T extends object = Item>(input: QueryInput): Promise<{ Items: T[]; LastEvaluatedKey?: Item }> {
    const out = await this.call('Query', {
      ...input,
      ...values(input),
      ...(input.ExclusiveStartKey ? { ExclusiveStartKey: marshallItem(input.ExclusiveStartKey) } : {}),
    })
    return { Items: ((out.Items ?? []) as WireItem[]).map((i) => unmarshallItem(i) as T), LastEvaluatedKey: itemOf(out.LastEvaluatedKey) }
  }

  async batchGetItem<T extends object = Item>(
    input: BatchGetInput,
  ): Promise<{ Responses: Record<string, T[]>; UnprocessedKeys: BatchGetInput['RequestItems'] }> {
    const requestItems = Object.fromEntries(
      Object.entries(input.RequestItems).map(([t, r]) => [t, { ...r, Keys: r.Keys.map(marshallItem) }]),
    )
    const out = await this.call('BatchGetItem', { RequestItems: requestItems })
    const responses = (out.Responses ?? {}) as Record<string, WireItem[]>
    const unprocessed = (out.UnprocessedKeys ?? {}) as Record<string, { Keys: WireItem[] }>
    return {
      Responses: Object.fromEntries(Object.entries(responses).map(([t, items]) => [t, items.map((i) => unmarshallItem(i) as T)])),
      UnprocessedKeys: Object.fromEntries(Object.entries(unprocessed).map(([t, r]) => [t, { ...r, Keys: r.Keys.map(unmarshallItem) }])),
    }
  }

  /**
   * Any operation of the API as it is on the wire (provisioning uses CreateTable, DescribeTable,
   * and the TTL calls this way). Retries what is retryable; throws a DynamoError otherwise.
   */
  async call(operation: string, payload: object): Promise<Record<string, unknown>> {
    const body = JSON.stringify(payload)
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(operation, body)
      } catch (e) {
        const err = asDynamoError(e)
        err.$metadata.attempts = attempt
        const skewed = CLOCK_SKEW.has(err.name) && this.learnSkew(err)
        if (attempt >= this.maxAttempts || !(err.$retryable || skewed)) throw err
        const base = THROTTLING.has(err.name) ? 500 : 100
        await this.sleep(Math.random() * Math.min(20_000, base * 2 ** (attempt - 1)))
      }
    }
  }

  /** Closes the kept-alive sockets. */
  destroy() {
    void this.agent?.then(({ agent }) => agent.destroy())
    this.agent = undefined
  }

  private async attempt(operation: string, body: string): Promise<Record<string, unknown>> {
    const [{ http, agent }, credentials] = await Promise.all([this.transport(), this.credentials()])
    const headers = signRequest({
      method: 'POST',
      host: this.url.host,
      path: '/',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': TARGET_PREFIX + operation,
        'content-length': String(Buffer.byteLength(body)),
      },
      body,
      region: this.region,
      service: 'dynamodb',
      credentials,
      at: new Date(this.clock.now() + this.skewMs),
    })
    const res = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = http.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port || undefined,
          method: 'POST',
          path: '/',
          headers,
          agent,
          timeout: this.attemptTimeoutMs,
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = []
          let size = 0
          response.on('data', (chunk: Buffer) => {
            size += chunk.length
            if (size > MAX_RESPONSE_BYTES)
              req.destroy(
                new DynamoError('ResponseTooLarge', `DynamoDB answered with more than ${MAX_RESPONSE_BYTES} bytes`, { retryable: false }),
              )
            else chunks.push(chunk)
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
          response.on('error', reject)
        },
      )
      req.on('timeout', () =>
        req.destroy(new DynamoError('TimeoutError', `no answer from DynamoDB within ${this.attemptTimeoutMs} ms`, { retryable: true })),
      )
      req.on('error', reject)
      req.end(body)
    })
    const requestId = headerText(res.headers['x-amzn-requestid'])
    if (res.status === 200) return res.body.length ? (JSON.parse(res.body.toString('utf8')) as Record<string, unknown>) : {}
    throw errorFrom(res.status, res.headers, res.body, requestId)
  }

  private transport() {
    return (this.agent ??= transportFor(this.url.protocol).then((http) => ({
      http,
      agent: new http.Agent({ keepAlive: true, maxSockets: 50 }),
    })))
  }

  /** True when the refusal carried a server time far enough from ours to explain it. */
  private learnSkew(err: DynamoError): boolean {
    const serverTime = Date.parse(err.$serverDate ?? '')
    if (Number.isNaN(serverTime)) return false
    const skew = serverTime - this.clock.now()
    if (Math.abs(skew - this.skewMs) < SKEW_TOLERANCE_MS) return false
    this.skewMs = skew
    return true
  }
}

export function defaultEndpoint(region: string) {
  return `https://dynamodb.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`
}

const itemOf = <T extends object = Item>(v: unknown) => (v ? (unmarshallItem(v as WireItem) as T) : undefined)
const values = (input: Expressions) =>
  input.ExpressionAttributeValues ? { ExpressionAttributeValues: marshallItem(input.ExpressionAttributeValues) } : {}
const headerText = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)

function errorFrom(status: number, headers: IncomingHttpHeaders, raw: Buffer, requestId: string | undefined): DynamoError {
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>
  } catch {
    // a 5xx from a load balancer is not JSON; the status says enough
  }
  const type = String(body.__type ?? headerText(headers['x-amzn-errortype']) ?? '')
  const name = type.split('#').pop()!.split(':')[0] || (status >= 500 ? 'InternalServerError' : `Http${status}`)
  const message = String(body.message ?? body.Message ?? '')
  const { __type, message: _m, Message: _M, Item, ...rest } = body
  const fields: Record<string, unknown> = { ...rest, $serverDate: headerText(headers.date) }
  if (Item && typeof Item === 'object') fields.Item = unmarshallItem(Item as Record<string, AttributeValue>)
  const retryable = status >= 500 || status === 429 || THROTTLING.has(name) || TRANSIENT.has(name)
  return new DynamoError(name, message, { httpStatusCode: status, requestId, retryable, fields })
}

/** A socket error is named by its code (ECONNRESET, …); anything else (credentials, a garbled answer) keeps its own name. */
function asDynamoError(e: unknown): DynamoError {
  if (e instanceof DynamoError) return e
  const code = (e as { code?: unknown } | null)?.code
  const name = typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : ((e as Error | null)?.name ?? 'Error')
  return new DynamoError(
    name,
    `DynamoDB request failed: ${(e as Error | null)?.message ?? String(e)}`,
    { retryable: TRANSIENT.has(name) || name === 'ECONNABORTED' },
    { cause: e },
  )
}
