/**
 * Quota rules (each selector, each window) and the leased limiter over the in-memory counter
 * store: what is admitted, what is refused and when to retry, and how often the store is asked.
 */
import { describe, expect, it } from 'vitest'
import { BundledLayer } from '../../../lib/documents/bundled'
import { DocumentCascade } from '../../../lib/documents/cascade'
import { scopeOf } from '../../../lib/documents/ports'
import { QuotaLimiter, QuotaRuleSource, RULES_TTL_MS, sliceOf } from '../../../lib/quotas/limiter'
import { checkQuotaDocument, matches, parseQuotaDocument, windowsOf } from '../../../lib/quotas/rules'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryDocumentStore } from '../../../lib/stores/memory/document-store'
import { MemoryQuotaCounterStore } from '../../../lib/stores/memory/quota-store'
import { quotaCounterStoreContract } from '../../contract/quota-counter-store.contract'

const subject = { project: 'p1', role: 'coder', tool: 'petstore__list_pets', type: 'rest_api', labels: ['paid', 'rest'] }

describe('quotas.yaml', () => {
  it('accepts the documented shape', () => {
    const doc = `rules:
  - match: { tool: "petstore__*" }
    rate: { requests: 10, per: minute, burst: 5 }
  - match: { role: coder, type: prompt_template }
    volume: { requests: 2000, per: day }
`
    expect(checkQuotaDocument('quotas.yaml', doc)).toEqual([])
  })

  it('names an unknown field with its line and column and the field it probably meant', () => {
    const issues = checkQuotaDocument('quotas.yaml', 'rules:\n  - match: { tol: x }\n    rate: { requests: 1, per: minute }\n')
    expect(issues[0]).toMatchObject({ line: 2, pointer: '/rules/0/match/tol' })
    expect(issues[0].message).toContain("did you mean 'tool'")
  })

  it('refuses a rule with neither a rate nor a volume, a period it does not know and a star inside a name', () => {
    expect(checkQuotaDocument('quotas.yaml', 'rules:\n  - match: { role: a }\n').map((i) => [i.pointer, i.line])).toEqual([['/rules/0', 2]])
    const period = checkQuotaDocument('quotas.yaml', 'rules:\n  - match: {}\n    rate: { requests: 1, per: week }\n')
    expect(period.map((i) => [i.pointer, i.line])).toEqual([['/rules/0/rate/per', 3]])
    const second = parseQuotaDocument('rules:\n  - match: { tool: "a*b" }\n    volume: { requests: 1, per: day }\n')
    expect(second.ok ? [] : second.issues.map((i) => [i.pointer, i.line])).toEqual([['/rules/0/match/tool', 2]])
  })

  it('leaves other paths to other checks', () => {
    expect(checkQuotaDocument('notes.yaml', 'rules: 3')).toEqual([])
  })
})

describe('selectors', () => {
  it.each([
    [{}, true],
    [{ project: 'p1' }, true],
    [{ project: 'p2' }, false],
    [{ role: 'coder' }, true],
    [{ role: 'reviewer' }, false],
    [{ tool: 'petstore__list_pets' }, true],
    [{ tool: 'petstore__*' }, true],
    [{ tool: 'pet*' }, true],
    [{ tool: 'weather__*' }, false],
    [{ tool: 'petstore__list' }, false],
    [{ type: 'rest_api' }, true],
    [{ type: 'prompt_template' }, false],
    [{ label: 'paid' }, true],
    [{ label: 'free' }, false],
    [{ role: 'coder', tool: 'petstore__*', label: 'rest' }, true],
    [{ role: 'coder', tool: 'petstore__*', label: 'free' }, false],
  ])('%j matches: %s', (match, expected) => {
    expect(matches(match, subject)).toBe(expected)
  })

  it('a role selector never matches a call made outside any process (no role)', () => {
    expect(matches({ role: 'coder' }, { ...subject, role: undefined })).toBe(false)
  })
})

