/**
 * Token caps (`volume: { tokens, per }`): validated like every rule, admitted while the window has
 * tokens left, charged after the call from what the provider reported, refused once spent. The
 * overshoot bound is checked over call-size patterns invented here, for one container and for
 * two sharing the counter store (memory adapters; the DynamoDB adapter runs the same store contract).
 */
import { describe, expect, it } from 'vitest'
import { formatWindow } from '../../../functions/cli/quotas'
import { BundledLayer } from '../../../lib/documents/bundled'
import { DocumentCascade } from '../../../lib/documents/cascade'
import { scopeOf } from '../../../lib/documents/ports'
import { QuotaLimiter, QuotaRuleSource, reportedTokens, tokenSliceOf } from '../../../lib/quotas/limiter'
import { checkQuotaDocument, windowsOf } from '../../../lib/quotas/rules'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryDocumentStore } from '../../../lib/stores/memory/document-store'
import { MemoryQuotaCounterStore } from '../../../lib/stores/memory/quota-store'

const caller = { tenant: 'acme', project: 'p1', role: 'coder' }
const llm = { role: 'coder', tool: 'summarize', type: 'prompt_template', labels: [] as string[] }

async function limiterWith(rules: string, shared?: { clock: ManualClock; counters: MemoryQuotaCounterStore }) {
  const clock = shared?.clock ?? new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
  const docs = new MemoryDocumentStore(clock)
  await docs.put({ key: { scope: scopeOf('acme', '_tenant'), path: 'quotas.yaml' }, body: rules, actor: 'test' }, {})
  const counters = shared?.counters ?? new MemoryQuotaCounterStore()
  const limiter = new QuotaLimiter({
    rules: new QuotaRuleSource(new DocumentCascade(docs, new BundledLayer([])), clock),
    store: counters,
    clock,
  })
  return { limiter, clock, counters }
}

/** Calls one at a time, each using the next size of `sizes` (cycled) when admitted; the tokens used. */
async function spend(limiter: QuotaLimiter, sizes: number[], attempts: number, who = llm) {
  let used = 0
  let admitted = 0
  for (let i = 0; i < attempts; i++) {
    if (await limiter.admit(caller, who)) continue
    const tokens = sizes[admitted++ % sizes.length]
    used += tokens
    await limiter.charge(caller, who, tokens)
  }
  return { used, admitted }
}

const PER_DAY = (n: number) => `rules:\n  - match: { type: prompt_template }\n    volume: { tokens: ${n}, per: day }\n`

describe('a token cap in quotas.yaml', () => {
  it('accepts tokens beside requests, or alone, per day or month', () => {
    expect(checkQuotaDocument('quotas.yaml', PER_DAY(200000))).toEqual([])
    const both = 'rules:\n  - match: { role: coder, type: prompt_template }\n    volume: { requests: 2000, tokens: 5000000, per: month }\n'
    expect(checkQuotaDocument('quotas.yaml', both)).toEqual([])
  })

  it('refuses a volume with neither requests nor tokens, naming its line', () => {
    const issues = checkQuotaDocument('quotas.yaml', 'rules:\n  - match: {}\n    volume: { per: day }\n')
    expect(issues.map((i) => [i.pointer, i.line, i.message])).toEqual([['/rules/0/volume', 3, 'a volume needs requests, tokens, or both']])
  })

  it('names a misspelt tokens field with its line and column and the field it probably meant', () => {
    const [issue] = checkQuotaDocument('quotas.yaml', 'rules:\n  - match: {}\n    volume: { token: 5, per: day }\n')
    expect(issue).toMatchObject({ pointer: '/rules/0/volume/token', line: 3 })
    expect(issue.message).toContain("did you mean 'tokens'")
  })

  it('refuses a token count that is not a positive integer', () => {
    const issues = checkQuotaDocument('quotas.yaml', 'rules:\n  - match: {}\n    volume: { tokens: 0.5, per: day }\n')
    expect(new Set(issues.map((i) => i.pointer))).toEqual(new Set(['/rules/0/volume/tokens']))
  })

  it('counts tokens in a window of their own beside the requests window, over the same UTC day', () => {
    const at = Date.UTC(2026, 1, 28, 15, 0, 0)
    const windows = windowsOf({ match: {}, volume: { requests: 10, tokens: 900, per: 'day' } }, at)
    expect(windows.map((w) => [w.kind, w.limit, w.start, w.end])).toEqual([
      ['volume', 10, Date.UTC(2026, 1, 28), Date.UTC(2026, 2, 1)],
      ['tokens', 900, Date.UTC(2026, 1, 28), Date.UTC(2026, 2, 1)],
    ])
  })
})

