/**
 * Concurrency floods from one tenant against `npm start`'s fair-share gate (lib/runtime/fair-gate.ts):
 * the tenant's requests wait for their share while the bystander calls, none is lost, and what
 * the gate cannot hold (past 256 waiting) is a 429 naming the limit with a Retry-After (a wait
 * past 10 s, on a machine loaded enough, a 503 naming `maxWaitMs`, never a 500). Asserted
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
  for (const a of answers) assert.ok([200, 429, 503].includes(a.status), `${a.status}: ${a.text.slice(0, 300)}`)
  const refused = answers.filter((a) => a.status !== 200)
  for (const r of refused) {
    assert.ok(Number(r.retryAfter) >= 1, `Retry-After ${r.retryAfter}`)
    assert.match(r.text, r.status === 429 ? /"limit":"tenantQueue"/ : /"limit":"maxWaitMs"/)
  }
  return { answered: answers.length - refused.length, refused: refused.length, overQueue: refused.filter((r) => r.status === 429).length }
}

export const rowSet: HostileRowSet = {
  name: 'fair share of the main thread (issue 21)',
  rows: [
    {
      name: '300 whoami calls at once from one tenant: every one answered 200, or 429 past the 256 waiting (at most 43: one runs)',
      async run(app) {
        const { answered, refused, overQueue } = await burst(app, 'flood-a', 300)
        assert.equal(answered + refused, 300)
        // at least one runs and 256 wait: at most 43 of 300 can be past the queue
        assert.ok(overQueue <= 300 - FAIR_GATE_DEFAULTS.tenantQueue - 1, `${overQueue} past the queue`)
      },
    },
    {
      name: '800 whoami calls at once from one tenant: answered, or a 429 / 503 naming its limit with a Retry-After, never a 500',
      async run(app) {
        const { answered, refused, overQueue } = await burst(app, 'flood-b', 800)
        assert.equal(answered + refused, 800)
        assert.ok(overQueue <= 800 - FAIR_GATE_DEFAULTS.tenantQueue - 1, `${overQueue} past the queue`)
      },
    },
    {
      name: 'two tenants bursting 200 calls each at once: neither past its tenant queue',
      async run(app) {
        const [a, b] = await Promise.all([burst(app, 'flood-c', 200), burst(app, 'flood-d', 200)])
        assert.deepEqual([a.overQueue, b.overQueue], [0, 0])
      },
    },
  ],
}
