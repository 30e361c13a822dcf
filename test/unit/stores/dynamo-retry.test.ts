/**
 * The DynamoDB client's retries, held to the pinned SDK: which errors are retried and how
 * (@smithy/service-error-classification, every modeled exception of @aws-sdk/client-dynamodb),
 * and the standard strategy the SDK's DynamoDB client builds (its own `config.retryStrategy()`:
 * attempts, base delays, the throttling delay, the retry quota) against ours, call by call, on
 * loopback servers that fail as scripted. Math.random is pinned on both sides; nothing waits for
 * a backoff on ours (the sleep is a recorder).
 */
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as sdkDynamo from '@aws-sdk/client-dynamodb'
import { isThrottlingError, isTransientError } from '@smithy/service-error-classification'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { classify, DynamoClient, RETRY } from '../../../lib/stores/aws/dynamo/client'

type SdkError = Parameters<typeof isTransientError>[0]
const sdkType = (error: object) => {
  const e = error as SdkError
  return isThrottlingError(e) ? 'throttling' : isTransientError(e) ? 'transient' : undefined
}

const modeled = Object.entries(sdkDynamo).filter(
  ([, v]) => typeof v === 'function' && (v as { prototype?: unknown }).prototype instanceof sdkDynamo.DynamoDBServiceException,
) as [string, new (o: { message: string; $metadata: object }) => Error][]

describe('which errors are retried, against @smithy/service-error-classification', () => {
  it('covers every modeled DynamoDB exception (35 in the pinned SDK)', () => {
    expect(modeled.length).toBeGreaterThanOrEqual(35)
  })

  it.each(modeled.map(([name]) => name))('classifies %s as the SDK does', (name) => {
    const Ctor = modeled.find(([n]) => n === name)![1]
    const status = name === 'InternalServerError' ? 500 : 400
    const e = new Ctor({ message: 'm', $metadata: { httpStatusCode: status } })
    expect(classify(e.name, status, e.message)).toBe(sdkType(e))
  })

  it('classifies ReplicatedWriteConflictException as transient (retryable by its model trait)', () => {
    expect(classify('ReplicatedWriteConflictException', 400)).toBe('transient')
  })

  it('classifies unmodeled answers by name and status as the SDK does', () => {
    const cases: [string, number][] = [
      ['Http429', 429],
      ['InternalServerError', 500],
      ['Http501', 501],
      ['InternalServerError', 502],
      ['ServiceUnavailable', 503],
      ['InternalServerError', 504],
      ['Http505', 505],
      ['Throttling', 400],
      ['RequestThrottled', 400],
      ['SlowDown', 503],
      ['ValidationException', 400],
      ['UnrecognizedClientException', 400],
      ['AccessDeniedException', 400],
      ['RequestTimeout', 408],
      ['RequestTimeoutException', 400],
    ]
    for (const [name, status] of cases) {
      const e = Object.assign(new Error('m'), { name, $metadata: { httpStatusCode: status } })
      expect(classify(name, status, 'm'), `${name} ${status}`).toBe(sdkType(e))
    }
    const expired = Object.assign(new Error('Signature expired: 20260101T000000Z is now earlier than …'), {
      name: 'InvalidSignatureException',
      $metadata: { httpStatusCode: 400 },
    })
    expect(classify(expired.name, 400, expired.message)).toBe(sdkType(expired))
  })

  it('classifies socket and DNS failures (ENOTFOUND, EHOSTUNREACH, ENETUNREACH, …) as the SDK does', () => {
    for (const code of [
      'ECONNRESET',
      'ECONNREFUSED',
      'EPIPE',
      'ETIMEDOUT',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'ENOTFOUND',
      'EAI_AGAIN',
      'ECONNABORTED',
      'EPROTO',
    ]) {
      // the client names a socket error by its code (asDynamoError)
      const e = Object.assign(new Error(`connect ${code}`), { code })
      expect(classify(code, undefined), code).toBe(sdkType(e))
    }
    expect(classify('TimeoutError', undefined)).toBe(sdkType(Object.assign(new Error('t'), { name: 'TimeoutError' })))
  })
})

// ────────── the strategy, call by call ──────────

const servers: Server[] = []
const clients: DynamoClient[] = []
afterEach(async () => {
  vi.restoreAllMocks()
  for (const c of clients.splice(0)) c.destroy()
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))))
})

