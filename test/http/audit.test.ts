/**
 * The audit log over HTTP: every write route and every refusal class makes exactly one entry (and a
 * read none), entries carry the actor, versions and a content hash but never content or a secret,
 * and GET /brain/{tenant}/audit shows a tenant its own entries only. Memory stores; the egress
 * refusal is a `rest` tool aimed at 127.0.0.1, which nothing allow-lists (were the guard broken,
 * the request would still stay on this machine).
 */
import { createHash } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { AUDITED_WRITES } from '../../functions/http/observe'
import type { AuditEntry, AuditStore } from '../../lib/audit/ports'
import { AuditRecorder } from '../../lib/audit/recorder'
import { ManualClock } from '../../lib/runtime/clock'
import { MemoryLogger } from '../../lib/runtime/logger'
import { MemoryMetrics } from '../../lib/runtime/metrics'
import { MemoryAuditStore } from '../../lib/stores/memory/audit-store'
import { ALL, client, tokenFor } from '../support/http'

const base = '/brain/acme/projects/p1'
let deps: ReturnType<typeof createMemoryDeps>
let store: MemoryAuditStore
let app: ReturnType<typeof createApp>
let api: ReturnType<typeof client>

beforeEach(async () => {
  store = new MemoryAuditStore()
  deps = createMemoryDeps({ auditStore: store, auditFlushDelayMs: 0 })
  app = createApp(deps)
  api = client(app, await tokenFor('acme'))
})

/** Every entry of a tenant, after the recorder has written what it holds. */
async function entries(tenant = 'acme'): Promise<AuditEntry[]> {
  await deps.audit.recorder.flush()
  return (await store.query(tenant, {}, { limit: 200 }, Math.floor(Date.now() / 1000))).entries.reverse()
}

const TOOL = 'type: doc_lookup\ndescription: Notes.\nparameters:\n  path: notes.md\n'

