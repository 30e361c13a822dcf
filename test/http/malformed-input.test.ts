/** No request can produce a 5xx from bad input: every write route, fed malformed bodies, answers a 4xx or a tool error. */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ALL, tokenFor } from '../support/http'

const BODIES = [
  '',
  '{',
  '[]',
  'null',
  '42',
  '"x"',
  '{"recipe":5}',
  '{"recipe":"nope"}',
  '{"name":5}',
  '{"name":"whoami","params":[1]}',
  '{"models":"x"}',
  '{"models":[5]}',
  '{"engine":{}}',
  '{"messages":5}',
  '{"messages":[{"role":1}]}',
  '{"instance":1}',
  '{"value":5}',
  '{"params":"x"}',
  'a: [',
  '\u0000\u0001',
  `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  'x: &a [*a]',
  'type: scripted\ndescription: d\nparameters: { inputs: [], source: 1 }\n',
]

describe('malformed input', () => {
  it('never answers 5xx on any body-taking route, whatever the body', async () => {
    const app = createApp(createMemoryDeps())
    const headers = { authorization: `Bearer ${await tokenFor('acme', ALL)}`, 'content-type': 'application/json' }
    const spawned = await app.request('/brain/acme/projects/p1/processes', { method: 'POST', headers, body: '{}' })
    const { id } = (await spawned.json()) as { id: string }
    const routes: [string, string][] = [
      ['POST', '/brain/acme/projects/p1/processes'],
      ['POST', '/brain/acme/projects/p1/processes/nope/tool-calls'],
      ['POST', `/brain/acme/projects/p1/processes/${id}/tool-calls`],
      ['POST', `/brain/acme/projects/p1/processes/${id}/diagnostics/empty-response`],
      ['POST', '/brain/acme/models/observed-limits'],
      ['PUT', '/brain/acme/secrets/X'],
      ['POST', '/brain/acme/projects/p1/tools/whoami/invoke'],
      ['PUT', '/brain/acme/projects/p1/server-tools/x'],
      ['PUT', '/brain/acme/projects/p1/documents/recipes/r.yaml'],
      ['PUT', '/brain/acme/projects/p1/documents/engines/e.yaml'],
      ['PUT', '/brain/acme/projects/p1/documents/mcp-servers/m.yaml'],
      ['PUT', '/brain/acme/projects/p1/documents/models/openai/_provider.yaml'],
      ['PUT', '/brain/acme/projects/_tenant/documents/egress/allow.yaml'],
    ]
    const failures: string[] = []
    for (const [method, path] of routes) {
      for (const body of BODIES) {
        const res = await app.request(path, { method, headers, body })
        if (res.status >= 500)
          failures.push(`${res.status} ${method} ${path} ${JSON.stringify(body).slice(0, 40)}: ${(await res.text()).slice(0, 120)}`)
      }
    }
    expect(failures).toEqual([])
    // the process survived all of that, and so did the tenant's tools
    const after = await app.request(`/brain/acme/projects/p1/processes/${id}/manifest`, { headers })
    expect(after.status).toBe(200)
  }, 60_000)
})