type Answer = 'ok' | 'throttle' | 'fail'
function answerWith(res: ServerResponse, a: Answer) {
  const [status, body] =
    a === 'ok'
      ? [200, {}]
      : a === 'throttle'
        ? [400, { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow' }]
        : [500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'oops' }]
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text) }).end(text)
}

/** Our client against a server answering its n-th request (0-based) with `script(n)`. */
async function ours(script: (n: number) => Answer, calls: number) {
  let n = 0
  const server = createServer((req, res) => req.resume().on('end', () => answerWith(res, script(n++))))
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const sleeps: number[] = []
  const client = new DynamoClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    sleep: async (ms) => {
      sleeps.push(ms)
    },
  })
  clients.push(client)
  const log: { attempts: number; delays: number[]; ok: boolean; quota: number }[] = []
  for (let i = 0; i < calls; i++) {
    const before = sleeps.length
    const seen = n
    const ok = await client.getItem({ TableName: 't', Key: { k: 'v' } }).then(
      () => true,
      () => false,
    )
    log.push({ attempts: n - seen, delays: sleeps.slice(before), ok, quota: client.retryQuota })
  }
  return log
}

/** The SDK's own strategy for DynamoDB, driven with the same answers. */
async function theirs(script: (n: number) => Answer, calls: number) {
  const sdk = new sdkDynamo.DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })
  const strategy = (await sdk.config.retryStrategy()) as unknown as {
    acquireInitialRetryToken(scope: string): Promise<unknown>
    refreshRetryTokenForRetry(t: unknown, info: { errorType: string; error: unknown }): Promise<{ $retryLog: { acquisitionDelay: number } }>
    recordSuccess(t: unknown): void
    getCapacity(): number
  }
  let n = 0
  const log: { attempts: number; delays: number[]; ok: boolean; quota: number }[] = []
  for (let i = 0; i < calls; i++) {
    let token = await strategy.acquireInitialRetryToken('')
    const delays: number[] = []
    let attempts = 0
    let ok = false
    for (;;) {
      attempts++
      const a = script(n++)
      if (a === 'ok') {
        strategy.recordSuccess(token)
        ok = true
        break
      }
      try {
        const next = await strategy.refreshRetryTokenForRetry(token, {
          errorType: a === 'throttle' ? 'THROTTLING' : 'TRANSIENT',
          error: new Error(a),
        })
        delays.push(next.$retryLog.acquisitionDelay)
        token = next
      } catch {
        break
      }
    }
    log.push({ attempts, delays, ok, quota: strategy.getCapacity() })
  }
  return log
}

describe('the retry strategy, against the SDK DynamoDB client’s own', () => {
  // the SDK's strategy really waits its delays: a small random keeps them to milliseconds
  const pin = () => vi.spyOn(Math, 'random').mockReturnValue(0.01)

  it('uses the SDK’s numbers: 4 attempts, 25 ms and 1 s bases, 20 s cap, 500 tokens, costs 14 and 5', async () => {
    const sdk = new sdkDynamo.DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })
    expect(await sdk.config.maxAttempts()).toBe(RETRY.maxAttempts)
    const strategy = (await sdk.config.retryStrategy()) as unknown as { baseDelay: number; getCapacity(): number }
    expect(strategy.baseDelay).toBe(RETRY.baseDelayMs)
    expect(strategy.getCapacity()).toBe(RETRY.initialTokens)
    const retry = await import('@smithy/util-retry')
    expect(retry.MAXIMUM_RETRY_DELAY).toBe(RETRY.maxDelayMs)
    expect([retry.Retry.throttlingDelay(), retry.Retry.cost(), retry.Retry.throttlingCost(), retry.NO_RETRY_INCREMENT]).toEqual([
      RETRY.throttlingDelayMs,
      RETRY.retryCost,
      RETRY.throttlingRetryCost,
      RETRY.noRetryIncrement,
    ])
  })

  it('retries a server that always fails as the SDK does, until the quota runs out (15 calls)', async () => {
    pin()
    const script = (): Answer => 'fail'
    expect(await ours(script, 15)).toEqual(await theirs(script, 15))
  })

  it('retries throttling with the throttling delay and cost as the SDK does (12 calls)', async () => {
    pin()
    const script = (): Answer => 'throttle'
    expect(await ours(script, 12)).toEqual(await theirs(script, 12))
  })

  it('gives the quota back on success as the SDK does (fail, throttle, ok, over and over)', async () => {
    pin()
    const script = (n: number): Answer => (['fail', 'throttle', 'ok'] as const)[n % 3]
    expect(await ours(script, 20)).toEqual(await theirs(script, 20))
  })
})
