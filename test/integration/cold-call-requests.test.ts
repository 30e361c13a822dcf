/**
 * The DynamoDB requests of a tool call on a cold-started Lambda container (functions/api.ts over
 * dynalite), in the order they go out, counted at Node's HTTP client diagnostics channel. The
 * first call has nothing cached: every request it waits for is a round trip of its cold start
 * (docs/operations/cold-start-and-latency.md). Counts and order only; no timings.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import type { ClientRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { coldStartLambda, type LambdaHandler, lambdaFetch, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'

const SECRET = `cold-call-${uniqueSuffix()}`
const BASE = 'https://abc123.lambda-url.us-east-1.on.aws/brain/acme'
const seen: string[] = []
const onRequest = (message: unknown) => {
  const target = (message as { request: ClientRequest }).request.getHeader('x-amz-target')
  if (typeof target === 'string' && target.startsWith('DynamoDB_20120810.')) seen.push(target.slice('DynamoDB_20120810.'.length))
}
let links: Record<string, string>
let headers: Record<string, string>

beforeAll(async () => {
  links = await provisionLambdaLinks('cold-call')
  headers = {
    authorization: `Bearer ${await tokenFor('acme', 'tools:read tools:write tools:invoke tenant:admin', 'a@example.test', SECRET)}`,
    'content-type': 'application/json',
  }
  const writer = lambdaFetch([await coldStartLambda<LambdaHandler>(links, SECRET)])
  const put = async (path: string, body: string, project = 'p1') =>
    expect(
      (
        await writer(`${BASE}/projects/${project}/documents/${path}`, {
          method: 'PUT',
          headers: { ...headers, 'content-type': 'application/yaml' },
          body,
        })
      ).status,
    ).toBe(201)
  await put('notes.md', '# notes\n')
  await put('server-tools/notes.yaml', 'type: doc_lookup\ndescription: Notes.\nparameters:\n  path: notes.md\n')
  await put('quotas.yaml', 'rules:\n  - match: {}\n    volume: { requests: 1000000, per: day }\n', '_tenant')
  subscribe('http.client.request.start', onRequest)
})

afterAll(() => {
  unsubscribe('http.client.request.start', onRequest)
  vi.unstubAllEnvs()
})

const reads = () => seen.filter((op) => op !== 'UpdateItem')

describe('tool calls on a cold container', () => {
  it('read the stamp, the tool and the quota rules in one request first, and keep them from the second call on', async () => {
    const fetch = lambdaFetch([await coldStartLambda<LambdaHandler>(links, SECRET)])
    const call = async () => {
      seen.length = 0
      const res = await fetch(`${BASE}/projects/p1/tools/notes/invoke`, { method: 'POST', headers, body: '{"params":{}}' })
      expect(res.status, await res.clone().text()).toBe(200)
      expect(((await res.json()) as { content: { content: string } }).content.content).toBe('# notes\n')
    }
    await call()
    // The stamp, the tool definition and quotas.yaml (both layers of each) in one BatchGetItem: the
    // container holds nothing of the tenant, so the reads go out beside the stamp read, and the
    // admission's rules are read beside the lookup. Then the quota lease (UpdateItem) and
    // doc_lookup's read of notes.md (after the stamp: kept). The usage write after the response
    // follows (counted in storage-requests.test.ts).
    expect(seen.slice(0, 3)).toEqual(['BatchGetItem', 'UpdateItem', 'BatchGetItem'])
    // What the first call read beside its stamp was not kept: the second reads the tool and the
    // rules again, after its stamp; the third reads only its stamp.
    await call()
    expect(reads()).toEqual(['GetItem', 'BatchGetItem'])
    await call()
    expect(reads()).toEqual(['GetItem'])
  })
})
