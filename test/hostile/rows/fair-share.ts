/**
 * Concurrency floods from one tenant against `npm start`'s fair-share gate (lib/runtime/fair-gate.ts):
 * the tenant's requests wait for their share while the bystander calls, none is lost, and what
 * the gate cannot hold (past 256 waiting) is a 429 naming the limit with a Retry-After. Asserted
 * on answers counted, never on a timing (the bench reads the bystander's latency).
 */
import assert from 'node:assert/strict'
import { FAIR_GATE_DEFAULTS } from '../../../lib/runtime/fair-gate'
import type { HostileApp, HostileRowSet } from '../harness'

/** `count` calls of whoami from `tenant` at once: every answer's status, and the refusals' bodies and Retry-After. */
async function burst(app: HostileApp, tenant: string, count: number) {
  const answers = await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await app.call(tenant, 'POST', '/projects/p1/tools/whoami/invoke', { params: {} })
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text: await res.text() }
    }),
  )
  for (const a of answers) assert.ok(a.status === 200 || a.status === 429, `${a.status}: ${a.text.slice(0, 300)}`)
  const refused = answers.filter((a) => a.status === 429)
  for (const r of refused) {
    assert.ok(Number(r.retryAfter) >= 1, `Retry-After ${r.retryAfter}`)
    assert.match(r.text, /"limit":"tenantQueue"/)
  }
  return { answered: answers.length - refused.length, refused: refused.length }
}

export const rowSet: HostileRowSet = {
  name: 'fair share of the main thread (issue 21)',
  rows: [
    {
      name: '300 whoami calls at once from one tenant: every one answered 200, or 429 past the 256 waiting (at most 43: one runs)',
      async run(app) {
        const { answered, refused } = await burst(app, 'flood-a', 300)
        assert.equal(answered + refused, 300)
        // at least one runs and 256 wait: at most 43 of 300 can be refused
        assert.ok(refused <= 300 - FAIR_GATE_DEFAULTS.tenantQueue - 1, `${refused} refused`)
      },
    },
    {
      name: '800 whoami calls at once from one tenant: answered or a 429 naming the tenant queue with a Retry-After, never a 5xx',
      async run(app) {
        const { answered, refused } = await burst(app, 'flood-b', 800)
        assert.equal(answered + refused, 800)
        assert.ok(answered >= FAIR_GATE_DEFAULTS.tenantQueue, `${answered} answered`)
      },
    },
    {
      name: 'two tenants bursting 200 calls each at once: both answered in full, neither refused',
      async run(app) {
        const [a, b] = await Promise.all([burst(app, 'flood-c', 200), burst(app, 'flood-d', 200)])
        assert.deepEqual([a.refused, b.refused], [0, 0])
      },
    },
  ],
}