describe('the token limiter', () => {
  it('admits calls while the window has tokens left and refuses the first call after it is spent, until the next UTC midnight', async () => {
    const { limiter } = await limiterWith(PER_DAY(1000))
    const { used, admitted } = await spend(limiter, [300], 10)
    expect([admitted, used]).toEqual([4, 1200]) // 3 × 300 leaves 100: the 4th is admitted, the 5th refused
    const refusal = await limiter.admit(caller, llm)
    expect(refusal?.retryAfterSeconds).toBe(12 * 3600)
    expect(refusal?.message).toContain('allows 1000 model tokens per day')
  })

  it.each([
    ['equal calls', [250]],
    ['one call larger than the whole cap', [5000, 10]],
    ['growing calls', [1, 10, 100, 1000, 3000]],
    ['a slice-sized call', [tokenSliceOf(20000)]],
    ['one-token calls', [1]],
    ['uneven calls', [733, 17, 2048, 99, 1]],
  ])('overshoots the cap by less than one call’s tokens, one container, %s', async (_name, sizes) => {
    const { limiter } = await limiterWith(PER_DAY(20000))
    const { used } = await spend(limiter, sizes, 20000 / Math.min(...sizes) + 10)
    expect(used).toBeGreaterThanOrEqual(20000 - tokenSliceOf(20000)) // at most a slice stranded in the lease
    expect(used).toBeLessThan(20000 + Math.max(...sizes))
  })

  it.each([
    ['equal calls', [400]],
    ['uneven calls', [733, 17, 2048, 99, 1]],
    ['large calls', [6000, 9000]],
  ])('overshoots by less than one call’s tokens per container when two share the counters, %s', async (_name, sizes) => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0))
    const counters = new MemoryQuotaCounterStore()
    const a = await limiterWith(PER_DAY(20000), { clock, counters })
    const b = await limiterWith(PER_DAY(20000), { clock, counters })
    let used = 0
    for (let i = 0; i < 200; i++) used += (await spend(i % 2 ? a.limiter : b.limiter, [sizes[(i >> 1) % sizes.length]], 1)).used
    expect(used).toBeLessThan(20000 + 2 * Math.max(...sizes))
    expect(used).toBeGreaterThanOrEqual(20000 - 2 * tokenSliceOf(20000))
  })

  it('asks the store once per slice of tokens, not once per call', async () => {
    const { limiter, counters } = await limiterWith(PER_DAY(200000))
    expect(tokenSliceOf(200000)).toBe(10000)
    const { admitted } = await spend(limiter, [100], 500)
    expect(admitted).toBe(500)
    expect(counters.reservations).toBe(5) // 50,000 tokens in slices of 10,000
  })

  it('reserves a call’s debt before its next slice, so the shared count holds the tokens used', async () => {
    const { limiter, counters } = await limiterWith(PER_DAY(200000))
    await spend(limiter, [25000], 1) // leases 10,000, spends 25,000: 15,000 in debt
    await limiter.admit(caller, llm)
    const [rule] = await limiter.status('acme', 'p1')
    expect(rule.windows[0]).toMatchObject({ kind: 'tokens', used: 35000, remaining: 165000 })
    expect(counters.reservations).toBe(2)
  })

  it('charges only the rules whose selectors match the call that reported the tokens', async () => {
    const { limiter } = await limiterWith('rules:\n  - match: { role: reviewer }\n    volume: { tokens: 100, per: day }\n')
    const { admitted } = await spend(limiter, [500], 5)
    expect(admitted).toBe(5)
    const reviewer = { ...caller, role: 'reviewer' }
    expect(await limiter.admit(reviewer, llm)).toBeUndefined()
    await limiter.charge(reviewer, llm, 500)
    expect(await limiter.admit(reviewer, llm)).toBeDefined()
  })
})

describe('the tokens a result reports', () => {
  it('adds input and output tokens of a prompt_template result, success or billed failure', () => {
    expect(reportedTokens({ text: 'Paris.', model: 'oai/mini', usage: { inputTokens: 42, outputTokens: 7 } })).toBe(49)
    expect(reportedTokens({ message: 'did not answer with JSON', usage: { inputTokens: 10, outputTokens: 0 } })).toBe(10)
  })

  it('reads anything else as no tokens', () => {
    for (const c of [
      null,
      'text',
      3,
      {},
      { usage: null },
      { usage: { inputTokens: -5, outputTokens: 'x' } },
      { usage: { inputTokens: Number.NaN } },
    ])
      expect(reportedTokens(c)).toBe(0)
  })
})

describe('server-tools quotas', () => {
  it('prints a token window in tokens', () => {
    const rule = { layer: 'tenant', index: 0, match: { type: 'prompt_template' }, volume: { tokens: 200000, per: 'day' }, windows: [] }
    const window = { kind: 'tokens', limit: 200000, used: 15000, remaining: 185000, resetsInSeconds: 3 * 3600, refusedHere: 2 }
    expect(formatWindow(rule, window)).toBe(
      '_tenant#1  type=prompt_template  15000/200000 tokens per day  185000 left  resets in 3 h  2 refused here',
    )
  })
})
