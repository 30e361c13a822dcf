import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonDeeperThan, jsonSyntaxIssue, jsonTooDeep, MAX_NESTING_DEPTH, yamlTooDeep } from '../../lib/config/nesting'
import { MAX_YAML_BYTES, parseYaml } from '../../lib/config/yaml'

const nestedJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`

describe('the JSON shape scan', () => {
  it('accepts JSON nested exactly to the limit and refuses one level more, naming the place', () => {
    expect(jsonTooDeep(nestedJson(MAX_NESTING_DEPTH))).toBeUndefined()
    expect(jsonTooDeep(nestedJson(MAX_NESTING_DEPTH + 1))).toMatchObject({ line: 1, column: 5 * MAX_NESTING_DEPTH + 1 })
  })

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonTooDeep(JSON.stringify({ s: '['.repeat(500) + '\\"{'.repeat(500) }))).toBeUndefined()
  })

  it("refuses '[a' × 520,000 at the 101st bracket", () => {
    expect(jsonTooDeep('[a'.repeat(520_000))).toMatchObject({ line: 1, column: 2 * MAX_NESTING_DEPTH + 1 })
  })

  it('finds the same bracket as a scan of every character, over random texts of quotes, backslashes and brackets', () => {
    // the model: the character-by-character scan this one replaced (a string skipped one character at a time)
    const model = (text: string, max: number) => {
      let depth = 0
      let inString = false
      for (let i = 0; i < text.length; i++) {
        const c = text[i]
        if (inString) {
          if (c === '\\') i++
          else if (c === '"') inString = false
        } else if (c === '"') inString = true
        else if (c === '[' || c === '{') {
          if (++depth > max) return i
        } else if (c === ']' || c === '}') depth--
      }
      return -1
    }
    const text = fc.array(fc.constantFrom('"', '\\', '[', '{', ']', '}', 'a', ' '), { maxLength: 60 }).map((cs) => cs.join(''))
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 6 }), (t, max) => {
        expect(jsonDeeperThan(t, max)).toBe(model(t, max))
      }),
      { numRuns: 2_000 },
    )
  })
})

describe('the JSON syntax locator', () => {
  it.each([
    ['[a', 1, 2, "unexpected 'a'"],
    ['{"a": 1,\n  "b": tru }', 2, 8, "unexpected 't'"],
    ['{"a" 1}', 1, 6, "expected ':'"],
    ['[1, 2', 1, 6, 'unexpected end'],
    ['{"a": "x\ny"}', 1, 9, 'control character'],
    ['{} x', 1, 4, 'unexpected text after'],
  ])('places the first error of %j at line %i, column %i', (text, line, column, message) => {
    expect(() => JSON.parse(text)).toThrow()
    const issue = jsonSyntaxIssue(text)
    expect(issue).toMatchObject({ line, column })
    expect(issue.message).toContain(message)
  })
})

describe('the YAML shape scan', () => {
  const blockMaps = (depth: number) => `${Array.from({ length: depth }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1\n`

  it('counts block mappings by indentation and refuses the level past the limit with its line', () => {
    expect(yamlTooDeep(blockMaps(MAX_NESTING_DEPTH))).toBeUndefined()
    expect(yamlTooDeep(blockMaps(MAX_NESTING_DEPTH + 1))).toMatchObject({ line: MAX_NESTING_DEPTH + 1, column: MAX_NESTING_DEPTH + 1 })
  })

  it('counts compact sequences (`- - - x`) and flow brackets on one line', () => {
    // the line's own level is counted beside its indicators: one more than the parser sees, never fewer
    expect(yamlTooDeep(`${'- '.repeat(MAX_NESTING_DEPTH - 1)}x`)).toBeUndefined()
    expect(yamlTooDeep(`${'- '.repeat(MAX_NESTING_DEPTH)}x`)).toMatchObject({ line: 1, column: 2 * MAX_NESTING_DEPTH - 1 })
    expect(yamlTooDeep(`a: ${'['.repeat(300_000)}`)).toMatchObject({ line: 1, column: 3 + MAX_NESTING_DEPTH })
    expect(yamlTooDeep(`a:\n  - {b: [${'{c: '.repeat(MAX_NESTING_DEPTH)}1${'}'.repeat(MAX_NESTING_DEPTH)}]}`)).toMatchObject({
      line: 2,
    })
  })

  it('leaves brackets in plain and quoted scalars, comments and block scalars alone', () => {
    const text = [
      'pattern: ^[a-z[[[[]+$',
      `quoted: "${'['.repeat(300)}"`,
      `single: '${'{'.repeat(300)}'' still quoted'`,
      `# ${'['.repeat(300)}`,
      'source: |',
      ...Array.from({ length: 300 }, (_, i) => `  ${' '.repeat(i)}{[`),
      'after: done',
    ].join('\n')
    expect(yamlTooDeep(text)).toBeUndefined()
    expect(parseYaml(text).ok).toBe(true)
  })

  // issue 21 N4 and layouts of its class: what a scan of its own misread, the parser's lexer does not
  const layouts: [string, (nested: string) => string, number][] = [
    ['a plain scalar whose continuation line starts with a quote (N4)', (n) => `a: x\n "y\nb: ${n}\nc: "\n`, 3],
    ['the same with a single quote', (n) => `a: x\n 'y\nb: ${n}\nc: '\n`, 3],
    ['a document start with content on its line (multi-document)', (n) => `a: 1\n--- ${n}\n`, 2],
    ['an anchor glued to a flow collection', (n) => `a: &x${n}\n`, 1],
    ['a tag glued to a flow collection', (n) => `a: !t${n}\n`, 1],
    ['a block scalar with an indentation indicator, then a key', (n) => `a: |2\n   x\nb: ${n}\n`, 3],
    ['an explicit key whose continuation starts with a quote', (n) => `? x\n "y\n: ${n}\nz: "\n`, 3],
  ]
  const brackets = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

  it.each(layouts)('counts %s as the parser nests it', (_, layout, line) => {
    expect(yamlTooDeep(layout(brackets(3_000)))).toMatchObject({
      line,
      message: expect.stringContaining(`deeper than ${MAX_NESTING_DEPTH}`),
    })
    expect(yamlTooDeep(layout(brackets(50)))).toBeUndefined()
  })

  it('makes parseYaml answer a deep document with an issue before the parser runs', () => {
    const result = parseYaml(`x: ${'['.repeat(300_000)}`, 'server-tools/deep.yaml')
    expect(result).toMatchObject({
      ok: false,
      issues: [{ path: 'server-tools/deep.yaml', line: 1, message: expect.stringContaining(`deeper than ${MAX_NESTING_DEPTH}`) }],
    })
  })
})

