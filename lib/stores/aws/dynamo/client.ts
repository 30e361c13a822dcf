/**
 * A DynamoDB client for the stores: the JSON protocol (`POST /`, `X-Amz-Target`), SigV4, retries,
 * and the document shape the stores work in (plain values in, plain values out). It replaces the
 * SDK's DynamoDBClient + DocumentClient, whose ~200 KiB were most of what a cold start loaded and
 * never ran, and whose first request resolved endpoint rules and credentials it did not need
 * (docs/operations/durability.md). What it keeps from the SDK's behaviour (the pinned
 * @aws-sdk/client-dynamodb, held to it by test/unit/stores/dynamo-endpoint.test.ts and
 * test/unit/stores/dynamo-retry.test.ts):
 * - the endpoint the SDK's rules derive for the region, FIPS and dual-stack (./endpoint.ts);
 * - standard retries as the SDK configures them for DynamoDB: 4 attempts, full-jitter exponential
 *   backoff (base 25 ms, 1 s after throttling, capped at 20 s, stretched to a Retry-After hint),
 *   a retry quota per client (500 tokens; a retry costs 14, after throttling 5; a success gives
 *   back what its retry cost, or 1), on the errors the SDK classifies as throttling or transient;
 * - a clock-skew correction when DynamoDB says the signature's time is off;
 * - errors named for the exception (`e.name === 'ConditionalCheckFailedException'`) with the
 *   response's fields on them (`Item` unmarshalled, `CancellationReasons`) and `$metadata`;
 * - keep-alive connections (one agent per client).
 * It does not verify the optional `x-amz-crc32` response checksum: TLS already guards the bytes.
 */
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { type Clock, systemClock } from '../../../runtime/clock'
import { type Metrics, noopMetrics } from '../../../runtime/metrics'
import { noopTracer, type Tracer } from '../../../runtime/tracer'
import { type AttributeValue, type Item, marshallItem, unmarshallItem, type WireItem } from './attribute-values'
import { type CredentialSource, cachedCredentials } from './credentials'
import { dynamoEndpoint, signingRegion } from './endpoint'
import { type AwsCredentials, signRequest } from './sigv4'

export interface DynamoClientOptions {
  region: string
  /** A configured endpoint, e.g. dynalite's URL; default: what the SDK's rules derive (./endpoint.ts). */
  endpoint?: string
  /** The FIPS endpoint (`AWS_USE_FIPS_ENDPOINT`); refused with a configured endpoint, as the SDK does. */
  useFips?: boolean
  /** The dual-stack endpoint (`AWS_USE_DUALSTACK_ENDPOINT`); refused with a configured endpoint. */
  useDualStack?: boolean
  credentials: CredentialSource
  /** Attempts per request, the first included (default 4, as the SDK's DynamoDB client). */
  maxAttempts?: number
  /** An attempt fails when its socket is idle this long (default 10 s); it is then retried. */
  attemptTimeoutMs?: number
  /**
   * No call takes longer than this, its retries and waits included (default 10 s): the last
   * attempt's socket timeout shrinks to what is left, and no retry starts past it. The
   * composition root sets it to fit the function's timeout.
   */
  deadlineMs?: number
  clock?: Clock
  /** How the client waits between attempts (tests record it instead). */
  sleep?: (ms: number) => Promise<void>
  /** A client span per call; retries and throttles counted by operation (default: neither). */
  tracer?: Tracer
  metrics?: Metrics
}

/** What DynamoDB (or the way to it) said went wrong. */
/** What an error body may not overwrite on the error it becomes. */
const OWN_ERROR_KEYS = new Set(['name', 'message', 'stack', 'cause', '$metadata', '$retryable', '$retryType', '$mayHaveLanded'])

export type RetryType = 'throttling' | 'transient'

