import { describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../../lib/errors'
import { type ClassifyInput, classify } from '../../../lib/surface/classify'
import { FLOOR, MINUTE, NOW, names, processRecord, rule, tool } from './helpers'

const run = (tools: ReturnType<typeof tool>[], over: Partial<ClassifyInput> = {}, process = processRecord()) =>
  classify({ tools: [...FLOOR, ...tools], process, now: NOW, maxActivated: 40, reserve: 0, ...over })

describe('classification into primary, deferred and activated (spec §13)', () => {
  it('puts a tool in the manifest only when it is primary and not deferred', () => {
    const turn = run([
      tool('weather', { primary: true }),
      tool('stocks', { primary: false }),
      tool('gmail__send', { primary: true, deferred: true }),
    ])
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list', 'weather'])
    expect(names(turn.deferred)).toEqual(['gmail__send', 'stocks'])
    expect(turn.bucket.get('stocks')).toBe('deferred')
  })

  it('lets add beat defer: a promoted tool is primary even when the recipe also defers it', () => {
    const turn = run([tool('stocks', { primary: false })], {}, processRecord({ promoted: ['stocks'], deferred: ['stocks'] }))
    expect(turn.bucket.get('stocks')).toBe('primary')
    expect(names(turn.manifest)).toContain('stocks')
  })

  it('forces a primary tool into deferred when the recipe defers it', () => {
    const turn = run([tool('weather')], {}, processRecord({ deferred: ['weather'] }))
    expect(turn.bucket.get('weather')).toBe('deferred')
    expect(names(turn.deferred)).toEqual(['weather'])
  })

  it('keeps the floor primary even when the recipe defers it', () => {
    const turn = run([], {}, processRecord({ deferred: ['tool_list', 'tool_description'] }))
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list'])
  })

  it('moves a deferred tool into the manifest while its activation is fresh, and out once activationTtl passed', () => {
    const p = processRecord({ activations: { stocks: NOW - 14 * MINUTE } })
    expect(run([tool('stocks', { primary: false })], {}, p).bucket.get('stocks')).toBe('activated')
    expect(names(run([tool('stocks', { primary: false })], {}, p).manifest)).toContain('stocks')
    const later = run([tool('stocks', { primary: false })], { now: NOW + 2 * MINUTE }, p)
    expect(later.bucket.get('stocks')).toBe('deferred')
    expect(names(later.manifest)).not.toContain('stocks')
  })
})

describe('the tool budget (spec §14)', () => {
  it('keeps the floor and nothing else under a limit of 2 without a reserve', () => {
    const turn = run([tool('weather'), tool('stocks')], { limit: 2, reserve: 0 })
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list'])
    expect(turn.budget).toEqual({ limit: 2, reserved: 0, effective: 2, demoted: 2, demotedFamilies: ['stocks', 'weather'] })
  })

  it('never lets the reserve give way to the floor: limit 2, reserve 1, a floor of 2 is BUDGET_TOO_SMALL naming maxTools and the reserve', () => {
    let error: unknown
    try {
      run([tool('weather')], { limit: 2, reserve: 1 })
    } catch (e) {
      error = e
    }
    expect(isServerToolsError(error, 'BUDGET_TOO_SMALL')).toBe(true)
    expect((error as Error).message).toMatch(/allows 2 tools \(maxTools\) and 1 is reserved .*floor alone needs 2/)
    expect((error as { details?: unknown }).details).toMatchObject({ limit: 2, reserved: 1, floor: 2 })
  })

  it('splits the tools a prefix* keep entry matches off their family, as a named entry does', () => {
    const p = processRecord({ keep: rule({ prefixes: ['doc_read'] }) })
    const turn = run([tool('doc_read'), tool('doc_read_lines'), tool('doc_search'), tool('doc_write')], { limit: 4, reserve: 0 }, p)
    expect(names(turn.manifest)).toEqual(['doc_read', 'doc_read_lines', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['doc_search', 'doc_write'])
  })

  it('splits the tools a prefix* dropFirst entry matches off their family, so the rest of it stays', () => {
    const p = processRecord({ dropFirst: rule({ prefixes: ['doc_note'] }) })
    const turn = run([tool('doc_read'), tool('doc_write'), tool('doc_note_add'), tool('doc_note_del')], { limit: 4, reserve: 0 }, p)
    expect(names(turn.manifest)).toEqual(['doc_read', 'doc_write', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['doc_note_add', 'doc_note_del'])
  })

  it('refuses a limit smaller than the floor with BUDGET_TOO_SMALL and the numbers', () => {
    let error: unknown
    try {
      run([tool('weather')], { limit: 1 })
    } catch (e) {
      error = e
    }
    expect(isServerToolsError(error, 'BUDGET_TOO_SMALL')).toBe(true)
    expect((error as Error).message).toContain('allows 1 tool, but the capability floor alone needs 2')
    expect((error as { details: unknown }).details).toMatchObject({ limit: 1, floor: 2 })
  })

  it('subtracts the reserve from the limit', () => {
    const turn = run([tool('a'), tool('b'), tool('c')], { limit: 5, reserve: 1 })
    expect(turn.budget).toMatchObject({ limit: 5, reserved: 1, effective: 4, demoted: 1 })
    expect(turn.manifest).toHaveLength(4)
  })

  it('demotes a pack before built-ins', () => {
    const turn = run([tool('whoami', { source: 'builtin' }), tool('gmail__read'), tool('gmail__send')], { limit: 4 })
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list', 'whoami'])
    expect(names(turn.demoted)).toEqual(['gmail__read', 'gmail__send'])
    expect(turn.budget.demotedFamilies).toEqual(['gmail'])
  })

  it('demotes whole families: three slots with doc×2 and slack×2 keep doc and leave a slot empty', () => {
    const turn = run([tool('doc_read'), tool('doc_write'), tool('slack_post'), tool('slack_read')], { limit: 5 })
    expect(names(turn.manifest)).toEqual(['doc_read', 'doc_write', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['slack_post', 'slack_read'])
    expect(turn.manifest).toHaveLength(4) // one of the five slots stays empty rather than half a family
  })

  it('lets a smaller later group fit after a larger one was demoted', () => {
    const turn = run([tool('doc_read'), tool('doc_write'), tool('doc_list'), tool('zeta')], { limit: 4 })
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list', 'zeta'])
    expect(turn.budget.demotedFamilies).toEqual(['doc'])
  })

  it('holds a family with keep', () => {
    const p = processRecord({ keep: rule({ prefixes: ['slack_'] }) })
    const turn = run([tool('doc_read'), tool('doc_write'), tool('slack_post'), tool('slack_read')], { limit: 5 }, p)
    expect(names(turn.manifest)).toEqual(['slack_post', 'slack_read', 'tool_description', 'tool_list'])
    expect(turn.budget.demotedFamilies).toEqual(['doc'])
  })

  it('carves one tool out of its family with a dropFirst name', () => {
    const p = processRecord({ dropFirst: rule({ names: ['doc_note_add'] }) })
    const turn = run([tool('doc_read'), tool('doc_write'), tool('doc_note_add')], { limit: 4 }, p)
    expect(names(turn.manifest)).toEqual(['doc_read', 'doc_write', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['doc_note_add'])
    expect(turn.budget.demotedFamilies).toEqual(['doc_note_add'])
  })

  it('lets keep beat dropFirst for the same tool', () => {
    const p = processRecord({ keep: rule({ names: ['slack_post'] }), dropFirst: rule({ names: ['slack_post'] }) })
    const turn = run([tool('alpha'), tool('slack_post')], { limit: 3 }, p)
    expect(names(turn.manifest)).toEqual(['slack_post', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['alpha'])
  })

  it('ranks dropFirst below add and add below plain tools', () => {
    const p = processRecord({ added: ['mango'], dropFirst: rule({ prefixes: ['apple'] }) })
    const turn = run([tool('apple'), tool('kiwi__a'), tool('mango'), tool('zucchini')], { limit: 4 }, p)
    expect(names(turn.manifest)).toEqual(['mango', 'tool_description', 'tool_list', 'zucchini'].sort())
    expect(turn.demotedGroups.map((g) => [g.family, g.tier])).toEqual([
      ['kiwi', 5],
      ['apple', 6],
    ])
  })

  it('keeps the more recently activated tool when only one fits', () => {
    const p = processRecord({ activations: { stocks: NOW - 5 * MINUTE, weather: NOW - MINUTE } })
    const turn = run([tool('stocks', { primary: false }), tool('weather', { primary: false })], { limit: 3 }, p)
    expect(names(turn.manifest)).toEqual(['tool_description', 'tool_list', 'weather'])
    expect(names(turn.demoted)).toEqual(['stocks'])
  })

  it('counts only the newest activation with a cap of 1: the older two lose their class to a built-in', () => {
    const p = processRecord({ activations: { alpha: NOW - 3 * MINUTE, beta: NOW - 2 * MINUTE, gamma: NOW - MINUTE } })
    const deferredTools = ['alpha', 'beta', 'gamma'].map((n) => tool(n, { primary: false }))
    const capped = run([...deferredTools, tool('whoami', { source: 'builtin' })], { limit: 4, maxActivated: 1 }, p)
    expect(names(capped.manifest)).toEqual(['gamma', 'tool_description', 'tool_list', 'whoami'])
    expect(names(capped.demoted)).toEqual(['alpha', 'beta'])
    // without the cap, the two newest activations would have taken both slots
    const uncapped = run([...deferredTools, tool('whoami', { source: 'builtin' })], { limit: 4, maxActivated: 40 }, p)
    expect(names(uncapped.manifest)).toEqual(['beta', 'gamma', 'tool_description', 'tool_list'])
  })

  it('ranks by measured demand inside a tier, then by family name', () => {
    const tools = [tool('alpha'), tool('beta'), tool('gamma')]
    expect(names(run(tools, { limit: 3 }).manifest)).toContain('alpha')
    const turn = run(tools, { limit: 3, demand: new Map([['gamma', 7]]) })
    expect(names(turn.manifest)).toEqual(['gamma', 'tool_description', 'tool_list'])
  })

  it('adds extra (skill) tools as keep, split off their family, and triages again', () => {
    const tools = [tool('alpha'), tool('gmail__read', { primary: false }), tool('gmail__send', { primary: false })]
    const turn = run(tools, { limit: 3, extraKeep: new Set(['gmail__send']) })
    expect(names(turn.manifest)).toEqual(['gmail__send', 'tool_description', 'tool_list'])
    expect(names(turn.demoted)).toEqual(['alpha'])
    expect(names(turn.deferred)).toEqual(['gmail__read'])
  })

  it('sends the manifest alphabetically whatever the ranking', () => {
    const p = processRecord({ keep: rule({ names: ['zulu'] }) })
    const turn = run([tool('zulu'), tool('alpha'), tool('mike')], { limit: 10 }, p)
    expect(names(turn.manifest)).toEqual(['alpha', 'mike', 'tool_description', 'tool_list', 'zulu'])
  })

  it('answers identical input with identical output, whatever the order tools arrive in', () => {
    const tools = [
      tool('doc_read'),
      tool('doc_write'),
      tool('slack_post'),
      tool('gmail__a'),
      tool('gmail__b'),
      tool('zeta', { primary: false }),
      tool('omega'),
    ]
    const p = processRecord({ activations: { zeta: NOW - MINUTE }, dropFirst: rule({ names: ['doc_write'] }) })
    const a = run(tools, { limit: 6 }, p)
    const b = run([...tools].reverse(), { limit: 6 }, p)
    const c = run([...tools.slice(3), ...tools.slice(0, 3)], { limit: 6 }, p)
    for (const other of [b, c]) {
      expect(names(other.manifest)).toEqual(names(a.manifest))
      expect(names(other.demoted)).toEqual(names(a.demoted))
      expect(other.demotedGroups).toEqual(a.demotedGroups)
      expect(other.budget).toEqual(a.budget)
    }
  })

  it('demotes nothing when no limit is known', () => {
    const turn = run(Array.from({ length: 300 }, (_, i) => tool(`t${i}`)))
    expect(turn.manifest).toHaveLength(302)
    expect(turn.budget).toEqual({ limit: null, reserved: 0, effective: null, demoted: 0, demotedFamilies: [] })
  })
})
