/**
 * A token cap on prompt_template calls through the HTTP API: the tokens come from the usage the
 * model endpoints report — a local server on 127.0.0.1 speaking the OpenAI chat completions and
 * Anthropic messages formats — and a call refused for tokens never reaches the endpoint. Egress
 * allows 127.0.0.1 only; nothing here talks to any other address.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { AllowList } from '../../lib/egress/allow-list'
import { EgressClient } from '../../lib/egress/client'
import { ManualClock } from '../../lib/runtime/clock'
import { MemorySecretStore } from '../../lib/secrets/memory'
import { MemoryAuditStore } from '../../lib/stores/memory/audit-store'
import { client, tokenFor } from '../support/http'

/** Answers every completion with the same reported usage; counts what reached it. */
let requests = 0
let server: http.Server
let url = ''
const reported = { input: 40, output: 20 }

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      requests++
      const body =
        req.url === '/v1/messages'
          ? {
              id: 'msg_1',
              type: 'message',
              role: 'assistant',
              model: 'claude-3-5-haiku-20241022',
              content: [{ type: 'text', text: 'Lima.' }],
              stop_reason: 'end_turn',
              usage: { input_tokens: reported.input, output_tokens: reported.output },
            }
          : {
              id: 'chatcmpl-1',
              object: 'chat.completion',
              model: 'gpt-4o-mini',
              choices: [{ index: 0, message: { role: 'assistant', content: 'Lima.', refusal: null }, finish_reason: 'stop' }],
              usage: { prompt_tokens: reported.input, completion_tokens: reported.output, total_tokens: 60 },
            }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const base = '/brain/acme/projects/p1'
let deps: ReturnType<typeof createMemoryDeps>
let api: ReturnType<typeof client>
let audit: MemoryAuditStore

const tool = (model: string) =>
  `type: prompt_template\ndescription: Capital of a country.\nparameters:\n  promptPrefix: Name the capital.\n  model: ${model}\n  inputs:\n    - { name: country, type: string }\n`

beforeEach(async () => {
  requests = 0
  const secrets = new MemorySecretStore()
  audit = new MemoryAuditStore()
  deps = createMemoryDeps({
    clock: new ManualClock(Date.UTC(2026, 0, 1, 18, 0, 0)),
    bundledFiles: [],
    secrets,
    auditStore: audit,
    auditFlushDelayMs: 0,
    egress: new EgressClient({ allow: AllowList.of({ hosts: ['127.0.0.1'] }) }),
  })
  api = client(createApp(deps), await tokenFor('acme'))
  await secrets.put('acme', 'KEY', 'sk-test-key')
  const put = async (path: string, body: string) => {
    const res = await api.put(`/brain/acme/projects/_tenant/documents/${path}`, body)
    expect(res.status, await res.clone().text()).toBe(201)
  }
  await put('models/oai/_provider.yaml', `wireType: openai\nbaseUrl: ${url}/v1\napiKey: \${secret:KEY}\n`)
  await put('models/oai/mini.yaml', 'modelId: gpt-4o-mini\n')
  await put('models/ant/_provider.yaml', `wireType: anthropic\nbaseUrl: ${url}\napiKey: \${secret:KEY}\n`)
  await put('models/ant/haiku.yaml', 'modelId: claude-3-5-haiku-20241022\n')
  await put('quotas.yaml', 'rules:\n  - match: { type: prompt_template }\n    volume: { tokens: 200, per: day }\n')
  expect((await api.put(`${base}/server-tools/capital`, tool('oai/mini'))).status).toBe(201)
  expect((await api.put(`${base}/server-tools/capital_ant`, tool('ant/haiku'))).status).toBe(201)
})

const ask = (name = 'capital') => api.post(`${base}/tools/${name}/invoke`, { params: { country: 'Peru' } })

describe('a token cap on prompt_template calls', () => {
  it('admits calls while the day has tokens left, then answers 429 with Retry-After and never calls the model', async () => {
    const statuses = []
    for (let i = 0; i < 6; i++) statuses.push((await ask(i % 2 ? 'capital_ant' : 'capital')).status)
    // 60 tokens a call against 200: three calls leave 20, the fourth is admitted on them and spends 60
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
    expect(requests).toBe(4)
    const refused = await ask()
    expect(refused.headers.get('retry-after')).toBe(String(6 * 3600))
    expect((await refused.json()).detail).toContain('allows 200 model tokens per day')
  })

  it('shows the token window in GET /quotas, and the refusals in usage and the audit log', async () => {
    for (let i = 0; i < 5; i++) await ask()
    const [rule] = (await (await api.get('/brain/acme/quotas?project=p1')).json()).rules
    expect(rule).toMatchObject({ volume: { tokens: 200, per: 'day' } })
    expect(rule.windows).toEqual([
      expect.objectContaining({ kind: 'tokens', limit: 200, used: 200, remaining: 0, resetsInSeconds: 6 * 3600 }),
    ])
    await deps.usage.flush()
    const [role] = await (await api.get('/brain/acme/admin/projects/p1/insights/tool-usage')).json()
    expect(role.tools[0]).toMatchObject({ toolName: 'capital', calls: 4, refusals: 1 })
    await deps.audit.recorder.flush()
    const { entries } = await audit.query('acme', { action: 'quota.refused' }, { limit: 10 }, Math.floor(Date.UTC(2026, 0, 1, 18) / 1000))
    expect(entries.map((e) => e.target)).toEqual(['projects/p1/tools/capital'])
  })
})
