import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseModelRef, parseProviderDocument } from '../../../lib/models/documents'
import { parseDuration, parseEngine, parseRecipe } from '../../../lib/recipes/documents'
import { diagnoseEmptyResponse } from '../../../lib/surface/diagnosis'
import { demotedDiscoveryBlock, discoveryBlock, firstSentence } from '../../../lib/surface/discovery'
import { familyOf } from '../../../lib/surface/families'
import { parseToolLimitRejection } from '../../../lib/surface/limits'
import { tool } from './helpers'

describe('recognising a tool-count rejection (spec §14.1)', () => {
  it('reads OpenAI’s array_above_max_length message and its maximum', () => {
    expect(
      parseToolLimitRejection(
        "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 163 instead. (code=array_above_max_length)",
      ),
    ).toEqual({ recognised: true, maxTools: 128 })
  })

  it("recognises 'tools' … too many, and too many tools/functions, case-insensitively", () => {
    expect(parseToolLimitRejection("Parameter 'tools' has TOO MANY entries; maximum of 64")).toEqual({ recognised: true, maxTools: 64 })
    expect(parseToolLimitRejection('Too many functions in request')).toEqual({ recognised: true })
    expect(parseToolLimitRejection('error: too many tools (maximum length 32)')).toEqual({ recognised: true, maxTools: 32 })
  })

  it('does not mistake other errors for a tool limit', () => {
    expect(parseToolLimitRejection('maximum length 4096 tokens exceeded')).toEqual({ recognised: false })
    expect(parseToolLimitRejection('rate limit: too many requests')).toEqual({ recognised: false })
  })
})

describe('empty-response diagnosis (spec §13.2)', () => {
  const known = new Set(['web_search', 'doc_read', 'gmail__send', 'tool_list'])
  it('finds known names that were not offered, with the origin of the latest mention', () => {
    const d = diagnoseEmptyResponse({
      messages: [
        { role: 'system', content: 'Use web_search and `gmail__send`.' },
        { role: 'user', content: 'please gmail__send it' },
        { role: 'tool', content: { text: 'doc_read returned nothing' } },
      ],
      offered: new Set(['tool_list']),
      known,
    })
    expect(d).toEqual({
      kind: 'phantom',
      phantoms: [
        { name: 'doc_read', origin: 'context' },
        { name: 'gmail__send', origin: 'user' },
        { name: 'web_search', origin: 'prompt' },
      ],
    })
  })

  it('does not count names inside longer words, nor offered names', () => {
    expect(
      diagnoseEmptyResponse({
        messages: [{ role: 'user', content: 'my_web_search_tool and tool_list' }],
        offered: new Set(['tool_list']),
        known,
      }).kind,
    ).toBe('blank')
  })

  it('never diagnoses finishReason length', () => {
    expect(
      diagnoseEmptyResponse({ messages: [{ role: 'user', content: 'web_search' }], offered: new Set(), known, finishReason: 'length' }),
    ).toMatchObject({ kind: 'skipped', phantoms: [] })
  })
})

