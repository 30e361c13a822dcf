import { describe, expect, it } from 'vitest'
import { formatEntry } from '../../../functions/cli/audit'

describe('server-tools audit lines', () => {
  it('shows an entry with its actor, action, target, outcome, versions and where it came from', () => {
    expect(
      formatEntry({
        at: '2026-12-03T10:00:00.000Z',
        actor: { subject: 'alice@example.test' },
        action: 'document.put',
        target: 'projects/p1/documents/a.yaml',
        outcome: 'ok',
        status: 200,
        versionBefore: '1',
        versionAfter: '2',
        client: 'cli',
      }),
    ).toBe('2026-12-03T10:00:00.000Z  alice@example.test  document.put  projects/p1/documents/a.yaml  ok 200 v1→2  [cli]')
  })

  it('shows a digest as how many refusals it stands for, and from when to when', () => {
    expect(
      formatEntry({
        at: '2026-12-03T10:01:00.000Z',
        actor: {},
        action: 'auth.unauthenticated',
        target: 'projects/p1/',
        outcome: 'denied',
        status: 401,
        reason: 'UNAUTHENTICATED',
        repeated: 4_980,
        firstAt: '2026-12-03T10:00:00.200Z',
        lastAt: '2026-12-03T10:00:59.990Z',
      }),
    ).toBe(
      '2026-12-03T10:01:00.000Z  (no valid token)  auth.unauthenticated  projects/p1/  denied 401 (UNAUTHENTICATED) ×4980 from 2026-12-03T10:00:00.200Z to 2026-12-03T10:00:59.990Z',
    )
  })
})
