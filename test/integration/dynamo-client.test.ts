/**
 * Our DynamoDB client (lib/stores/aws/dynamo/client.ts) on the wire: against dynalite for the
 * protocol and the attribute types, and against scripted node:http servers on 127.0.0.1 for what
 * dynalite never does (throttling, 5xx, dropped and stalled connections, clock-skew refusals).
 * No test waits for a backoff: the client's `sleep` is a recorder.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { ManualClock } from '../../lib/runtime/clock'
import { DynamoClient, type DynamoClientOptions, DynamoError } from '../../lib/stores/aws/dynamo/client'
import { cachedCredentials } from '../../lib/stores/aws/dynamo/credentials'
import { type AwsCredentials, signRequest } from '../../lib/stores/aws/dynamo/sigv4'
import { documentsTableSpec, ensureTable } from '../../lib/stores/aws/provision'
import { TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'

// ────────── scripted servers on 127.0.0.1 ──────────

interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}
type Script = (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void

interface FakeDynamo {
  endpoint: string
  requests: Received[]
  close(): Promise<void>
}

const servers: FakeDynamo[] = []
const clients: DynamoClient[] = []

/** A server on 127.0.0.1 that answers its n-th request (1-based) with `script`. */
async function fakeDynamo(script: Script): Promise<FakeDynamo> {
  const requests: Received[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      script(req, res, requests.length, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const fake: FakeDynamo = {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  servers.push(fake)
  return fake
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}
const awsError = (
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => json(res, status, { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message, ...extra }, headers)

/** A client on `endpoint` whose waits between attempts are recorded, not slept. */
function testClient(endpoint: string, over: Partial<DynamoClientOptions> = {}) {
  const sleeps: number[] = []
  const client = new DynamoClient({
    region: TEST_REGION,
    endpoint,
    credentials: TEST_CREDENTIALS,
    sleep: async (ms) => {
      sleeps.push(ms)
    },
    ...over,
  })
  clients.push(client)
  return { client, sleeps }
}

const rejection = async (p: Promise<unknown>): Promise<DynamoError> => {
  try {
    await p
  } catch (e) {
    expect(e).toBeInstanceOf(DynamoError)
    return e as DynamoError
  }
  throw new Error('expected the call to fail')
}

const KEY = { scope: 'acme#shop', path: 'a.md' }

afterEach(async () => {
  vi.restoreAllMocks()
  for (const c of clients.splice(0)) c.destroy()
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

// ────────── dynalite ──────────

describe('DynamoClient on dynalite', () => {
  let dynamo: DynamoClient
  let table: string

  beforeAll(async () => {
    dynamo = new DynamoClient({ region: TEST_REGION, endpoint: inject('dynamoEndpoint'), credentials: TEST_CREDENTIALS })
    table = `dynamo-client-${uniqueSuffix()}`
    await ensureTable(dynamo, documentsTableSpec(table))
  })
  afterAll(() => dynamo.destroy())

  it('round-trips every attribute type through putItem and getItem', async () => {
    const item = {
      scope: 'types',
      path: 'all',
      s: 'café 日本語 🚀',
      empty: '',
      int: 42,
      negative: -7,
      big: Number.MAX_SAFE_INTEGER,
      float: 3.25,
      tiny: 1e-7,
      bytes: new Uint8Array([0, 1, 2, 253, 254, 255]),
      yes: true,
      no: false,
      nothing: null,
      list: ['a', 1, 2.5, false, null, ['nested'], { k: 'v' }],
      map: { inner: { deeper: 'x', n: 0 }, l: [] },
      ss: new Set(['x', 'y', 'ü']),
      ns: new Set([1, 2.5, -3]),
      bs: new Set([new Uint8Array([1, 2]), new Uint8Array([3])]),
    }
    await dynamo.putItem({ TableName: table, Item: { ...item, gone: undefined } })
    const { Item } = await dynamo.getItem({ TableName: table, Key: { scope: 'types', path: 'all' }, ConsistentRead: true })
    expect(Item).toEqual(item)
    expect(Item!.bytes).toBeInstanceOf(Uint8Array)
  })

  it('answers getItem for a missing key with no Item', async () => {
    expect(await dynamo.getItem({ TableName: table, Key: { scope: 'types', path: 'missing' } })).toEqual({ Item: undefined })
  })

  it('pages a query with Limit and ExclusiveStartKey through every item in key order', async () => {
    const scope = `paged-${uniqueSuffix()}`
    const paths = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']
    for (const path of paths) await dynamo.putItem({ TableName: table, Item: { scope, path, n: Number(path.slice(1)) } })
    const seen: string[] = []
    const pageSizes: number[] = []
    let start: Record<string, unknown> | undefined
    do {
      const page: { Items: { path: string; n: number }[]; LastEvaluatedKey?: Record<string, unknown> } = await dynamo.query<{
        path: string
        n: number
      }>({
        TableName: table,
        KeyConditionExpression: '#s = :s',
        ExpressionAttributeNames: { '#s': 'scope' },
        ExpressionAttributeValues: { ':s': scope },
        Limit: 3,
        ExclusiveStartKey: start,
      })
      pageSizes.push(page.Items.length)
      seen.push(...page.Items.map((i) => i.path))
      start = page.LastEvaluatedKey
    } while (start)
    expect(seen).toEqual(paths)
    expect(pageSizes.slice(0, 2)).toEqual([3, 3])
    expect(pageSizes.every((n) => n <= 3)).toBe(true)
  })

  it('fetches several items in one batchGetItem and leaves out the missing ones', async () => {
    const scope = `batch-${uniqueSuffix()}`
    for (const path of ['a', 'b', 'c']) await dynamo.putItem({ TableName: table, Item: { scope, path, tags: new Set([path]) } })
    const out = await dynamo.batchGetItem<{ scope: string; path: string; tags: Set<string> }>({
      RequestItems: { [table]: { Keys: ['a', 'b', 'c', 'missing'].map((path) => ({ scope, path })), ConsistentRead: true } },
    })
    expect(out.Responses[table].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { scope, path: 'a', tags: new Set(['a']) },
      { scope, path: 'b', tags: new Set(['b']) },
      { scope, path: 'c', tags: new Set(['c']) },
    ])
    expect(out.UnprocessedKeys).toEqual({})
  })

  it('throws a failed condition as ConditionalCheckFailedException, unretried', async () => {
    const scope = `cond-${uniqueSuffix()}`
    await dynamo.putItem({ TableName: table, Item: { scope, path: 'x', version: 1 } })
    const err = await rejection(
      dynamo.putItem({
        TableName: table,
        Item: { scope, path: 'x', version: 2 },
        ConditionExpression: 'attribute_not_exists(#p)',
        ExpressionAttributeNames: { '#p': 'path' },
      }),
    )
    expect(err.name).toBe('ConditionalCheckFailedException')
    expect(err.$metadata).toMatchObject({ httpStatusCode: 400, attempts: 1 })
  })

  it('returns the new attributes of an updateItem with ReturnValues ALL_NEW', async () => {
    const scope = `upd-${uniqueSuffix()}`
    const out = await dynamo.updateItem({
      TableName: table,
      Key: { scope, path: 'counter' },
      UpdateExpression: 'ADD #n :one SET #t = :t',
      ExpressionAttributeNames: { '#n': 'n', '#t': 'tag' },
      ExpressionAttributeValues: { ':one': 1, ':t': 'ü' },
      ReturnValues: 'ALL_NEW',
    })
    expect(out.Attributes).toEqual({ scope, path: 'counter', n: 1, tag: 'ü' })
  })
})

// ────────── retries ──────────

describe('DynamoClient retries', () => {
  it('retries a throttling error up to 4 attempts, with growing backoff, then throws it by name', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const fake = await fakeDynamo((_req, res) =>
      awsError(res, 400, 'ProvisionedThroughputExceededException', 'slow down', {}, { 'x-amzn-requestid': 'REQ-THROTTLE' }),
    )
    const { client, sleeps } = testClient(fake.endpoint)

    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))

    expect(err.name).toBe('ProvisionedThroughputExceededException')
    expect(err.message).toBe('slow down')
    expect(err.$retryable).toBe(true)
    expect(err.$metadata).toEqual({ httpStatusCode: 400, requestId: 'REQ-THROTTLE', attempts: 4 })
    expect(fake.requests).toHaveLength(4)
    // full jitter over 1000·2^(n-1) after throttling; Math.random pinned at 0.5
    expect(sleeps).toEqual([500, 1000, 2000])
  })

  it('keeps every throttling backoff within 0..1000·2^(n-1)', async () => {
    const fake = await fakeDynamo((_req, res) => awsError(res, 400, 'ThrottlingException', 'rate exceeded'))
    const { client, sleeps } = testClient(fake.endpoint)
    for (let i = 0; i < 10; i++) {
      const before = sleeps.length
      expect((await rejection(client.getItem({ TableName: 't', Key: KEY }))).$metadata.attempts).toBe(4)
      const mine = sleeps.slice(before)
      expect(mine).toHaveLength(3)
      mine.forEach((ms, n) => {
        expect(ms).toBeGreaterThanOrEqual(0)
        expect(ms).toBeLessThanOrEqual(1000 * 2 ** n)
      })
    }
    expect(fake.requests).toHaveLength(40)
  })

  it('retries a 500 and returns the 200 that follows', async () => {
    const fake = await fakeDynamo((_req, res, n) =>
      n === 1 ? awsError(res, 500, 'InternalServerError', 'oops') : json(res, 200, { Item: { path: { S: 'a.md' }, n: { N: '1' } } }),
    )
    const { client, sleeps } = testClient(fake.endpoint)

    expect(await client.getItem({ TableName: 't', Key: KEY })).toEqual({ Item: { path: 'a.md', n: 1 } })
    expect(fake.requests).toHaveLength(2)
    expect(fake.requests[1].body).toBe(fake.requests[0].body)
    expect(sleeps).toHaveLength(1)
    expect(sleeps[0]).toBeLessThanOrEqual(25) // not throttling: base 25 ms
  })

  it('retries a 429 with no body', async () => {
    const fake = await fakeDynamo((_req, res, n) => {
      if (n === 1) {
        res.writeHead(429)
        res.end()
      } else json(res, 200, {})
    })
    const { client } = testClient(fake.endpoint)
    expect(await client.getItem({ TableName: 't', Key: KEY })).toEqual({ Item: undefined })
    expect(fake.requests).toHaveLength(2)
  })

  it('does not retry a ConditionalCheckFailedException and carries its Item unmarshalled', async () => {
    const fake = await fakeDynamo((_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'REQ-CCF' })
        .end(
          '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed","Item":{"version":{"N":"3"}}}',
        ),
    )
    const { client, sleeps } = testClient(fake.endpoint)

    const err = await rejection(
      client.putItem({
        TableName: 't',
        Item: { ...KEY, version: 4 },
        ConditionExpression: 'version = :v',
        ExpressionAttributeValues: { ':v': 3 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    )

    expect(err.name).toBe('ConditionalCheckFailedException')
    expect(err.message).toBe('The conditional request failed')
    expect(err.Item).toEqual({ version: 3 })
    expect(err.$retryable).toBe(false)
    expect(err.$metadata).toEqual({ httpStatusCode: 400, requestId: 'REQ-CCF', attempts: 1 })
    expect(fake.requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })

  it('carries the CancellationReasons of a cancelled transaction', async () => {
    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }]
    const fake = await fakeDynamo((_req, res) =>
      awsError(res, 400, 'TransactionCanceledException', 'Transaction cancelled', { CancellationReasons: reasons }),
    )
    const { client } = testClient(fake.endpoint)
    const err = await rejection(client.call('TransactWriteItems', { TransactItems: [] }))
    expect(err.name).toBe('TransactionCanceledException')
    expect(err.CancellationReasons).toEqual(reasons)
    expect(fake.requests).toHaveLength(1)
  })

  it('retries a connection the server destroys mid-request', async () => {
    const fake = await fakeDynamo((req, res, n) => (n === 1 ? req.socket.destroy() : json(res, 200, { Item: { ok: { BOOL: true } } })))
    const { client, sleeps } = testClient(fake.endpoint)

    expect(await client.getItem({ TableName: 't', Key: KEY })).toEqual({ Item: { ok: true } })
    expect(fake.requests).toHaveLength(2)
    expect(sleeps).toHaveLength(1)
  })

  it('retries a response cut off in the middle of its body', async () => {
    const fake = await fakeDynamo((req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0', 'content-length': '1000' })
        res.write('{"Item":{"ok":', () => req.socket.destroy())
      } else json(res, 200, { Item: { ok: { BOOL: true } } })
    })
    const { client } = testClient(fake.endpoint)

    expect(await client.getItem({ TableName: 't', Key: KEY })).toEqual({ Item: { ok: true } })
    expect(fake.requests).toHaveLength(2)
  })

  it('fails an attempt whose socket stays idle past attemptTimeoutMs as TimeoutError and retries it', async () => {
    const fake = await fakeDynamo((_req, res, n) => {
      if (n > 1) json(res, 200, { Item: { ok: { BOOL: true } } })
      // the first request is never answered
    })
    const { client, sleeps } = testClient(fake.endpoint, { attemptTimeoutMs: 150 })

    expect(await client.getItem({ TableName: 't', Key: KEY })).toEqual({ Item: { ok: true } })
    expect(fake.requests).toHaveLength(2)
    expect(sleeps).toHaveLength(1)
  })

  it('throws TimeoutError after every attempt stalls', async () => {
    const fake = await fakeDynamo(() => {})
    const { client } = testClient(fake.endpoint, { attemptTimeoutMs: 100 })

    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.name).toBe('TimeoutError')
    expect(err.$retryable).toBe(true)
    expect(err.$metadata.attempts).toBe(4)
    expect(fake.requests).toHaveLength(4)
  })

  it('retries a refused connection and then throws ECONNREFUSED', async () => {
    const closed = await fakeDynamo(() => {})
    await closed.close()
    const { client, sleeps } = testClient(closed.endpoint)

    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.name).toBe('ECONNREFUSED')
    expect(err.$metadata.attempts).toBe(4)
    expect(sleeps).toHaveLength(3)
  })

  it('makes a 503 with an HTML body a retryable error, not a crash', async () => {
    const fake = await fakeDynamo((_req, res) =>
      res.writeHead(503, { 'content-type': 'text/html' }).end('<html><body><h1>503 Service Unavailable</h1></body></html>'),
    )
    const { client } = testClient(fake.endpoint)

    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.$retryable).toBe(true)
    expect(err.name).toBe('InternalServerError')
    expect(err.$metadata).toMatchObject({ httpStatusCode: 503, attempts: 4 })
    expect(fake.requests).toHaveLength(4)
  })

  it('recovers from a 503 with an HTML body when the next attempt succeeds', async () => {
    const fake = await fakeDynamo((_req, res, n) =>
      n === 1 ? res.writeHead(503, { 'content-type': 'text/html' }).end('<html>busy</html>') : json(res, 200, {}),
    )
    const { client } = testClient(fake.endpoint)
    expect(await client.deleteItem({ TableName: 't', Key: KEY })).toEqual({ Attributes: undefined })
    expect(fake.requests).toHaveLength(2)
  })

  it('names an error given only by the x-amzn-errortype header', async () => {
    const fake = await fakeDynamo((_req, res) =>
      res.writeHead(400, { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.coral.validate/' }).end(),
    )
    const { client } = testClient(fake.endpoint)
    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.name).toBe('ValidationException')
    expect(err.$metadata.attempts).toBe(1)
  })

  it('ends a call at its deadline: the attempt timeout shrinks to what is left and no retry starts past it', async () => {
    const fake = await fakeDynamo(() => {})
    const { client } = testClient(fake.endpoint, { attemptTimeoutMs: 10_000, deadlineMs: 200 })
    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.name).toBe('TimeoutError')
    expect(Number(/within (\d+) ms/.exec(err.message)?.[1])).toBeLessThanOrEqual(200)
    expect(err.$metadata.attempts).toBe(1)
    expect(fake.requests).toHaveLength(1)
  })

  it('waits at least the Retry-After a throttled answer asks for, stretched by at most 5 s', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const clock = new ManualClock(Date.UTC(2026, 0, 1))
    const fake = await fakeDynamo((_req, res, n) =>
      n === 1 ? awsError(res, 400, 'ThrottlingException', 'slow', {}, { 'retry-after': '2' }) : json(res, 200, {}),
    )
    const { client, sleeps } = testClient(fake.endpoint, { clock })
    await client.getItem({ TableName: 't', Key: KEY })
    // jitter drew 0; the hint asked for 2 s, within the 5 s stretch
    expect(sleeps).toEqual([2000])
  })

  it('says a condition failure after a reset attempt may have been applied, and one on the first attempt was not', async () => {
    const ccf = (res: ServerResponse) => awsError(res, 400, 'ConditionalCheckFailedException', 'The conditional request failed')
    const reset = await fakeDynamo((req, res, n) => (n === 1 ? req.socket.resetAndDestroy() : ccf(res)))
    const first = await fakeDynamo((_req, res) => ccf(res))
    const put = (endpoint: string) =>
      rejection(testClient(endpoint).client.putItem({ TableName: 't', Item: KEY, ConditionExpression: 'attribute_not_exists(#p)' }))
    expect([(await put(reset.endpoint)).$mayHaveLanded, (await put(first.endpoint)).$mayHaveLanded]).toEqual([true, false])
  })

  it('stops after maxAttempts when fewer than 4 are configured', async () => {
    const fake = await fakeDynamo((_req, res) => awsError(res, 500, 'InternalServerError', 'down'))
    const { client, sleeps } = testClient(fake.endpoint, { maxAttempts: 1 })
    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.$metadata.attempts).toBe(1)
    expect(fake.requests).toHaveLength(1)
    expect(sleeps).toEqual([])
  })
})

