/**
 * The request's scope as the HTTP edge reads it from the path (functions/http/observe.ts): its
 * project and process go on the server span (the tool, read the same way, goes to log lines).
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { noopMetrics } from '../../lib/runtime/metrics'
import { MemoryTracer } from '../../lib/runtime/tracer'
import { client, tokenFor } from '../support/http'

describe('the request scope on the server span', () => {
  it('names the project, decoded, and the process of a process route only', async () => {
    const tracer = new MemoryTracer()
    const app = createApp(createMemoryDeps({ observability: { tracer, metrics: noopMetrics, ready: () => undefined } }))
    const api = client(app, await tokenFor('acme'))
    const spawned = await api.post('/brain/acme/projects/p%31/processes', { allowedTools: ['whoami'] })
    const id = (await spawned.json()).id as string
    await api.post(`/brain/acme/projects/p1/processes/${id}/tool-calls`, { name: 'whoami', params: {} })
    await api.post('/brain/acme/projects/p1/tools/who%61mi/invoke', { params: {} })
    await api.get('/brain/acme/projects/p1/server-tools/handbook')
    await api.get('/brain/acme/projects/p1/documents/tools/notes.md')
    const server = tracer.spans
      .filter((s) => s.kind === 'server')
      .map((s) => [s.attributes['server_tools.project'], s.attributes['server_tools.process']])
    expect(server).toEqual([
      ['p1', undefined],
      ['p1', id],
      ['p1', undefined],
      ['p1', undefined],
      ['p1', undefined],
    ])
  })
})
