/** Insights (spec §14.4) and the discovery funnel: shapes, ordering, and the recommendation rule. */
import { describe, expect, it } from 'vitest'
import type { RoleSurface } from '../../../lib/usage/insights'
import { computeInsights, DEMOTE_MIN_ROLE_CALLS, PROMOTE_MIN_DISCOVERIES } from '../../../lib/usage/insights'
import type { ToolUsageRecord } from '../../../lib/usage/ports'
import { USAGE_DAY_RETENTION_DAYS } from '../../../lib/usage/ports'

const NOW = Date.UTC(2026, 5, 30, 12, 0, 0)
const daysAgo = (d: number) => new Date(NOW - d * 24 * 3600_000).toISOString()
const row = (role: string, tool: string, over: Partial<ToolUsageRecord> = {}): ToolUsageRecord => ({
  role,
  tool,
  family: tool.includes('__') ? tool.split('__')[0] : tool.split('_')[0],
  calls: 0,
  discoveryHits: 0,
  listedHits: 0,
  ...over,
})

describe('tool-usage insights', () => {
  it('is an empty list when nothing was recorded', () => {
    expect(computeInsights([], { now: NOW })).toEqual([])
  })

  it('answers one entry per role with exactly the documented fields and ISO-8601 instants or null', () => {
    const out = computeInsights(
      [
        row('coder', 'file_read', {
          calls: 3,
          codeCalls: 2,
          refusals: 5,
          discoveryHits: 1,
          listedHits: 2,
          lastCallAt: daysAgo(1),
          lastDiscoveryAt: daysAgo(2),
          lastListedAt: daysAgo(2),
        }),
        row('coder', 'whoami', { listedHits: 2, lastListedAt: daysAgo(2) }),
      ],
      { now: NOW },
    )
    expect(out).toEqual([
      {
        role: 'coder',
        toolCount: 2,
        calls: 3,
        codeCalls: 2,
        refusals: 5,
        discoveryHits: 1,
        listedHits: 4,
        demand: 4,
        lastActivityAt: daysAgo(1),
        tools: [
          {
            toolName: 'file_read',
            family: 'file',
            calls: 3,
            codeCalls: 2,
            refusals: 5,
            discoveryHits: 1,
            listedHits: 2,
            demand: 4,
            lastCallAt: daysAgo(1),
            lastDiscoveryAt: daysAgo(2),
            lastListedAt: daysAgo(2),
          },
          {
            toolName: 'whoami',
            family: 'whoami',
            calls: 0,
            codeCalls: 0,
            refusals: 0,
            discoveryHits: 0,
            listedHits: 2,
            demand: 0,
            lastCallAt: null,
            lastDiscoveryAt: null,
            lastListedAt: daysAgo(2),
          },
        ],
        describedNeverCalled: [],
        deferredNeverDiscovered: null,
        primaryNeverCalled: null,
        recommendations: [],
        callsPerDay: { from: '2026-06-01', to: '2026-06-30', counts: [] },
      },
    ])
    expect(out[0].lastActivityAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  it('keeps only the window of day counts, at most the retention, per role and in day order', () => {
    const dayRecords = [
      { role: 'coder', day: '2026-06-30', calls: 4 },
      { role: 'coder', day: '2026-06-01', calls: 1 },
      { role: 'coder', day: '2026-05-31', calls: 9 },
      { role: 'chat', day: '2026-06-29', calls: 2 },
    ]
    const rows = [row('coder', 'a_x', { calls: 14 }), row('chat', 'a_x', { calls: 2 })]
    const byRole = Object.fromEntries(computeInsights(rows, { now: NOW, dayRecords }).map((r) => [r.role, r.callsPerDay]))
    expect(byRole.coder.counts).toEqual([
      { day: '2026-06-01', calls: 1 },
      { day: '2026-06-30', calls: 4 },
    ])
    expect(byRole.chat.counts).toEqual([{ day: '2026-06-29', calls: 2 }])
    const long = computeInsights(rows, { now: NOW, days: 3650, dayRecords })[0].callsPerDay
    expect([long.from, long.to]).toEqual(['2025-06-30', '2026-06-30'])
    expect(USAGE_DAY_RETENTION_DAYS).toBe(366)
  })

  it('computes demand as calls + discoveryHits, for tools and roles', () => {
    const [coder] = computeInsights([row('coder', 'a_x', { calls: 2, discoveryHits: 5, listedHits: 100 })], { now: NOW })
    expect([coder.demand, coder.tools[0].demand]).toEqual([7, 7])
  })

  it('orders tools by demand descending, then by name', () => {
    const [coder] = computeInsights(
      [
        row('coder', 'zeta', { calls: 5 }),
        row('coder', 'beta', { discoveryHits: 2 }),
        row('coder', 'alpha', { calls: 1, discoveryHits: 1 }),
        row('coder', 'gamma', { calls: 9 }),
      ],
      { now: NOW },
    )
    expect(coder.tools.map((t) => t.toolName)).toEqual(['gamma', 'zeta', 'alpha', 'beta'])
  })

  it('orders roles by demand descending, then by role', () => {
    const out = computeInsights(
      [
        row('chat', 'whoami', { calls: 1 }),
        row('coder', 'whoami', { calls: 10 }),
        row('_unknown', 'whoami', { calls: 1 }),
        row('writer', 'doc_read', { discoveryHits: 4 }),
      ],
      { now: NOW },
    )
    expect(out.map((r) => r.role)).toEqual(['coder', 'writer', '_unknown', 'chat'])
  })

  it('takes lastActivityAt from the latest call or discovery of the role', () => {
    const [r] = computeInsights(
      [row('coder', 'a', { calls: 1, lastCallAt: daysAgo(5) }), row('coder', 'b', { discoveryHits: 1, lastDiscoveryAt: daysAgo(3) })],
      { now: NOW },
    )
    expect(r.lastActivityAt).toBe(daysAgo(3))
  })
})

describe('the discovery funnel', () => {
  const surface: RoleSurface = {
    primary: ['tool_list', 'tool_description', 'file_read', 'file_write', 'slack_post'],
    deferred: ['gmail__send', 'gmail__search', 'doc_lookup', 'calendar_add'],
  }
  const records = [
    row('coder', 'tool_list', { calls: 30, lastCallAt: daysAgo(1) }),
    row('coder', 'file_read', { calls: 12, lastCallAt: daysAgo(1) }),
    row('coder', 'slack_post', { calls: 2, lastCallAt: daysAgo(90) }),
    row('coder', 'gmail__send', { calls: 2, discoveryHits: 2, lastCallAt: daysAgo(2), lastDiscoveryAt: daysAgo(2) }),
    row('coder', 'gmail__search', { discoveryHits: 1, lastDiscoveryAt: daysAgo(4) }),
    row('coder', 'doc_lookup', { discoveryHits: 6, lastDiscoveryAt: daysAgo(40) }),
  ]
  const [coder] = computeInsights(records, { now: NOW, surfaces: new Map([['coder', surface]]) })

  it('lists tools described but never called', () => {
    expect(coder.describedNeverCalled).toEqual(['doc_lookup', 'gmail__search'])
  })

  it('lists allowed deferred tools not described within the window', () => {
    expect(coder.deferredNeverDiscovered).toEqual(['calendar_add', 'doc_lookup'])
  })

  it('lists primary tools not called within the window', () => {
    expect(coder.primaryNeverCalled).toEqual(['file_write', 'slack_post', 'tool_description'])
  })

  it('widens the window on request', () => {
    const [wide] = computeInsights(records, { now: NOW, days: 120, surfaces: new Map([['coder', surface]]) })
    expect(wide.primaryNeverCalled).toEqual(['file_write', 'tool_description'])
    expect(wide.deferredNeverDiscovered).toEqual(['calendar_add'])
  })

  it('reports null for the surface-dependent lists of a role whose surface is unknown', () => {
    const [unknown] = computeInsights([row('_unknown', 'doc_lookup', { discoveryHits: 1 })], {
      now: NOW,
      surfaces: new Map([['coder', surface]]),
    })
    expect(unknown).toMatchObject({
      describedNeverCalled: ['doc_lookup'],
      deferredNeverDiscovered: null,
      primaryNeverCalled: null,
      recommendations: [],
    })
  })

  it(`recommends promoting a deferred family described at least ${PROMOTE_MIN_DISCOVERIES} times and called`, () => {
    expect(coder.recommendations.filter((r) => r.kind === 'promote')).toEqual([
      {
        kind: 'promote',
        family: 'gmail',
        reason: 'deferred, yet described 3 times and called 2 times: each use costs a tool_description round trip',
      },
    ])
  })

  it('says "once" for a count of one in a recommendation, never "1 times"', () => {
    const once = [row('coder', 'gmail__send', { discoveryHits: 4, calls: 1, lastCallAt: daysAgo(1), lastDiscoveryAt: daysAgo(1) })]
    const [r] = computeInsights(once, { now: NOW, surfaces: new Map([['coder', surface]]) })
    expect(r.recommendations[0].reason).toBe(
      'deferred, yet described 4 times and called once: each use costs a tool_description round trip',
    )
  })

  it('does not recommend promoting a family that was described often but never called', () => {
    expect(coder.recommendations.map((r) => r.family)).not.toContain('doc')
  })

  it(`recommends demoting a primary family none of whose tools was called in the window once the role made ${DEMOTE_MIN_ROLE_CALLS} calls`, () => {
    expect(coder.recommendations.filter((r) => r.kind === 'demote')).toEqual([
      {
        kind: 'demote',
        family: 'slack',
        reason:
          '1 primary tool (slack_post) not called in the last 30 days while this role made 46 calls: it takes manifest slots for nothing',
      },
    ])
  })

  it('never recommends demoting a family with one called tool, or the capability floor', () => {
    const families = coder.recommendations.map((r) => r.family)
    expect(families).not.toContain('file') // file_read was called, file_write was not: the family stays
    expect(families).not.toContain('tool') // tool_description was never called, but it is the floor
  })

  it('recommends no demotion before the role made enough calls to judge', () => {
    const quiet = [row('coder', 'file_read', { calls: DEMOTE_MIN_ROLE_CALLS - 1, lastCallAt: daysAgo(1) })]
    const [r] = computeInsights(quiet, { now: NOW, surfaces: new Map([['coder', surface]]) })
    expect(r.recommendations).toEqual([])
  })

  it('orders recommendations promote before demote, then by family', () => {
    const s: RoleSurface = { primary: ['zeta_a', 'alpha_a', 'file_read'], deferred: ['mail__a', 'beta__a'] }
    const [r] = computeInsights(
      [
        row('x', 'file_read', { calls: 30, lastCallAt: daysAgo(1) }),
        row('x', 'mail__a', { calls: 1, discoveryHits: 3 }),
        row('x', 'beta__a', { calls: 1, discoveryHits: 3 }),
      ],
      { now: NOW, surfaces: new Map([['x', s]]) },
    )
    expect(r.recommendations.map((x) => `${x.kind} ${x.family}`)).toEqual(['promote beta', 'promote mail', 'demote alpha', 'demote zeta'])
  })
})