describe('audit entries for writes', () => {
  it('records each write route once, with actor, action, target, versions and the body hash, and a read not at all', async () => {
    await api.get(`${base}/server-tools`)
    expect(await entries()).toEqual([])

    const put = await api.put(`${base}/documents/notes.md`, '# v1\n')
    expect(put.status).toBe(201)
    const update = await app.request(`${base}/documents/notes.md`, {
      method: 'PUT',
      body: '# v2\n',
      headers: { authorization: `Bearer ${await tokenFor('acme')}`, 'content-type': 'text/plain', 'if-match': put.headers.get('etag')! },
    })
    expect(update.status).toBe(200)
    const [created, updated] = await entries()
    expect(created).toMatchObject({
      tenant: 'acme',
      actor: { subject: 'alice@example.test', issuer: 'server-tools' },
      action: 'document.put',
      target: 'projects/p1/documents/notes.md',
      outcome: 'ok',
      status: 201,
      versionAfter: '1',
    })
    // the hash is the body's, computed here independently
    expect(created.contentHash).toBe(`sha256:${createHash('sha256').update('# v1\n').digest('hex')}`)
    expect(updated).toMatchObject({ versionBefore: '1', versionAfter: '2', status: 200 })
    expect(JSON.stringify([created, updated])).not.toContain('# v')
  })

  it('names every write route of the app, and each one makes exactly one entry', async () => {
    const token = await tokenFor('acme')
    const send = (method: string, path: string, body?: string, type = 'application/json') =>
      app.request(path, { method, body, headers: { authorization: `Bearer ${token}`, 'content-type': type } })
    const spawn = (await (await send('POST', `${base}/processes`, '{"recipe":"default"}')).json()) as { id: string }
    const requests: [string, string, string | undefined, string?][] = [
      ['PUT', `${base}/documents/notes.md`, '# n\n', 'text/plain'],
      ['PUT', `${base}/documents/egress/allow.yaml`, 'hosts: [api.example.com]\n', 'application/yaml'],
      ['DELETE', `${base}/documents/notes.md`, undefined],
      ['PUT', `${base}/server-tools/notes`, TOOL, 'application/yaml'],
      ['DELETE', `${base}/server-tools/notes`, undefined],
      ['PUT', '/brain/acme/secrets/API_KEY', '{"value":"s3cr3t-value-xyz"}'],
      ['DELETE', '/brain/acme/secrets/API_KEY', undefined],
      ['PUT', `${base}/processes/${spawn.id}/client-tools`, '{"tools":[]}'],
      ['POST', '/brain/acme/models/observed-limits', '{"instance":"openai","model":"gpt-4o","errorMessage":"too many tools"}'],
    ]
    for (const [method, path, body, type] of requests) await send(method, path, body, type)
    const got = await entries()
    expect(got.map((e) => e.action)).toEqual([
      'process.spawn',
      'document.put',
      'allow-list.put',
      'document.delete',
      'server-tool.put',
      'server-tool.delete',
      'secret.put',
      'secret.delete',
      'client-tools.put',
      'observed-limit.report',
    ])
    // the table of audited routes and the app's routes agree: a write route added later must be named
    const writes = app.routes
      .filter((r) => ['PUT', 'POST', 'DELETE', 'PATCH'].includes(r.method) && r.path.startsWith('/brain/'))
      .map((r) => `${r.method} ${r.path}`)
    const notWrites = [
      'POST /brain/:tenant/projects/:project/tools/:name/invoke',
      'POST /brain/:tenant/projects/:project/processes/:id/tool-calls',
      'POST /brain/:tenant/projects/:project/processes/:id/diagnostics/empty-response',
      'POST /brain/:tenant/projects/:project/surface/preview',
      'POST /brain/:tenant/projects/:project/mcp',
      'DELETE /brain/:tenant/projects/:project/mcp',
      'POST /brain/:tenant/projects/:project/processes/:id/mcp',
      'DELETE /brain/:tenant/projects/:project/processes/:id/mcp',
    ]
    expect([...new Set(writes)].filter((w) => !notWrites.includes(w)).sort()).toEqual([...AUDITED_WRITES].sort())
  })

  it('never stores a secret value or its hash', async () => {
    await api.put('/brain/acme/secrets/API_KEY', { value: 's3cr3t-value-xyz' })
    const [entry] = await entries()
    expect(entry).toMatchObject({ action: 'secret.put', target: 'secrets/API_KEY', outcome: 'ok' })
    expect(entry.contentHash).toBeUndefined()
    expect(JSON.stringify(entry)).not.toContain('s3cr3t')
  })

  it('records a write that failed with its status and error code', async () => {
    const res = await api.put(`${base}/server-tools/broken`, 'type: doc_lookup\n')
    expect(res.status).toBe(422)
    const [entry] = await entries()
    expect(entry).toMatchObject({ action: 'server-tool.put', outcome: 'failed', status: 422, reason: 'INVALID_CONFIG' })
  })

  it('names the client a request says it comes from (the CLI sends x-server-tools-client)', async () => {
    await app.request(`${base}/documents/a.md`, {
      method: 'PUT',
      body: 'a',
      headers: { authorization: `Bearer ${await tokenFor('acme')}`, 'content-type': 'text/plain', 'x-server-tools-client': 'cli apply' },
    })
    expect((await entries())[0].client).toBe('cli apply')
  })
})