describe('windows', () => {
  const at = Date.UTC(2026, 1, 28, 23, 59, 45, 500) // 28 Feb 2026, 23:59:45.5 UTC

  it.each([
    ['second', Date.UTC(2026, 1, 28, 23, 59, 45), 1_000],
    ['minute', Date.UTC(2026, 1, 28, 23, 59, 0), 60_000],
    ['hour', Date.UTC(2026, 1, 28, 23, 0, 0), 3_600_000],
  ] as const)('a rate per %s is a window aligned to the %s', (per, start, len) => {
    expect(windowsOf({ match: {}, rate: { requests: 7, per } }, at)).toEqual([{ kind: 'rate', limit: 7, start, end: start + len }])
  })

  it('a burst smaller than the rate adds a shorter window capped at the burst', () => {
    const [rate, burst] = windowsOf({ match: {}, rate: { requests: 10, per: 'minute', burst: 5 } }, at)
    expect(rate.limit).toBe(10)
    expect(burst).toEqual({ kind: 'burst', limit: 5, start: Date.UTC(2026, 1, 28, 23, 59, 30), end: Date.UTC(2026, 2, 1) })
  })

  it('a burst at least the rate adds nothing', () => {
    expect(windowsOf({ match: {}, rate: { requests: 10, per: 'minute', burst: 10 } }, at)).toHaveLength(1)
  })

  it('a volume per day is the UTC day and per month the UTC calendar month', () => {
    expect(windowsOf({ match: {}, volume: { requests: 3, per: 'day' } }, at)[0]).toMatchObject({
      start: Date.UTC(2026, 1, 28),
      end: Date.UTC(2026, 2, 1),
    })
    expect(windowsOf({ match: {}, volume: { requests: 3, per: 'month' } }, at)[0]).toMatchObject({
      start: Date.UTC(2026, 1, 1),
      end: Date.UTC(2026, 2, 1),
    })
  })
})

/** A limiter over a cascade whose _tenant (and optionally project) layer holds the given rules. */
async function setup(
  tenantRules: string,
  opts: { projectRules?: string; bundledRules?: string; clock?: ManualClock; counters?: MemoryQuotaCounterStore } = {},
) {
  const clock = opts.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
  const docs = new MemoryDocumentStore(clock)
  const put = (project: string, body: string) =>
    docs.put({ key: { scope: scopeOf('acme', project), path: 'quotas.yaml' }, body, actor: 'test' }, {})
  await put('_tenant', tenantRules)
  if (opts.projectRules) await put('p1', opts.projectRules)
  const bundled = new BundledLayer(opts.bundledRules ? [{ path: 'quotas.yaml', body: opts.bundledRules }] : [])
  const counters = opts.counters ?? new MemoryQuotaCounterStore()
  const cascade = new DocumentCascade(docs, bundled)
  const limiter = new QuotaLimiter({ rules: new QuotaRuleSource(cascade, clock), store: counters, clock })
  return { clock, counters, limiter, docs, put, cascade }
}

const caller = { tenant: 'acme', project: 'p1', role: 'coder' }
const tool = { role: 'coder', tool: 'petstore__list_pets', type: 'rest_api', labels: ['rest'] }

async function admitted(limiter: QuotaLimiter, n: number, who = caller, what = tool) {
  let ok = 0
  for (let i = 0; i < n; i++) if (!(await limiter.admit(who, what))) ok++
  return ok
}

