/**
 * Token caps across Lambda containers: two cold-started instances of functions/api.ts (two
 * composition roots) sharing one set of tables in dynalite, requests alternating between them,
 * `prompt_template` calls to a model endpoint on 127.0.0.1 that reports the tokens each call
 * used. The tokens used end within the documented bound — at least the cap (what the containers
 * reserved is spent before they refuse) and less than the cap plus one call per container (each
 * serves one request at a time) — and a refused call never reaches the endpoint. Egress allows
 * 127.0.0.1 only; nothing here talks to any other address.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { coldStartLambda, type LambdaHandler, lambdaFetch, provisionLambdaLinks, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'

const SECRET = `token-quotas-lambda-${uniqueSuffix()}`

/** Calls that reached the endpoint, and the tokens it reported for them. */
let reached = 0
let reportedTotal = 0
let server: http.Server
let url = ''
let fetch: ReturnType<typeof lambdaFetch>

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      // the call's size travels in its input (`size-<n>`): each pattern below picks its own
      const size = Number(/size-(\d+)/.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? 1)
      reached++
      reportedTotal += size
      const output = Math.min(size, 5)
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Lima.', refusal: null }, finish_reason: 'stop' }],
          usage: { prompt_tokens: size - output, completion_tokens: output, total_tokens: size },
        }),
      )
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  vi.stubEnv('EGRESS_ALLOW_HOSTS', '127.0.0.1')
  const links = await provisionLambdaLinks('token-quotas')
  fetch = lambdaFetch([await coldStartLambda<LambdaHandler>(links, SECRET), await coldStartLambda<LambdaHandler>(links, SECRET)])
})

afterAll(async () => {
  vi.unstubAllEnvs()
  await new Promise<void>((r) => server.close(() => r()))
})

beforeEach(() => {
  reached = 0
  reportedTotal = 0
})

/** Call sizes invented to meet the bound's edges; each runs in a tenant of its own (its own counters). */
const patterns: Record<string, { cap: number; sizes: number[] }> = {
  'uneven calls': { cap: 1000, sizes: [60, 35, 120, 10, 75] },
  'growing calls': { cap: 600, sizes: [10, 20, 40, 80, 160, 320] },
  'one call larger than the whole cap': { cap: 1000, sizes: [1500] },
  'one-token calls': { cap: 40, sizes: [1] },
}

describe('a token cap across two Lambda containers', () => {
  it.each(Object.keys(patterns))('%s: tokens used reach the cap and stay below it plus one call per container', async (name) => {
    const { cap, sizes } = patterns[name]
    const tenant = `t${uniqueSuffix().replace(/[^a-z0-9]/g, '')}`.slice(0, 24)
    const base = `https://abc123.lambda-url.us-east-1.on.aws/brain/${tenant}`
    const headers = {
      authorization: `Bearer ${await tokenFor(tenant, 'tools:read tools:write tools:invoke tenant:admin', 'admin@example.test', SECRET)}`,
      'content-type': 'application/json',
    }
    const put = async (project: string, path: string, body: string) => {
      const res = await fetch(`${base}/projects/${project}/documents/${path}`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/yaml' },
        body,
      })
      expect(res.status, await res.clone().text()).toBe(201)
    }
    await put('_tenant', 'models/oai/_provider.yaml', `wireType: openai\nbaseUrl: ${url}/v1\n`)
    await put('_tenant', 'models/oai/mini.yaml', 'modelId: gpt-4o-mini\n')
    await put('_tenant', 'quotas.yaml', `rules:\n  - match: { type: prompt_template }\n    volume: { tokens: ${cap}, per: day }\n`)
    await put(
      'p1',
      'server-tools/capital.yaml',
      'type: prompt_template\ndescription: Capital of a country.\nparameters:\n  promptPrefix: Name the capital.\n  model: oai/mini\n  inputs:\n    - { name: country, type: string }\n',
    )

    // one call at a time, alternating containers, until both have refused in a row
    let admitted = 0
    let refusedInARow = 0
    const retryAfters: number[] = []
    // Retry-After is rounded up at the moment of each refusal: the seconds to midnight measured before
    // the first call bound it from above (measured after the last one, a second boundary passed in
    // between made a right answer one too many)
    const midnight = Date.UTC(...today()) + 86_400_000
    const mostSeconds = Math.ceil((midnight - Date.now()) / 1000)
    for (let i = 0; refusedInARow < 2 && i < 400; i++) {
      const size = sizes[admitted % sizes.length]
      const res = await fetch(`${base}/projects/p1/tools/capital/invoke`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ params: { country: `size-${size}` } }),
      })
      if (res.status === 200) {
        expect(((await res.json()) as { isError: boolean }).isError).toBe(false)
        admitted++
        refusedInARow = 0
      } else {
        expect(res.status, await res.clone().text()).toBe(429)
        retryAfters.push(Number(res.headers.get('retry-after')))
        refusedInARow++
      }
    }
    expect(refusedInARow).toBe(2)
    // refused calls ran nothing: the endpoint saw exactly the admitted ones
    expect(reached).toBe(admitted)
    const largest = Math.max(...sizes)
    expect(reportedTotal).toBeGreaterThanOrEqual(cap)
    expect(reportedTotal).toBeLessThan(cap + 2 * largest)
    const fewestSeconds = Math.ceil((midnight - Date.now()) / 1000)
    for (const after of retryAfters) {
      expect(after).toBeGreaterThanOrEqual(fewestSeconds - 60)
      expect(after).toBeLessThanOrEqual(mostSeconds)
    }
    const status = (await (await fetch(`${base}/quotas?project=p1`, { headers })).json()) as { rules: { windows: unknown[] }[] }
    expect(status.rules[0].windows[0]).toMatchObject({ kind: 'tokens', limit: cap, used: cap, remaining: 0 })
  })
})

function today(): [number, number, number] {
  const d = new Date()
  return [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()]
}
