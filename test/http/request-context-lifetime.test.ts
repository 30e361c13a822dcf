/**
 * A request's context (functions/http/request-context.ts) outlives its request wherever
 * async-local storage stamped it: a promise a cache keeps, a worker's MessagePort, a socket handle.
 * What it holds then must be the few fields later readers ask for, never the request itself: held
 * requests were each copied by a young-generation collection and promoted (docs/decisions.md,
 * session 14). A count, not a timing: whether the request object is collectable.
 */
import { describe, expect, it } from 'vitest'
import { createMemoryDeps } from '../../functions/deps'
import { createApp } from '../../functions/http/app'
import { type RequestContext, requestContext } from '../../functions/http/request-context'
import type { Clock } from '../../lib/runtime/clock'
import { fullGc } from '../support/gc'
import { tokenFor } from '../support/http'

/** A clock that keeps every request context it is read in, as a long-lived cache entry would. */
function keepingClock(kept: RequestContext[]): Clock {
  return {
    now: () => {
      const ctx = requestContext.current()
      if (ctx && !kept.includes(ctx)) kept.push(ctx)
      return Date.now()
    },
  } as Clock
}

describe('a request context held past its request', () => {
  it('lets the request go once it is answered, and still names the verified actor', async () => {
    const kept: RequestContext[] = []
    const app = createApp(createMemoryDeps({ clock: keepingClock(kept) }))
    const token = await tokenFor('acme')
    const sent: WeakRef<Request>[] = []
    // in a function of its own, so no register of this frame still points at the last request
    const call = async () => {
      const req = new Request('http://localhost/brain/acme/projects/p1/tools/whoami/invoke', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{"params":{}}',
      })
      sent.push(new WeakRef(req))
      const res = await app.request(req)
      await res.text()
      return res.status
    }
    for (let i = 0; i < 3; i++) expect(await call()).toBe(200)
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 10))
      fullGc()
    }
    expect(kept.length).toBeGreaterThanOrEqual(3)
    expect(kept.map((ctx) => ctx.actor()?.subject)).toEqual(kept.map(() => 'alice@example.test'))
    expect(sent.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
  })
})