// ────────── clock skew ──────────

describe('DynamoClient clock-skew correction', () => {
  const amzDate = (ms: number) =>
    new Date(ms)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '')

  it('re-signs with the server time after an InvalidSignatureException whose Date is an hour ahead', async () => {
    const clock = new ManualClock()
    const serverTime = clock.now() + 3_600_000
    const fake = await fakeDynamo((_req, res, n) =>
      n === 1
        ? awsError(
            res,
            400,
            'InvalidSignatureException',
            'Signature expired: is now earlier than …',
            {},
            { date: new Date(serverTime).toUTCString() },
          )
        : json(res, 200, {}),
    )
    const { client } = testClient(fake.endpoint, { clock })

    await client.getItem({ TableName: 't', Key: KEY })
    await client.getItem({ TableName: 't', Key: KEY })

    expect(fake.requests.map((r) => r.headers['x-amz-date'])).toEqual([amzDate(clock.now()), amzDate(serverTime), amzDate(serverTime)])
  })

  it('re-signs with the server time after a RequestTimeTooSkewed whose Date is an hour behind', async () => {
    const clock = new ManualClock()
    const serverTime = clock.now() - 3_600_000
    const fake = await fakeDynamo((_req, res, n) =>
      n === 1
        ? awsError(
            res,
            400,
            'RequestTimeTooSkewed',
            'The difference between the request time and the server time is too large',
            {},
            { date: new Date(serverTime).toUTCString() },
          )
        : json(res, 200, {}),
    )
    const { client } = testClient(fake.endpoint, { clock })
    await client.getItem({ TableName: 't', Key: KEY })
    expect(fake.requests.map((r) => r.headers['x-amz-date'])).toEqual([amzDate(clock.now()), amzDate(serverTime)])
  })

  it('does not retry an InvalidSignatureException when the server time agrees with ours', async () => {
    const clock = new ManualClock()
    const fake = await fakeDynamo((_req, res) =>
      awsError(
        res,
        400,
        'InvalidSignatureException',
        'The request signature we calculated does not match',
        {},
        { date: new Date(clock.now() + 30_000).toUTCString() },
      ),
    )
    const { client } = testClient(fake.endpoint, { clock })
    const err = await rejection(client.getItem({ TableName: 't', Key: KEY }))
    expect(err.name).toBe('InvalidSignatureException')
    expect(err.$metadata.attempts).toBe(1)
    expect(fake.requests).toHaveLength(1)
  })
})

