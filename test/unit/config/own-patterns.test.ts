/**
 * The service's own schema patterns run on V8's RegExp (lib/config/patterns.ts ownPattern), so
 * validating a tool document or a spawn never loads re2js. They must still be patterns RE2
 * accepts and answer exactly as RE2 does, so that moving one between engines changes nothing.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import '../../../lib/config/server-tool'
import '../../../lib/models/documents'
import '../../../lib/mcp/server-doc'
import '../../../lib/surface/client-tools'
import '../../../lib/tools/inputs'
import '../../../lib/tools/types/doc_lookup'
import '../../../lib/tools/types/prompt_template'
import '../../../lib/tools/types/rest_api'
import '../../../lib/tools/types/scripted'
import { compilePattern, compileRe2, isPatternProblem, ownPatterns } from '../../../lib/config/patterns'

const SAMPLES = [
  '',
  'a',
  'A_b-1',
  'docs/a.md',
  '../x',
  './x',
  'a//b/',
  '/abs',
  'x/../y',
  'https://h',
  'http:/h',
  '${secret:K}',
  'a@b',
  ' ',
  'é',
  'a\nb',
]

describe('the service own patterns', () => {
  it('are registered when the schemas that use them load', () => {
    expect(ownPatterns().length).toBeGreaterThanOrEqual(10)
  })

  it('are accepted by RE2 and answer every sample as RE2 does', () => {
    for (const source of ownPatterns()) {
      const re2 = compileRe2(source)
      expect(isPatternProblem(re2), source).toBe(false)
      const own = compilePattern(source)
      if (isPatternProblem(re2) || isPatternProblem(own)) continue
      for (const s of SAMPLES) expect(own.test(s), `${source} on ${JSON.stringify(s)}`).toBe(re2.test(s))
    }
  })

  it('answer generated texts as RE2 does', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'Z', '0', '_', '-', '.', '/', ':', '@', ' ', '$', '{', '}', 'é', '\n'),
      maxLength: 24,
    })
    for (const source of ownPatterns()) {
      const re2 = compileRe2(source)
      const own = compilePattern(source)
      if (isPatternProblem(re2) || isPatternProblem(own)) throw new Error(source)
      fc.assert(
        fc.property(text, (s) => own.test(s) === re2.test(s)),
        { numRuns: 300 },
      )
    }
  })
})
