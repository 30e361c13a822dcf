import { describe, expect, it } from 'vitest'
import { validateAgainst } from '../../lib/config/json-schema'
import { invalidInput, MAX_LISTED_ISSUES } from '../../lib/errors'

describe('lists of problems in an answer', () => {
  it('name at most 20 unknown arguments of a call, and count the rest in one more issue', () => {
    const args = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`extra_${i}`, i]))
    const issues = validateAgainst({ type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false }, args)
    expect(issues).toHaveLength(MAX_LISTED_ISSUES + 1)
    expect(issues[0]).toEqual({ pointer: '/extra_0', message: 'extra_0 is not allowed here' })
    // the validator itself stops collecting at 100 errors (lib/config/schema-interpreter.ts): 80 more
    expect(issues.at(-1)).toEqual({ message: 'and 80 more problems (only the first 20 are listed)' })
  })

  it('keep every error built by hand to the same 20 plus a count, whatever the route', () => {
    const issues = Array.from({ length: 300 }, (_, i) => ({ pointer: `/k${i}`, message: `unknown field 'k${i}'` }))
    const e = invalidInput('the body is invalid', issues)
    expect(e.details?.errors).toHaveLength(21)
    expect(e.details?.errors?.at(-1)?.message).toBe('and 280 more problems (only the first 20 are listed)')
    expect(invalidInput('x', issues.slice(0, 20)).details?.errors).toHaveLength(20)
  })

  it('list a mix of missing, mistyped and unknown arguments under the same cap', () => {
    const schema = {
      type: 'object',
      required: Array.from({ length: 30 }, (_, i) => `r${i}`),
      properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}`, { type: 'number' }])),
      additionalProperties: false,
    }
    const args = { ...Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}`, 'text'])), stray: 1 }
    const issues = validateAgainst(schema, args)
    expect(issues).toHaveLength(21)
    expect(issues.at(-1)?.message).toMatch(/^and \d+ more problems/)
  })
})
