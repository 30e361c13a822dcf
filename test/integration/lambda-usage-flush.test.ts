/**
 * functions/api.ts as Lambda runs it (response streaming): usage counts are written to the
 * ToolUsage table before the invocation ends (nothing left in memory when the container freezes)
 * but after the response has gone, and a failing usage table never fails or delays the response.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { destroyAwsClients, makeAwsClients } from '../../lib/stores/aws/clients'
import { DynamoToolUsageStore } from '../../lib/stores/aws/tool-usage-store'
import { invokeStreaming } from '../../scripts/lambda-streaming-runtime.mjs'
import {
  coldStartLambda,
  coldStartLambdaStreaming,
  provisionLambdaLinks,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueSuffix,
} from '../support/aws'
import { tokenFor } from '../support/http'

interface LambdaResult {
  statusCode: number
  body: string
  isBase64Encoded: boolean
}
type Handler = (event: unknown, context: unknown) => Promise<LambdaResult>

const SECRET = `lambda-usage-${uniqueSuffix()}`
let token: string

/** A payload-format-2.0 event (Function URL / HTTP API). */
function event(method: string, path: string, body?: unknown) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      host: 'abc123.lambda-url.us-east-1.on.aws',
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'x-forwarded-proto': 'https',
    },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc123',
      domainName: 'abc123.lambda-url.us-east-1.on.aws',
      domainPrefix: 'abc123',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: `req-${uniqueSuffix()}`,
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2026:00:00:00 +0000',
      timeEpoch: 1767225600000,
    },
    isBase64Encoded: false,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }
}

const coldStart = (tables: Record<string, string>) => coldStartLambda<Handler>(tables, SECRET)

const clients = makeAwsClients({
  region: TEST_REGION,
  credentials: TEST_CREDENTIALS,
  dynamoEndpoint: inject('dynamoEndpoint'),
  s3Endpoint: inject('s3Endpoint'),
})
const suffix = uniqueSuffix()
// every table and bucket functions/api.ts reads through Resource, as SST links them
let tables: Record<string, string>

beforeAll(async () => {
  tables = await provisionLambdaLinks('lu')
  token = await tokenFor('acme', 'tools:invoke tools:read insights:read', 'lambda@example.test', SECRET)
})

afterAll(() => {
  vi.unstubAllEnvs()
  destroyAwsClients(clients)
})

describe('functions/api.ts handler and usage counts', () => {
  it('has written the counts of an invocation to the ToolUsage table by the time it returns', async () => {
    const handler = await coldStart(tables)
    const spawn = await handler(event('POST', '/brain/acme/projects/p1/processes', {}), {})
    expect(spawn.statusCode).toBe(201)
    const id = JSON.parse(spawn.body).id
    for (let i = 0; i < 3; i++) {
      const res = await handler(event('POST', `/brain/acme/projects/p1/processes/${id}/tool-calls`, { name: 'whoami', params: {} }), {})
      expect(JSON.parse(res.body)).toMatchObject({ isError: false })
    }
    // Read straight from the table, right after the last return: no timer could have flushed yet.
    const rows = await new DynamoToolUsageStore({ dynamo: clients.dynamo, tableName: tables.ToolUsage }).list('acme', 'p1')
    expect(rows).toEqual([expect.objectContaining({ role: 'default', tool: 'whoami', family: 'whoami', calls: 3 })])
  })

  it('answers the tool call normally when the usage table does not exist', async () => {
    const handler = await coldStart({ ...tables, ToolUsage: `lu-missing-${suffix}` })
    const spawn = await handler(event('POST', '/brain/acme/projects/p1/processes', {}), {})
    const id = JSON.parse(spawn.body).id
    const res = await handler(event('POST', `/brain/acme/projects/p1/processes/${id}/tool-calls`, { name: 'whoami', params: {} }), {})
    expect(res.statusCode).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ isError: false, content: { tenant: 'acme', project: 'p1', processId: id } })
  })

  it('delivers the response before the usage write: a failing write retries for about a second after the stream has ended', async () => {
    const handler = await coldStartLambdaStreaming({ ...tables, ToolUsage: `lu-missing-${suffix}` }, SECRET)
    const spawn = await invokeStreaming(handler, event('POST', '/brain/acme/projects/p1/processes', {})).response
    const id = JSON.parse(spawn.body.toString('utf8')).id
    const { response, done } = invokeStreaming(
      handler,
      event('POST', `/brain/acme/projects/p1/processes/${id}/tool-calls`, { name: 'whoami', params: {} }),
    )
    let ended = false
    void done.then(() => (ended = true))
    const res = await response
    expect(res.statusCode).toBe(200)
    // the write's retries wait 50 + 200 + 800 ms; had they run before the response, the invocation would be over by now
    await new Promise((r) => setImmediate(r))
    expect(ended).toBe(false)
    await done
  })
})