export class DynamoError extends Error {
  /** ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure: the current item. */
  declare Item?: Item
  declare CancellationReasons?: unknown[]
  /** The Date header of the refusal: what a clock-skew correction goes by. */
  declare $serverDate?: string
  /** Retry-After or x-amz-retry-after of the answer, as an instant (ms). */
  declare $retryAfter?: number
  readonly $metadata: { httpStatusCode?: number; requestId?: string; attempts: number }
  readonly $retryable: boolean
  /**
   * 'throttling' or 'transient' (retried, as the SDK classifies them), else undefined.
   */
  readonly $retryType: RetryType | undefined
  /**
   * True when this call's request may have been applied by DynamoDB although no answer said so:
   * an attempt failed after the request could have reached the table (a reset or timed-out
   * socket, a 5xx). A store that sees a condition failure with this set looks at the item before
   * it believes the failure is someone else's write.
   */
  $mayHaveLanded = false

  constructor(
    name: string,
    message: string,
    meta: { httpStatusCode?: number; requestId?: string; retryType?: RetryType; fields?: Record<string, unknown> },
    options?: ErrorOptions,
  ) {
    super(message || name, options)
    this.name = name
    this.$retryType = meta.retryType
    this.$retryable = meta.retryType !== undefined
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
  /**
   * DynamoDB's condition without an expression (`{ name: { Exists: false } }`); never together
   * with ConditionExpression. Only the audit log's puts use it (../audit-store.ts says why).
   */
  Expected?: Record<string, { Exists: false }>
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

/** Puts only: a batch that deletes is not something this service sends. */
export interface BatchPutInput {
  RequestItems: Record<string, Item[]>
}

const TARGET_PREFIX = 'DynamoDB_20120810.'
/** A BatchGetItem answer is at most 16 MiB of items; more than twice that is not DynamoDB talking. */
const MAX_RESPONSE_BYTES = 40 * 1024 * 1024
// The SDK's lists (@smithy/service-error-classification), name for name.
const THROTTLING = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
])
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException'])
/** The one DynamoDB exception its model marks retryable. */
const RETRYABLE_BY_TRAIT = new Set(['ReplicatedWriteConflictException'])
const TRANSIENT_STATUS = new Set([500, 502, 503, 504])
const NODE_TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
/** Failures that say the request never reached DynamoDB, so it cannot have been applied. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'CredentialsError'])
const CLOCK_SKEW = new Set([
  'AccessDeniedException',
  'AuthFailure',
  'InvalidSignatureException',
  'RequestExpired',
  'RequestInTheFuture',
  'RequestTimeTooSkewed',
  'SignatureDoesNotMatch',
])

/** The SDK's standard retry strategy as @aws-sdk/client-dynamodb configures it. */
export const RETRY = {
  maxAttempts: 4,
  baseDelayMs: 25,
  throttlingDelayMs: 1_000,
  maxDelayMs: 20_000,
  initialTokens: 500,
  retryCost: 14,
  throttlingRetryCost: 5,
  noRetryIncrement: 1,
  /** A Retry-After hint stretches a delay by at most this much. */
  maxRetryAfterStretchMs: 5_000,
} as const
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
  private readonly deadlineMs: number
  private readonly clock: Clock
  private readonly sleep: (ms: number) => Promise<void>
  private readonly tracer: Tracer
  private readonly metrics: Metrics
  private agent: Promise<{ http: HttpModule; agent: Agent }> | undefined
  /** Server time minus ours, learned from a clock-skew refusal. */
  private skewMs = 0
  /** The SDK's retry quota: retries draw from it, successes refill it. */
  private retryTokens: number = RETRY.initialTokens

  constructor(opts: DynamoClientOptions) {
    this.region = opts.region
    this.url = new URL(dynamoEndpoint(opts))
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:')
      throw new TypeError(`DynamoDB endpoint must be http(s): ${opts.endpoint}`)
    this.clock = opts.clock ?? systemClock
    this.credentials = cachedCredentials(opts.credentials, this.clock)
    this.maxAttempts = Math.max(1, opts.maxAttempts ?? RETRY.maxAttempts)
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 10_000
    this.deadlineMs = opts.deadlineMs ?? 10_000
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)))
    this.tracer = opts.tracer ?? noopTracer
    this.metrics = opts.metrics ?? noopMetrics
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

  /** Up to 25 puts without conditions; answers the items DynamoDB left unprocessed (throttled), by table. */
  async batchPutItems(input: BatchPutInput): Promise<{ UnprocessedItems: Record<string, Item[]> }> {
    const requestItems = Object.fromEntries(
      Object.entries(input.RequestItems).map(([t, items]) => [t, items.map((i) => ({ PutRequest: { Item: marshallItem(i) } }))]),
    )
    const out = await this.call('BatchWriteItem', { RequestItems: requestItems })
    const unprocessed = (out.UnprocessedItems ?? {}) as Record<string, { PutRequest?: { Item: WireItem } }[]>
    return {
      UnprocessedItems: Object.fromEntries(
        Object.entries(unprocessed).map(([t, rs]) => [t, rs.flatMap((r) => (r.PutRequest ? [unmarshallItem(r.PutRequest.Item)] : []))]),
      ),
    }
  }

  /**
   * Any operation of the API as it is on the wire (provisioning uses CreateTable, DescribeTable,
   * and the TTL calls this way). Retries what is retryable; throws a DynamoError otherwise.
   */
  call(operation: string, payload: object): Promise<Record<string, unknown>> {
    const attributes = {
      'db.system': 'dynamodb',
      'db.system.name': 'aws.dynamodb',
      'db.operation.name': operation,
      'aws.dynamodb.table_names': tablesOf(payload),
    }
    return this.tracer.span(operation, { kind: 'client', attributes }, () => this.attempts(operation, payload))
  }

  private async attempts(operation: string, payload: object): Promise<Record<string, unknown>> {
    const body = JSON.stringify(payload)
    const deadline = performance.now() + this.deadlineMs
    let mayHaveLanded = false
    let retryCost: number | undefined
    for (let attempt = 1; ; attempt++) {
      const left = deadline - performance.now()
      try {
        const out = await this.attempt(operation, body, Math.max(1, Math.floor(Math.min(this.attemptTimeoutMs, left))))
        this.retryTokens = Math.min(RETRY.initialTokens, this.retryTokens + (retryCost ?? RETRY.noRetryIncrement))
        return out
      } catch (e) {
        const err = asDynamoError(e)
        err.$metadata.attempts = attempt
        mayHaveLanded ||= !neverApplied(err)
        // a condition failure says this attempt was not applied; an earlier one may have been
        err.$mayHaveLanded = err.name === 'ConditionalCheckFailedException' ? mayHaveLanded && attempt > 1 : mayHaveLanded
        const type = CLOCK_SKEW.has(err.name) && this.learnSkew(err) ? 'transient' : err.$retryType
        if (type === 'throttling') this.metrics.record('StoreThrottles', 1, { Operation: operation })
        if (type === undefined || attempt >= this.maxAttempts) throw err
        const cost = type === 'throttling' ? RETRY.throttlingRetryCost : RETRY.retryCost
        if (this.retryTokens < cost) throw err
        let delay = Math.floor(
          Math.random() *
            Math.min((type === 'throttling' ? RETRY.throttlingDelayMs : RETRY.baseDelayMs) * 2 ** (attempt - 1), RETRY.maxDelayMs),
        )
        if (err.$retryAfter !== undefined)
          delay = Math.max(delay, Math.min(err.$retryAfter - this.clock.now(), delay + RETRY.maxRetryAfterStretchMs))
        // no retry that could not finish before the deadline
        if (performance.now() + delay >= deadline) throw err
        this.retryTokens -= cost
        retryCost = cost
        this.metrics.record('StoreRetries', 1, { Operation: operation })
        await this.sleep(delay)
      }
    }
  }

  /** What is left of the retry quota (tests). */
  get retryQuota() {
    return this.retryTokens
  }

  /** Closes the kept-alive sockets. */
  destroy() {
    void this.agent?.then(({ agent }) => agent.destroy())
    this.agent = undefined
  }

  private async attempt(operation: string, body: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const [{ http, agent }, credentials] = await Promise.all([
      this.transport(),
      this.credentials().catch((e: unknown) => {
        throw new DynamoError(
          'CredentialsError',
          `no credentials for DynamoDB: ${(e as Error | null)?.message ?? String(e)}`,
          {},
          { cause: e },
        )
      }),
    ])
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
      region: signingRegion(this.region),
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
          timeout: timeoutMs,
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = []
          let size = 0
          response.on('data', (chunk: Buffer) => {
            size += chunk.length
            if (size > MAX_RESPONSE_BYTES)
              req.destroy(new DynamoError('ResponseTooLarge', `DynamoDB answered with more than ${MAX_RESPONSE_BYTES} bytes`, {}))
            else chunks.push(chunk)
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
          response.on('error', reject)
        },
      )
      req.on('timeout', () =>
        req.destroy(new DynamoError('TimeoutError', `no answer from DynamoDB within ${timeoutMs} ms`, { retryType: 'transient' })),
      )
      req.on('error', reject)
      req.end(body)
    })
    const requestId = headerText(res.headers['x-amzn-requestid'])
    if (res.status === 200) return res.body.length ? (JSON.parse(res.body.toString('utf8')) as Record<string, unknown>) : {}
    throw errorFrom(res.status, res.headers, res.body, requestId, this.clock.now())
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

