/**
 * F3 and its class: request bodies built to make a parser work for everyone. Every one must be
 * answered with a 4xx at once (before any parser runs where the shape alone is enough to refuse).
 */
import assert from 'node:assert/strict'
import type { HostileApp, HostileRowSet } from '../harness'

const INVOKE = '/projects/p1/tools/whoami/invoke'

async function problem(res: Response) {
  const text = await res.text()
  try {
    return { status: res.status, body: JSON.parse(text) as { detail?: string; errors?: { message: string; line?: number; column?: number }[] } }
  } catch {
    return { status: res.status, body: { detail: text } }
  }
}

export const rowSet: HostileRowSet = {
  name: 'hostile request bodies',
  rows: [
  {
    name: "F3: '[a' × 520,000 posted as JSON to an invoke route is a 400 naming the position",
    async run(app: HostileApp) {
      const res = await problem(await app.call('mallory', 'POST', INVOKE, '[a'.repeat(520_000)))
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 400))
    },
  },
],
}