describe('discovery blocks (spec §13, §14.3)', () => {
  it('renders one line per tool, searchHint first, else the first sentence, packs under their own heading with distinct hints', () => {
    const block = discoveryBlock([
      tool('zeta', { description: 'Zeta does things. More text here.' }),
      tool('crm__find', { searchHint: 'find a customer', promptHint: 'CRM hint.' }),
      tool('crm__add', { searchHint: 'add a customer', promptHint: 'CRM hint.' }),
      tool('alpha', { searchHint: 'alpha hint' }),
    ])
    expect(block.split('\n').slice(4)).toEqual([
      '- `alpha` — alpha hint',
      '- `zeta` — Zeta does things.',
      '',
      '### crm',
      'CRM hint.',
      '- `crm__add` — add a customer',
      '- `crm__find` — find a customer',
      '',
    ])
    expect(block.startsWith('## More tools you can load\n\n')).toBe(true)
  })

  it('renders nothing for nothing, and the demoted block with its own Activate-First header', () => {
    expect(discoveryBlock([])).toBe('')
    expect(demotedDiscoveryBlock([])).toBe('')
    const demoted = demotedDiscoveryBlock([tool('slack_post')])
    expect(demoted).toContain('They still work: call `tool_description(names=[…])`')
    expect(demoted).toContain('- `slack_post` — The slack_post tool.')
  })

  it('cuts a first sentence at 160 characters', () => {
    expect(firstSentence('A'.repeat(300))).toHaveLength(158)
    expect(firstSentence('Short one! Then more.')).toBe('Short one!')
  })

  it('finds the first sentence of a 100,000-character description in its first 648 characters', () => {
    const work = { chars: 0 }
    expect(firstSentence(`Finds things. ${'x'.repeat(100_000)}`, work)).toBe('Finds things.')
    expect(work.chars).toBe(648)
    const long = { chars: 0 }
    expect(firstSentence('y'.repeat(100_000), long)).toBe(`${'y'.repeat(157)}…`)
    expect(long.chars).toBe(648)
  })

  it('gives the hint flattening the whole text would give, whatever the whitespace and punctuation', () => {
    const whole = (text: string) => {
      const flat = text.replace(/\s+/g, ' ').trim()
      const m = /^(.+?[.!?])(?:\s|$)/.exec(flat)
      const s = (m ? m[1] : flat).trim()
      return s.length > 160 ? `${s.slice(0, 157).trimEnd()}…` : s
    }
    const piece = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '\t', '.', '!', '?', '\u2028', '\u00a0', '€'), maxLength: 40 }),
      fc.integer({ min: 0, max: 3_000 }).map((n) => ' '.repeat(n)),
      fc.integer({ min: 0, max: 400 }).map((n) => 'w'.repeat(n)),
    )
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const text = parts.join('')
        expect(firstSentence(text)).toBe(whole(text))
      }),
      { numRuns: 2_000 },
    )
  })
})

describe('families', () => {
  it('takes the pack before __, else the first _ segment, else the name', () => {
    expect([familyOf('gmail__users_send'), familyOf('doc_note_add'), familyOf('weather'), familyOf('_odd')]).toEqual([
      'gmail',
      'doc',
      'weather',
      '_odd',
    ])
  })
})

describe('recipe, engine and catalog documents', () => {
  it('reads a complete recipe with defaults', () => {
    const r = parseRecipe(
      'engine: default\nallowedToolsKeep: ["doc_*", "@web", "*"]\nmodels: [openai/gpt-4o, anthropic/claude-sonnet-4.5]\n',
      'r',
    )
    expect(r).toEqual({
      ok: true,
      config: {
        name: 'r',
        engine: 'default',
        allowedToolsAdd: [],
        allowedToolsRemove: [],
        allowedToolsDefer: [],
        allowedToolsKeep: ['doc_*', '@web', '*'],
        allowedToolsDropFirst: [],
        models: ['openai/gpt-4o', 'anthropic/claude-sonnet-4.5'],
        activationTtl: '15m',
        activationTtlMs: 900_000,
        codeAllowDestructive: false,
      },
    })
  })

  it('reports every problem with its line and column', () => {
    const r = parseRecipe('name: other\nallowedToolsRemove: ["@"]\nallowedToolsDefer: [1]\n', 'r')
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.issues.map((i) => [i.pointer, i.line])).toEqual([
      ['/engine', 1],
      ['/allowedToolsDefer/0', 3],
      ['/name', 1],
      ['/allowedToolsRemove/0', 2],
    ])
  })

  it('takes an engine without allowedTools as unrestricted', () => {
    expect(parseEngine('roles: [chat]\n', 'e')).toEqual({ ok: true, config: { name: 'e', allowedTools: [], roles: ['chat'] } })
    expect(parseEngine('', 'e')).toEqual({ ok: true, config: { name: 'e', allowedTools: [], roles: [] } })
  })

  it('accepts maxTools 0 and extra catalog fields, refuses a negative or fractional maxTools', () => {
    expect(parseProviderDocument('wireType: openai\nmaxTools: 0\npricing: {in: 1}\n', 'models/x/_provider.yaml')).toEqual({
      ok: true,
      config: { wireType: 'openai', baseUrl: 'https://api.openai.com/v1', headers: {}, sizes: {}, maxTools: 0 },
    })
    expect(parseProviderDocument('maxTools: 1.5\n', 'p').ok).toBe(false)
  })

  it('parses durations and model references', () => {
    expect([parseDuration('90s'), parseDuration('1h30m'), parseDuration('0m'), parseDuration('15 minutes')]).toEqual([
      90_000,
      5_400_000,
      undefined,
      undefined,
    ])
    expect(parseModelRef('cortecs/glm-5.3:fp8')).toEqual({ instance: 'cortecs', model: 'glm-5.3:fp8' })
    expect(typeof parseModelRef('Open AI/x')).toBe('string')
  })
})
