import { beforeEach, describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { ManualClock } from '../../lib/runtime/clock'
import { client, tokenFor } from '../support/http'

const insights = '/brain/acme/admin/projects/p1/insights/tool-usage'
let deps: ReturnType<typeof createMemoryDeps>
let api: ReturnType<typeof client>
let clock: ManualClock

beforeEach(async () => {
  clock = new ManualClock(Date.UTC(2026, 3, 1, 8, 30, 0))
  deps = createMemoryDeps({ clock })
  api = client(createApp(deps), await tokenFor('acme'))
})

describe('GET /admin/projects/{p}/insights/tool-usage', () => {
  it('answers an empty list when nothing was recorded', async () => {
    const res = await api.get(insights)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([])
  })

  it('shows calls made through the invoke route under the _unknown role, after the buffer is flushed', async () => {
    for (let i = 0; i < 3; i++) expect((await api.post('/brain/acme/projects/p1/tools/whoami/invoke', { params: {} })).status).toBe(200)
    await deps.usage.flush()
    expect(await (await api.get(insights)).json()).toEqual([
      {
        role: '_unknown',
        toolCount: 1,
        calls: 3,
        codeCalls: 0,
        refusals: 0,
        discoveryHits: 0,
        listedHits: 0,
        demand: 3,
        lastActivityAt: '2026-04-01T08:30:00.000Z',
        tools: [
          {
            toolName: 'whoami',
            family: 'whoami',
            calls: 3,
            codeCalls: 0,
            refusals: 0,
            discoveryHits: 0,
            listedHits: 0,
            demand: 3,
            lastCallAt: '2026-04-01T08:30:00.000Z',
            lastDiscoveryAt: null,
            lastListedAt: null,
          },
        ],
        describedNeverCalled: [],
        deferredNeverDiscovered: null,
        primaryNeverCalled: null,
        recommendations: [],
        callsPerDay: { from: '2026-03-03', to: '2026-04-01', counts: [{ day: '2026-04-01', calls: 3 }] },
      },
    ])
  })

  it('draws calls per day from the day counts: a ?days window, days without calls left out', async () => {
    await api.post('/brain/acme/projects/p1/tools/whoami/invoke', { params: {} })
    clock.advance(2 * 86_400_000)
    for (let i = 0; i < 2; i++) await api.post('/brain/acme/projects/p1/tools/whoami/invoke', { params: {} })
    await deps.usage.flush()
    const [role] = await (await api.get(`${insights}?days=7`)).json()
    expect(role.callsPerDay).toEqual({
      from: '2026-03-28',
      to: '2026-04-03',
      counts: [
        { day: '2026-04-01', calls: 1 },
        { day: '2026-04-03', calls: 2 },
      ],
    })
    const [narrow] = await (await api.get(`${insights}?days=1`)).json()
    expect(narrow.callsPerDay.counts).toEqual([{ day: '2026-04-03', calls: 2 }])
  })

  it('does not count a failed call', async () => {
    const res = await api.post('/brain/acme/projects/p1/tools/whoami/invoke', { params: { unexpected: true } })
    expect((await res.json()).isError).toBe(true)
    await deps.usage.flush()
    expect(await (await api.get(insights)).json()).toEqual([])
  })

  it('keeps projects and tenants apart', async () => {
    await api.post('/brain/acme/projects/p2/tools/whoami/invoke', { params: {} })
    await deps.usage.flush()
    expect(await (await api.get(insights)).json()).toEqual([])
    expect(await (await api.get('/brain/acme/admin/projects/p2/insights/tool-usage')).json()).toHaveLength(1)
  })

  it('needs the insights:read scope', async () => {
    const readOnly = client(createApp(deps), await tokenFor('acme', 'tools:read tools:invoke'))
    const res = await readOnly.get(insights)
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ code: 'FORBIDDEN' })
  })

  it('refuses another tenant with 403', async () => {
    const other = client(createApp(deps), await tokenFor('globex'))
    expect((await other.get(insights)).status).toBe(403)
  })

  it('answers 400 to a days window that is not a whole number from 1 to 3650', async () => {
    for (const days of ['0', 'abc', '3651', '1.5', '-2']) {
      const res = await api.get(`${insights}?days=${days}`)
      expect(res.status, days).toBe(400)
      expect((await res.json()).code).toBe('INVALID_INPUT')
    }
    expect((await api.get(`${insights}?days=7`)).status).toBe(200)
  })

  it('is read-only: other methods are not routes', async () => {
    expect((await api.post(insights, {})).status).toBe(404)
    expect((await api.delete(insights)).status).toBe(404)
  })
})