/** The endpoint for a region with no settings (the common case). */
export const defaultEndpoint = (region: string) => dynamoEndpoint({ region })

/** The tables a request names (its TableName, or a batch's RequestItems). */
function tablesOf(payload: object): string[] {
  const p = payload as { TableName?: unknown; RequestItems?: Record<string, unknown> }
  return typeof p.TableName === 'string' ? [p.TableName] : p.RequestItems ? Object.keys(p.RequestItems) : []
}

const itemOf = <T extends object = Item>(v: unknown) => (v ? (unmarshallItem(v as WireItem) as T) : undefined)
const values = (input: Expressions) =>
  input.ExpressionAttributeValues ? { ExpressionAttributeValues: marshallItem(input.ExpressionAttributeValues) } : {}
const headerText = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)

function errorFrom(status: number, headers: IncomingHttpHeaders, raw: Buffer, requestId: string | undefined, now: number): DynamoError {
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
  const retryAfter = retryAfterOf(headers, now)
  if (retryAfter !== undefined) fields.$retryAfter = retryAfter
  return new DynamoError(name, message, { httpStatusCode: status, requestId, retryType: classify(name, status, message), fields })
}

/** The SDK's classification: throttling first, then transient; anything else is not retried. */
export function classify(name: string, status: number | undefined, message = ''): RetryType | undefined {
  if (status === 429 || THROTTLING.has(name)) return 'throttling'
  if (
    RETRYABLE_BY_TRAIT.has(name) ||
    TRANSIENT_NAMES.has(name) ||
    NODE_TRANSIENT_CODES.has(name) ||
    TRANSIENT_STATUS.has(status ?? 0) ||
    (name === 'InvalidSignatureException' && message.includes('Signature expired'))
  )
    return 'transient'
  return undefined
}