describe('duplicate keys', () => {
  it('are refused with the line of the repeated key, in a mapping of 5,000 keys as in a small one', () => {
    const many = `${Array.from({ length: 5_000 }, (_, i) => `k${i}: ${i}`).join('\n')}\nk7: again\n`
    expect(parseYaml(many)).toMatchObject({ ok: false, issues: [{ line: 5_001, column: 1, message: 'Map keys must be unique' }] })
    expect(parseYaml('a: 1\nb:\n  c: 1\n  c: 2\n')).toMatchObject({ ok: false, issues: [{ line: 4, column: 3 }] })
    expect(parseYaml('a: 1\nb:\n  a: 1\n').ok).toBe(true)
  })
})

describe('document sizes the YAML parser sees', () => {
  it('refuses YAML over 64 KiB with the sizes and a pointer to JSON, before parsing it', () => {
    const big = Array.from({ length: 8_000 }, (_, i) => `key${i}: value ${i}`).join('\n')
    expect(big.length).toBeGreaterThan(MAX_YAML_BYTES)
    expect(parseYaml(big, 'recipes/big.yaml')).toMatchObject({
      ok: false,
      issues: [{ path: 'recipes/big.yaml', message: expect.stringMatching(/at most 64 KiB .*send larger documents as JSON/) }],
    })
  })

  it('reads JSON over 64 KiB natively, without positions, and names where broken JSON breaks', () => {
    const value = { items: Array.from({ length: 10_000 }, (_, i) => ({ i })) }
    const text = JSON.stringify(value)
    expect(text.length).toBeGreaterThan(MAX_YAML_BYTES)
    const read = parseYaml(text)
    expect(read.ok && read.value.data).toEqual(value)
    expect(read.ok && read.value.doc).toBeUndefined()
    expect(parseYaml(text.slice(0, -1))).toMatchObject({ ok: false, issues: [{ line: 1, column: text.length }] })
  })
})

describe('what a YAML document expands to', () => {
  it('is charged at every use of an anchor, so a short text of aliases is refused by the size of its data', () => {
    const long = 'x'.repeat(30_000)
    const text = `a: &a "${long}"\nb: [${Array.from({ length: 99 }, () => '*a').join(', ')}]\n`
    expect(text.length).toBeLessThan(MAX_YAML_BYTES)
    expect(parseYaml(text)).toMatchObject({
      ok: false,
      issues: [{ message: expect.stringContaining('expands to more than 100,000 units') }],
    })
  })

  it('refuses nested anchors whose uses multiply (a billion-laughs shape), and a self-referencing alias', () => {
    const laughs = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]']
    for (let i = 1; i < 6; i++) laughs.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`)
    for (const text of [`${laughs.join('\n')}\n`, '&a [*a]\n']) {
      const result = parseYaml(text)
      expect(result.ok, text.slice(0, 40)).toBe(false)
    }
  })

  it('leaves a document that uses anchors for what they are for', () => {
    const text = 'base: &base {timeout: 5, retries: 2}\na: *base\nb: *base\n'
    expect(parseYaml(text)).toMatchObject({ ok: true })
  })
})