// ────────── the request on the wire ──────────

describe('DynamoClient requests', () => {
  const TEMPORARY: AwsCredentials = { accessKeyId: 'ASIATEST', secretAccessKey: 'secret', sessionToken: 'session/token+with=chars' }

  it('sends the session token as x-amz-security-token and signs it', async () => {
    const fake = await fakeDynamo((_req, res) => json(res, 200, {}))
    const { client } = testClient(fake.endpoint, { credentials: TEMPORARY })
    await client.getItem({ TableName: 't', Key: KEY })

    const { headers } = fake.requests[0]
    expect(headers['x-amz-security-token']).toBe(TEMPORARY.sessionToken)
    const signed = /SignedHeaders=([^,]+),/.exec(String(headers.authorization))![1].split(';')
    expect(signed).toContain('x-amz-security-token')
    expect(String(headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIATEST\/\d{8}\/us-east-1\/dynamodb\/aws4_request, /)
  })

  it('names the operation in x-amz-target and posts JSON 1.0 to /', async () => {
    const fake = await fakeDynamo((_req, res) => json(res, 200, { Items: [], Count: 0 }))
    const { client } = testClient(fake.endpoint)
    await client.getItem({ TableName: 't', Key: KEY })
    await client.putItem({ TableName: 't', Item: KEY })
    await client.query({
      TableName: 't',
      KeyConditionExpression: '#s = :s',
      ExpressionAttributeNames: { '#s': 'scope' },
      ExpressionAttributeValues: { ':s': 'x' },
    })
    await client.call('DescribeTable', { TableName: 't' })

    expect(fake.requests.map((r) => r.headers['x-amz-target'])).toEqual([
      'DynamoDB_20120810.GetItem',
      'DynamoDB_20120810.PutItem',
      'DynamoDB_20120810.Query',
      'DynamoDB_20120810.DescribeTable',
    ])
    for (const r of fake.requests) {
      expect(r.method).toBe('POST')
      expect(r.url).toBe('/')
      expect(r.headers['content-type']).toBe('application/x-amz-json-1.0')
    }
    expect(JSON.parse(fake.requests[0].body)).toEqual({ TableName: 't', Key: { scope: { S: 'acme#shop' }, path: { S: 'a.md' } } })
    expect(JSON.parse(fake.requests[2].body).ExpressionAttributeValues).toEqual({ ':s': { S: 'x' } })
  })

  it('sends a signature that the received headers and body reproduce, with a non-ASCII body', async () => {
    const fake = await fakeDynamo((_req, res) => json(res, 200, {}))
    const { client } = testClient(fake.endpoint, { credentials: TEMPORARY })
    await client.putItem({ TableName: 't', Item: { ...KEY, text: 'café 日本語 🚀' } })

    const { headers, body } = fake.requests[0]
    expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body))
    const authorization = String(headers.authorization)
    const signed = /SignedHeaders=([^,]+),/.exec(authorization)![1].split(';')
    // every header on the wire is signed, but the hop-by-hop one node adds
    expect(Object.keys(headers).filter((h) => !signed.includes(h) && h !== 'authorization')).toEqual(['connection'])
    const x = String(headers['x-amz-date'])
    const at = new Date(`${x.slice(0, 4)}-${x.slice(4, 6)}-${x.slice(6, 8)}T${x.slice(9, 11)}:${x.slice(11, 13)}:${x.slice(13, 15)}Z`)
    const given = Object.fromEntries(
      signed.filter((h) => !['host', 'x-amz-date', 'x-amz-security-token'].includes(h)).map((h) => [h, String(headers[h])]),
    )
    const again = signRequest({
      method: 'POST',
      host: String(headers.host),
      path: '/',
      headers: given,
      body,
      region: TEST_REGION,
      service: 'dynamodb',
      credentials: TEMPORARY,
      at,
    })
    expect(again.authorization).toBe(authorization)
  })

  it('signs with the credentials a provider returns, and with new ones after they near expiry', async () => {
    const clock = new ManualClock()
    let fetched = 0
    const provider = async (): Promise<AwsCredentials> => {
      fetched++
      return { accessKeyId: `AKID${fetched}`, secretAccessKey: 's', expiration: new Date(clock.now() + 15 * 60_000) }
    }
    const fake = await fakeDynamo((_req, res) => json(res, 200, {}))
    const { client } = testClient(fake.endpoint, { credentials: provider, clock })

    await client.getItem({ TableName: 't', Key: KEY })
    await client.getItem({ TableName: 't', Key: KEY })
    clock.advance(11 * 60_000)
    await client.getItem({ TableName: 't', Key: KEY })

    expect(fake.requests.map((r) => /Credential=(\w+)\//.exec(String(r.headers.authorization))![1])).toEqual(['AKID1', 'AKID1', 'AKID2'])
    expect(fetched).toBe(2)
  })

  it('answers again after destroy(), on new connections', async () => {
    const fake = await fakeDynamo((_req, res) => json(res, 200, {}))
    const { client } = testClient(fake.endpoint)
    await client.getItem({ TableName: 't', Key: KEY })
    client.destroy()
    await client.getItem({ TableName: 't', Key: KEY })
    expect(fake.requests).toHaveLength(2)
  })
})

// ────────── credentials ──────────

describe('cachedCredentials', () => {
  const MINUTE = 60_000

  it('returns static credentials as they are', async () => {
    const creds: AwsCredentials = { accessKeyId: 'AK', secretAccessKey: 'SK', sessionToken: 'T' }
    const get = cachedCredentials(creds, new ManualClock())
    expect(await get()).toBe(creds)
    expect(await get()).toBe(creds)
  })

  it("reuses a provider's credentials until 5 minutes before they expire, then fetches new ones", async () => {
    const clock = new ManualClock()
    let calls = 0
    const get = cachedCredentials(async () => {
      calls++
      return { accessKeyId: `AK${calls}`, secretAccessKey: 'SK', expiration: new Date(clock.now() + 15 * MINUTE) }
    }, clock)

    expect((await get()).accessKeyId).toBe('AK1')
    clock.advance(10 * MINUTE - 1) // 5 min + 1 ms left
    expect((await get()).accessKeyId).toBe('AK1')
    expect(calls).toBe(1)
    clock.advance(1) // 5 min left
    expect((await get()).accessKeyId).toBe('AK2')
    expect((await get()).accessKeyId).toBe('AK2')
    expect(calls).toBe(2)
  })

  it('keeps credentials with no expiration for good', async () => {
    const clock = new ManualClock()
    let calls = 0
    const get = cachedCredentials(async () => {
      calls++
      return { accessKeyId: 'AK', secretAccessKey: 'SK' }
    }, clock)
    await get()
    clock.advance(365 * 24 * 60 * MINUTE)
    await get()
    expect(calls).toBe(1)
  })

  it('retries a failed fetch on the next call', async () => {
    const clock = new ManualClock()
    let calls = 0
    const get = cachedCredentials(async () => {
      calls++
      if (calls === 1) throw new Error('IMDS unreachable')
      return { accessKeyId: `AK${calls}`, secretAccessKey: 'SK', expiration: new Date(clock.now() + 60 * MINUTE) }
    }, clock)

    await expect(get()).rejects.toThrow('IMDS unreachable')
    expect((await get()).accessKeyId).toBe('AK2')
    expect((await get()).accessKeyId).toBe('AK2')
    expect(calls).toBe(2)
  })

  it('shares one fetch among concurrent first calls', async () => {
    let calls = 0
    const get = cachedCredentials(async () => {
      calls++
      await new Promise((r) => setTimeout(r, 5))
      return { accessKeyId: 'AK', secretAccessKey: 'SK' }
    }, new ManualClock())
    const all = await Promise.all([get(), get(), get()])
    expect(all.map((c) => c.accessKeyId)).toEqual(['AK', 'AK', 'AK'])
    expect(calls).toBe(1)
  })

  it('shares one refresh among concurrent calls when the credentials near expiry', async () => {
    // Under load every request in flight at refresh time asks at once; a provider such as IMDS
    // or STS should see one fetch (the SDK's memoized providers share the pending refresh).
    const clock = new ManualClock()
    let calls = 0
    const get = cachedCredentials(async () => {
      calls++
      return { accessKeyId: `AK${calls}`, secretAccessKey: 'SK', expiration: new Date(clock.now() + 15 * MINUTE) }
    }, clock)
    await get()
    clock.advance(11 * MINUTE)
    const all = await Promise.all([get(), get(), get()])
    expect(all.map((c) => c.accessKeyId)).toEqual(['AK2', 'AK2', 'AK2'])
    expect(calls).toBe(2)
  })
})