describe('audit entries for refusals', () => {
  it('records a 401 (no token, a bad token) against the tenant in the path, without an actor', async () => {
    await client(app).get(`${base}/server-tools`)
    await client(app, 'not-a-jwt').put(`${base}/documents/x.md`, 'x')
    const got = await entries()
    expect(got.map((e) => [e.action, e.outcome, e.status, e.actor.subject])).toEqual([
      ['auth.unauthenticated', 'denied', 401, undefined],
      ['auth.unauthenticated', 'denied', 401, undefined],
    ])
  })

  it('records a 403 for a missing scope with the scope, and one for another tenant’s token', async () => {
    await client(app, await tokenFor('acme', 'tools:read')).put(`${base}/documents/x.md`, 'x')
    await client(app, await tokenFor('globex')).get(`${base}/server-tools`)
    const got = await entries()
    expect(got.map((e) => [e.action, e.reason, e.actor.subject])).toEqual([
      ['auth.forbidden', 'scope:tools:write', 'alice@example.test'],
      ['auth.forbidden', 'FORBIDDEN', undefined],
    ])
    expect(await entries('globex')).toEqual([])
  })

  it('records an egress refusal inside a tool call once, although the caller gets a 200 with a tool error', async () => {
    await api.put(`${base}/server-tools/local`, 'type: rest\ndescription: Loopback.\nparameters:\n  url: http://127.0.0.1:9/x\n')
    const res = await api.post(`${base}/tools/local/invoke`, { params: {} })
    expect(res.status).toBe(200)
    expect((await res.json()).content.reason).toBe('denied')
    const refusals = (await entries()).filter((e) => e.outcome === 'denied')
    expect(refusals).toEqual([
      expect.objectContaining({
        action: 'egress.refused',
        target: 'host:127.0.0.1',
        reason: 'denied',
        actor: expect.objectContaining({ subject: 'alice@example.test' }),
      }),
    ])
  })

  it('records a budget refusal', async () => {
    await api.put('/brain/acme/projects/_tenant/documents/models/toy/_provider.yaml', 'maxTools: 1\n')
    const spawn = await (await api.post(`${base}/processes`, { models: ['toy/one'] })).json()
    expect((await api.get(`${base}/processes/${spawn.id}/manifest`)).status).toBe(422)
    const refusals = (await entries()).filter((e) => e.outcome === 'denied')
    expect(refusals.map((e) => [e.action, e.reason])).toEqual([['budget.refused', 'BUDGET_TOO_SMALL']])
  })

  it('records each sandbox refusal once, as many as the callers were refused', async () => {
    deps = createMemoryDeps({ auditStore: store, auditFlushDelayMs: 0, sandbox: { tenantConcurrency: 1, tenantQueue: 1, queue: 1 } })
    app = createApp(deps)
    api = client(app, await tokenFor('acme'))
    const busy = { code: 'let i = 0; while (i < 300000) i++; i', timeoutMs: 5000 }
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.post(`${base}/tools/execute_javascript/invoke`, { params: busy }).then((r) => r.status)),
    )
    const refused = answers.filter((s) => s === 503).length
    expect(refused).toBeGreaterThan(0)
    const entriesNow = (await entries()).filter((e) => e.action === 'sandbox.refused')
    expect(entriesNow).toHaveLength(refused)
    expect(entriesNow[0]).toMatchObject({ target: 'projects/p1/sandbox', outcome: 'denied', reason: 'queue_full' })
  })
})

describe('what refusals cost the audit log', () => {
  it('records a tenant’s first 20 refused spawns one entry each and the rest of the window as one digest', async () => {
    const over = { models: Array.from({ length: 40 }, (_, i) => `cortecs/m${i}`) }
    const statuses = await Promise.all(Array.from({ length: 100 }, () => api.post(`${base}/processes`, over).then((r) => r.status)))
    expect(new Set(statuses)).toEqual(new Set([400]))
    expect((await entries()).length).toBe(20)
    await deps.audit.recorder.flush({ endWindow: true })
    const got = await entries()
    expect(got.length).toBe(21)
    expect(got[20]).toMatchObject({ action: 'process.spawn', outcome: 'failed', reason: 'INVALID_INPUT', status: 400, repeated: 80 })
    expect(got[20].actor.subject).toBe(got[0].actor.subject)
  })

  it('bounds what 401s sprayed over made-up tenant ids write: entries of their own, digests, then a count', async () => {
    deps = createMemoryDeps({
      auditStore: store,
      auditFlushDelayMs: 0,
      auditRefusals: { windowMs: 60_000, perTenant: 2, perWindow: 10, kinds: 25, samples: 5 },
    })
    app = createApp(deps)
    for (let i = 0; i < 100; i++) expect((await client(app).get(`/brain/t${i}/projects/p1/server-tools`)).status).toBe(401)
    await deps.audit.recorder.flush({ endWindow: true })
    // 10 of their own (t0–t9), then a digest for each of t10–t34; t35–t99 in the count
    expect(store.requests).toBe(10 + 25)
  })
})

