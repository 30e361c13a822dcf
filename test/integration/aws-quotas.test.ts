/**
 * Quotas on DynamoDB (dynalite): the counter store contract, and two cold-started instances of
 * functions/api.ts (two containers, two composition roots) sharing one counters table, each
 * request going to the other container: together they admit no more than the limit and strand
 * at most a slice each; every refusal is a 429 with Retry-After and in the audit log: each
 * container's first 20 an entry each, the rest in a digest its next invocation after the refusal
 * window (1 s here) writes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sliceOf } from '../../lib/quotas/limiter'
import { ensureTable } from '../../lib/stores/aws/provision'
import { DynamoQuotaCounterStore, quotaCountersTableSpec } from '../../lib/stores/aws/quota-store'
import { quotaCounterStoreContract } from '../contract/quota-counter-store.contract'
import { awsTestClients, coldStartLambda, type LambdaHandler, lambdaFetch, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'

quotaCounterStoreContract('dynamodb', async () => {
  const tableName = `quota-counters-${uniqueSuffix()}`
  await ensureTable(awsTestClients().dynamo, quotaCountersTableSpec(tableName))
  return new DynamoQuotaCounterStore({ dynamo: awsTestClients().dynamo, tableName })
})

const SECRET = `quota-test-${uniqueSuffix()}`
const BASE = 'https://abc123.lambda-url.us-east-1.on.aws/brain/acme'
const LIMIT = 60

let containers: LambdaHandler[]
let token: string

beforeAll(async () => {
  const links = await provisionLambdaLinks('quotas')
  vi.stubEnv('AUDIT_REFUSAL_WINDOW_SECONDS', '1')
  containers = [await coldStartLambda<LambdaHandler>(links, SECRET), await coldStartLambda<LambdaHandler>(links, SECRET)]
  token = await tokenFor('acme', 'tools:read tools:write tools:invoke tenant:admin audit:read', 'admin@example.test', SECRET)
})

afterAll(() => {
  vi.unstubAllEnvs()
})

describe('quotas across Lambda containers', () => {
  it('two containers admit at most the limit together, strand at most a slice each, and answer the rest 429 with Retry-After', async () => {
    const fetch = lambdaFetch(containers)
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const put = await fetch(`${BASE}/projects/_tenant/documents/quotas.yaml`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: `rules:\n  - match: { tool: whoami }\n    volume: { requests: ${LIMIT}, per: day }\n`,
    })
    expect(put.status).toBe(201)
    const untilMidnight = () => (Date.UTC(...today()) + 86_400_000 - Date.now()) / 1000
    const latest = Math.ceil(untilMidnight())
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, () =>
        fetch(`${BASE}/projects/p1/tools/whoami/invoke`, { method: 'POST', headers, body: '{"params":{}}' }),
      ),
    )
    const ok = answers.filter((a) => a.status === 200).length
    const refused = answers.filter((a) => a.status === 429)
    expect(ok + refused.length).toBe(3 * LIMIT)
    expect(ok).toBeLessThanOrEqual(LIMIT)
    expect(ok).toBeGreaterThanOrEqual(LIMIT - 2 * (sliceOf(LIMIT) - 1))
    // the seconds until the day's window ends (UTC midnight), as they were when each was refused
    const earliest = Math.floor(untilMidnight())
    for (const r of refused) {
      const after = Number(r.headers.get('retry-after'))
      expect(after).toBeGreaterThanOrEqual(earliest)
      expect(after).toBeLessThanOrEqual(latest)
    }
    const status = (await (await fetch(`${BASE}/quotas?project=p1`, { headers })).json()) as { rules: { windows: unknown[] }[] }
    expect(status.rules[0].windows[0]).toMatchObject({ kind: 'volume', limit: LIMIT, used: LIMIT, remaining: 0 })
    // AUDIT_TABLE is not a link, so each cold start here keeps its audit log in memory: ask each,
    // once its refusal window has ended (the read flushes first, which writes the window's digests)
    await new Promise((r) => setTimeout(r, 1_100))
    let entries = 0
    let audited = 0
    for (const c of containers) {
      const page = (await (await lambdaFetch([c])(`${BASE}/audit?action=quota.refused&limit=200`, { headers })).json()) as {
        entries: { repeated?: number }[]
      }
      entries += page.entries.length
      audited += page.entries.reduce((sum, e) => sum + (e.repeated ?? 1), 0)
    }
    expect(audited).toBe(refused.length)
    // ~60 refusals a container (each request goes to the other one): 20 entries each and one digest each
    expect(entries).toBe(2 * (20 + 1))
  })
})

function today(): [number, number, number] {
  const d = new Date()
  return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()]
}