describe('the limiter', () => {
  it('admits a rate rule up to its limit in a window and again in the next', async () => {
    const { limiter, clock } = await setup('rules:\n  - match: { tool: "petstore__*" }\n    rate: { requests: 40, per: minute }\n')
    expect(await admitted(limiter, 100)).toBe(40)
    clock.advance(60_000)
    expect(await admitted(limiter, 100)).toBe(40)
  })

  it('says when to retry: the seconds until the refusing window ends, rounded up', async () => {
    const { limiter, clock } = await setup('rules:\n  - match: {}\n    rate: { requests: 2, per: minute }\n')
    clock.advance(15_500) // 12:00:15.5
    await admitted(limiter, 2)
    const refusal = await limiter.admit(caller, tool)
    expect(refusal?.retryAfterSeconds).toBe(45)
    expect(refusal?.message).toContain('Retry in 45 s')
  })

  it('enforces a burst inside the rate window', async () => {
    const { limiter, clock } = await setup('rules:\n  - match: {}\n    rate: { requests: 10, per: minute, burst: 5 }\n')
    expect(await admitted(limiter, 20)).toBe(5)
    expect((await limiter.admit(caller, tool))?.retryAfterSeconds).toBe(30)
    clock.advance(30_000)
    expect(await admitted(limiter, 20)).toBe(5)
  })

  it('counts a daily volume until the next UTC midnight', async () => {
    const { limiter, clock } = await setup('rules:\n  - match: {}\n    volume: { requests: 3, per: day }\n')
    expect(await admitted(limiter, 5)).toBe(3)
    expect((await limiter.admit(caller, tool))?.retryAfterSeconds).toBe(12 * 3600)
    clock.advance(12 * 3600_000)
    expect(await admitted(limiter, 5)).toBe(3)
  })

  it('counts a monthly volume until the first of the next month', async () => {
    const { limiter, clock } = await setup('rules:\n  - match: {}\n    volume: { requests: 3, per: month }\n')
    expect(await admitted(limiter, 5)).toBe(3)
    clock.advance(20 * 86_400_000)
    expect(await admitted(limiter, 5)).toBe(0)
    clock.advance(11 * 86_400_000)
    expect(await admitted(limiter, 5)).toBe(3)
  })

  it('leaves calls the rules do not select alone', async () => {
    const { limiter } = await setup('rules:\n  - match: { role: reviewer }\n    rate: { requests: 1, per: hour }\n')
    expect(await admitted(limiter, 10)).toBe(10)
  })

  it('applies every layer: a project rule cannot lift the tenant cap, and bundled defaults count too', async () => {
    const { limiter } = await setup('rules:\n  - match: {}\n    rate: { requests: 5, per: minute }\n', {
      projectRules: 'rules:\n  - match: {}\n    rate: { requests: 1000, per: minute }\n',
      bundledRules: 'rules:\n  - match: {}\n    volume: { requests: 3, per: day }\n',
    })
    expect(await admitted(limiter, 10)).toBe(3)
  })

  it('keeps a project rule per project and a tenant rule per tenant', async () => {
    const { limiter } = await setup('rules:\n  - match: {}\n    rate: { requests: 6, per: minute }\n', {
      projectRules: 'rules:\n  - match: {}\n    rate: { requests: 2, per: minute }\n',
    })
    expect(await admitted(limiter, 10)).toBe(2)
    expect(await admitted(limiter, 10, { ...caller, project: 'p2' })).toBe(4)
  })

  it('takes nothing from one window when another refuses the call', async () => {
    const { limiter, clock } = await setup(
      'rules:\n  - match: { role: coder }\n    rate: { requests: 2, per: minute }\n  - match: {}\n    rate: { requests: 3, per: hour }\n',
    )
    expect(await admitted(limiter, 5)).toBe(2)
    clock.advance(60_000)
    // the hour rule still has 1 left: the refused calls of the first minute did not spend it
    expect(await admitted(limiter, 5)).toBe(1)
  })

  it('asks the store once per slice, and not at all while a window it saw spent lasts', async () => {
    const { limiter, counters } = await setup('rules:\n  - match: {}\n    rate: { requests: 1000, per: minute }\n')
    expect(sliceOf(1000)).toBe(50)
    expect(await admitted(limiter, 1000)).toBe(1000)
    expect(counters.reservations).toBe(20)
    expect(await admitted(limiter, 5000)).toBe(0)
    expect(counters.reservations).toBe(21)
  })

  it('reads the rules once per container for RULES_TTL_MS, then sees an edit', async () => {
    const { limiter, clock, put } = await setup('rules:\n  - match: {}\n    rate: { requests: 1, per: hour }\n')
    expect(await admitted(limiter, 3)).toBe(1)
    await put('_tenant', 'rules: []\n')
    expect(await admitted(limiter, 3)).toBe(0)
    clock.advance(RULES_TTL_MS)
    expect(await admitted(limiter, 3)).toBe(3)
  })

  it('two containers sharing the counters admit no more than the limit, and strand at most a slice each', async () => {
    const counters = new MemoryQuotaCounterStore()
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
    const a = await setup('rules:\n  - match: {}\n    rate: { requests: 200, per: minute }\n', { clock, counters })
    const b = await setup('rules:\n  - match: {}\n    rate: { requests: 200, per: minute }\n', { clock, counters })
    let admittedA = 0
    let admittedB = 0
    const calls = []
    for (let i = 0; i < 300; i++) {
      calls.push(a.limiter.admit(caller, tool).then((r) => r || admittedA++))
      calls.push(b.limiter.admit(caller, tool).then((r) => r || admittedB++))
    }
    await Promise.all(calls)
    expect(admittedA + admittedB).toBeLessThanOrEqual(200)
    expect(admittedA + admittedB).toBeGreaterThanOrEqual(200 - 2 * (sliceOf(200) - 1))
  })
})

quotaCounterStoreContract('memory', async () => new MemoryQuotaCounterStore())