describe('GET /brain/{tenant}/audit', () => {
  it('needs audit:read or tenant:admin', async () => {
    expect((await client(app, await tokenFor('acme', 'tools:read tools:write')).get('/brain/acme/audit')).status).toBe(403)
    expect((await client(app, await tokenFor('acme', 'audit:read')).get('/brain/acme/audit')).status).toBe(200)
    expect((await client(app, await tokenFor('acme', 'tenant:admin')).get('/brain/acme/audit')).status).toBe(200)
  })

  it('answers with the newest first, filtered and paged, and only ever the caller’s tenant', async () => {
    const globex = client(app, await tokenFor('globex', ALL, 'gina'))
    await globex.put('/brain/globex/projects/p1/documents/theirs.md', 'x')
    for (const name of ['a', 'b', 'c']) await api.put(`${base}/documents/${name}.md`, name)
    await api.put('/brain/acme/secrets/K', { value: 'v-123456' })
    const first = await (await api.get('/brain/acme/audit?limit=2&action=document.')).json()
    expect(first.entries.map((e: AuditEntry) => e.target)).toEqual(['projects/p1/documents/c.md', 'projects/p1/documents/b.md'])
    const second = await (await api.get(`/brain/acme/audit?limit=2&action=document.&cursor=${first.next}`)).json()
    expect(second.entries.map((e: AuditEntry) => e.target)).toEqual(['projects/p1/documents/a.md'])
    expect(second.next).toBeUndefined()
    const all = await (await api.get('/brain/acme/audit')).json()
    expect(all.entries.every((e: AuditEntry) => e.tenant === 'acme')).toBe(true)
    expect(JSON.stringify(all)).not.toContain('theirs')
    // globex's own cursor gets acme nothing of globex's
    const theirs = await (await globex.get('/brain/globex/audit?limit=1')).json()
    const crossed = await (
      await api.get(`/brain/acme/audit?cursor=${theirs.entries.length ? encodeURIComponent(theirs.next ?? '') : ''}`)
    ).json()
    expect(JSON.stringify(crossed)).not.toContain('theirs')
    expect((await (await api.get('/brain/acme/audit?target=secrets/')).json()).entries.map((e: AuditEntry) => e.action)).toEqual([
      'secret.put',
    ])
    expect((await (await api.get('/brain/acme/audit?actor=gina')).json()).entries).toEqual([])
  })

  it('answers 400 naming the parameter for a bad time, limit or cursor', async () => {
    for (const [query, pointer] of [
      ['from=yesterday', '/query/from'],
      ['limit=0', '/query/limit'],
      ['limit=201', '/query/limit'],
      ['cursor=bm90LWEtY3Vyc29y', '/query/cursor'],
    ]) {
      const res = await api.get(`/brain/acme/audit?${query}`)
      expect(res.status, query).toBe(400)
      expect((await res.json()).errors[0].pointer).toBe(pointer)
    }
  })

  it('has no route that changes or deletes an entry', () => {
    const auditRoutes = app.routes.filter((r) => r.path.includes('/audit') && r.method !== 'ALL')
    expect(auditRoutes.map((r) => r.method)).toEqual(['GET'])
  })
})

describe('a write that fails', () => {
  it('is retried, then logged whole at error level and counted, never dropped silently', async () => {
    const log = new MemoryLogger()
    const metrics = new MemoryMetrics()
    let attempts = 0
    // a store that refuses (a real backend failing is what dynalite cannot be made to do on demand)
    const failing = new MemoryAuditStore()
    failing.append = async () => {
      attempts++
      throw new Error('table unavailable')
    }
    const recorder = new AuditRecorder({ store: failing, clock: new ManualClock(), log, metrics, flushDelayMs: 0, sleep: async () => {} })
    recorder.record({
      tenant: 'acme',
      actor: { subject: 'alice' },
      action: 'document.put',
      target: 'projects/p1/documents/a.md',
      outcome: 'ok',
    })
    expect(await recorder.flush()).toBe(1)
    expect(attempts).toBe(4)
    const [line] = log.find('audit.write_failed')
    expect(line.level).toBe('error')
    expect(line.fields.entry).toMatchObject({ tenant: 'acme', action: 'document.put', target: 'projects/p1/documents/a.md' })
    expect(metrics.sum('AuditWriteFailures')).toBe(1)
  })

  it('counts as written when a retry finds the entry an earlier, timed-out attempt stored', async () => {
    const backing = new MemoryAuditStore()
    let first = true
    const flaky = new MemoryAuditStore()
    flaky.append = async (e) => {
      await backing.append(e)
      if (first) {
        first = false
        throw new Error('socket timeout after the write landed')
      }
    }
    const log = new MemoryLogger()
    const recorder = new AuditRecorder({ store: flaky, clock: new ManualClock(), log, flushDelayMs: 0, sleep: async () => {} })
    recorder.record({ tenant: 'acme', actor: {}, action: 'auth.unauthenticated', target: 'x', outcome: 'denied' })
    expect(await recorder.flush()).toBe(0)
    expect(log.find('audit.write_failed')).toEqual([])
    expect((await backing.query('acme', {}, { limit: 10 }, 0)).entries).toHaveLength(1)
  })
})