/** Throttling and client errors are refused before anything is applied, as are requests never sent. */
function neverApplied(err: DynamoError): boolean {
  if (NEVER_SENT.has(err.name) || err.$retryType === 'throttling') return true
  const status = err.$metadata.httpStatusCode
  return status !== undefined && status >= 400 && status < 500
}

/** `x-amz-retry-after` (ms) or `Retry-After` (seconds or an HTTP date), as an instant. */
function retryAfterOf(headers: IncomingHttpHeaders, now: number): number | undefined {
  const amz = Number(headerText(headers['x-amz-retry-after']))
  if (headers['x-amz-retry-after'] !== undefined && Number.isFinite(amz)) return now + amz
  const raw = headerText(headers['retry-after'])
  if (!raw) return undefined
  if (/^\d+(\.\d+)?$/.test(raw)) return now + Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : at
}

/** A socket error is named by its code (ECONNRESET, …); anything else (credentials, a garbled answer) keeps its own name. */
function asDynamoError(e: unknown): DynamoError {
  if (e instanceof DynamoError) return e
  const code = (e as { code?: unknown } | null)?.code
  const name = typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : ((e as Error | null)?.name ?? 'Error')
  return new DynamoError(
    name,
    `DynamoDB request failed: ${(e as Error | null)?.message ?? String(e)}`,
    { retryType: classify(name, undefined) },
    { cause: e },
  )
}