describe('a flush of many entries', () => {
  it('writes at most four at once, so another request never waits behind the whole flush', async () => {
    const backing = new MemoryAuditStore()
    const counted = new MemoryAuditStore()
    let running = 0
    let most = 0
    // a real store's append, held for one turn of the event loop as a network round trip would be
    counted.append = async (e) => {
      most = Math.max(most, ++running)
      await new Promise((r) => setImmediate(r))
      await backing.append(e)
      running--
    }
    const recorder = new AuditRecorder({ store: counted, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0 })
    for (let i = 0; i < 50; i++) recorder.record({ tenant: 'acme', actor: {}, action: 'document.put', target: `t${i}`, outcome: 'ok' })
    const first = recorder.flush()
    for (let i = 50; i < 60; i++) recorder.record({ tenant: 'acme', actor: {}, action: 'document.put', target: `t${i}`, outcome: 'ok' })
    expect(await Promise.all([first, recorder.flush()])).toEqual([0, 0])
    expect(most).toBe(4)
    expect((await backing.query('acme', {}, { limit: 100 }, 0)).entries).toHaveLength(60)
  })
})

describe('a store that writes batches (npm start’s embedded store)', () => {
  // writes that took effect: refusals past a window's first few would be counted into a digest instead
  const draft = (i: number) => ({ tenant: 'acme', actor: {}, action: 'document.put', target: `t${i}`, outcome: 'ok' as const })

  it('gets 25 entries to a write, one write per 25, and every entry once', async () => {
    const backing = new MemoryAuditStore()
    const batched: AuditStore = new MemoryAuditStore()
    const sizes: number[] = []
    batched.append = async () => {
      throw new Error('a store that writes batches is sent no single entry among many')
    }
    batched.appendMany = async (entries) => {
      sizes.push(entries.length)
      for (const e of entries) await backing.append(e)
      return []
    }
    const recorder = new AuditRecorder({ store: batched, clock: new ManualClock(), log: new MemoryLogger(), flushDelayMs: 0 })
    for (let i = 0; i < 60; i++) recorder.record(draft(i))
    expect(await recorder.flush()).toBe(0)
    expect(sizes.sort((a, b) => b - a)).toEqual([25, 25, 10])
    const written = (await backing.query('acme', {}, { limit: 100 }, 0)).entries.map((e) => e.target)
    expect(written.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `t${i}`).sort())
  })

  it('writes what the store left unwritten again, and logs and counts what is still left after the retries', async () => {
    const backing = new MemoryAuditStore()
    const log = new MemoryLogger()
    const metrics = new MemoryMetrics()
    // DynamoDB answers throttled puts as UnprocessedItems; dynalite never does, so a fake store leaves them
    const throttled: AuditStore = new MemoryAuditStore()
    let calls = 0
    // one entry taken a call, never the one for t1
    throttled.appendMany = async (entries) => {
      calls++
      const taken = entries.find((e) => e.target !== 't1')
      if (taken) await backing.append(taken)
      return entries.filter((e) => e !== taken)
    }
    const recorder = new AuditRecorder({ store: throttled, clock: new ManualClock(), log, metrics, flushDelayMs: 0, sleep: async () => {} })
    for (let i = 0; i < 4; i++) recorder.record(draft(i))
    expect(await recorder.flush()).toBe(1)
    expect(calls).toBe(4)
    expect((await backing.query('acme', {}, { limit: 10 }, 0)).entries.map((e) => e.target).sort()).toEqual(['t0', 't2', 't3'])
    expect(log.find('audit.write_failed').map((l) => (l.fields.entry as AuditEntry).target)).toEqual(['t1'])
    expect(metrics.sum('AuditWriteFailures')).toBe(1)
  })
})
