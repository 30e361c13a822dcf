import { describe, expect, it } from 'vitest'
import { LiteralSearch } from '../../../lib/secrets/literal-search'
import { reflectedForms, SecretScrubber } from '../../../lib/secrets/scrubber'

describe('SecretScrubber', () => {
  const secret = 'p@ss w/rd"+1'
  const scrubber = new SecretScrubber(new Map([['TOKEN', secret]]))

  it('removes the raw value and its JSON, URL and base64 spellings', () => {
    const echoed = [
      `raw ${secret}`,
      JSON.stringify({ echoed: secret }),
      `https://x/?t=${encodeURIComponent(secret)}`,
      `form t=${new URLSearchParams({ t: secret }).toString().slice(2)}`,
      `b64 ${Buffer.from(secret).toString('base64')}`,
      `b64url ${Buffer.from(secret).toString('base64url')}`,
    ]
    for (const text of echoed) {
      const out = scrubber.scrubText(text)
      expect(out, text).toContain('[redacted secret:TOKEN]')
      expect(out).not.toContain(secret)
      expect(out).not.toContain(encodeURIComponent(secret))
      expect(out).not.toContain(Buffer.from(secret).toString('base64'))
    }
  })

  it('scrubs deep values, keys, buffers and errors without changing the original', () => {
    const input = {
      list: [`a ${secret} b`, 7, null],
      [secret]: true,
      nested: { buf: Buffer.from(secret), err: new Error(`failed with ${secret}`) },
    }
    const out = scrubber.scrub(input) as any
    expect(JSON.stringify(out)).not.toContain(secret)
    expect(out.list).toEqual(['a [redacted secret:TOKEN] b', 7, null])
    expect(out['[redacted secret:TOKEN]']).toBe(true)
    expect(out.nested.buf.toString()).toBe('[redacted secret:TOKEN]')
    expect(out.nested.err.message).toBe('failed with [redacted secret:TOKEN]')
    expect(input.list[0]).toContain(secret)
  })

  it('removes derived values and never re-scrubs its own replacement text', () => {
    const s = new SecretScrubber(
      new Map([
        ['PW', 'hunter2'],
        ['R', 'red'],
      ]),
    )
    s.addDerived('PW', Buffer.from('user:hunter2').toString('base64'))
    expect(s.scrubText(`Basic ${Buffer.from('user:hunter2').toString('base64')}`)).toBe('Basic [redacted secret:PW]')
    expect(s.scrubText('hunter2 red')).toBe('[redacted secret:PW] [redacted secret:R]')
  })

  it('names a text that is both an added value and a derived value after whichever came first, as forms are spelled out on first use', () => {
    const derivedFirst = new SecretScrubber()
    derivedFirst.addDerived('DERIVED', 'hunter2')
    derivedFirst.add('VALUE', 'hunter2')
    expect(derivedFirst.scrubText('hunter2')).toBe('[redacted secret:DERIVED]')
    const valueFirst = new SecretScrubber()
    valueFirst.add('VALUE', 'hunter2')
    valueFirst.addDerived('DERIVED', 'hunter2')
    expect(valueFirst.isEmpty).toBe(false)
    expect(valueFirst.scrubText('hunter2')).toBe('[redacted secret:VALUE]')
    // a value added after the first scrub is searched from then on
    valueFirst.add('LATE', 'swordfish')
    expect(valueFirst.scrub({ k: 'swordfish' })).toEqual({ k: '[redacted secret:LATE]' })
    expect(new SecretScrubber(new Map([['EMPTY', '']])).isEmpty).toBe(true)
  })

  it('prefers the longest match when one secret contains another', () => {
    const s = new SecretScrubber(
      new Map([
        ['SHORT', 'abc'],
        ['LONG', 'abcdef'],
      ]),
    )
    expect(s.scrubText('abcdef abc')).toBe('[redacted secret:LONG] [redacted secret:SHORT]')
  })

  it('redacts overlapping echoes of two secrets as one region named after the first', () => {
    const s = new SecretScrubber(
      new Map([
        ['A', 'xxyy'],
        ['B', 'yyzz'],
      ]),
    )
    expect(s.scrubText('<xxyyzz>')).toBe('<[redacted secret:A]>')
  })

  it('treats values with regular-expression characters literally', () => {
    const s = new SecretScrubber(new Map([['RX', 'a.*b(c)[d]$']]))
    expect(s.scrubText('xa.*b(c)[d]$y aXXb')).toBe('x[redacted secret:RX]y aXXb')
  })
})

describe('SecretScrubber catches the common reflected encodings', () => {
  const value = "Tok'en é/+ 9Zq~!*(x)"
  const s = new SecretScrubber(new Map([['K', value]]))
  const clean = (text: string) => {
    const out = s.scrubText(text)
    expect(out, text).toContain('[redacted secret:K]')
    return out
  }

  it('in another case: upper, lower and a host name lower-cased by URL parsing', () => {
    const t = new SecretScrubber(new Map([['K', 'AbCdEf-SeCrEt-123']]))
    for (const text of ['ABCDEF-SECRET-123', 'abcdef-secret-123']) expect(t.scrubText(`host ${text}!`)).toBe('host [redacted secret:K]!')
    expect(t.scrubText(new URL('http://AbCdEf-SeCrEt-123.example/').hostname)).toBe('[redacted secret:K].example')
  })

  it('in hex, lower and upper case', () => {
    const hex = Buffer.from(value).toString('hex')
    expect(clean(`h=${hex};`)).toBe('h=[redacted secret:K];')
    expect(clean(`h=${hex.toUpperCase()};`)).toBe('h=[redacted secret:K];')
  })

  it('in every URL encoding flavour: component, URI, RFC 3986 strict, form, with either hex case', () => {
    const strict = encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    const flavours = [
      encodeURIComponent(value),
      encodeURI(value),
      strict,
      strict.replace(/%20/g, '+'),
      new URLSearchParams({ v: value }).toString().slice(2),
      encodeURIComponent(value).toLowerCase(),
    ]
    expect(strict).toContain('%27') // the apostrophe spelled the strict way
    expect(new Set(flavours).size).toBeGreaterThan(4)
    for (const f of flavours) expect(clean(`?q=${f}&x=1`)).toBe('?q=[redacted secret:K]&x=1')
  })

  it('JSON-escaped, with \\u escapes for non-ASCII and escaped slashes, and HTML-escaped', () => {
    const json = JSON.stringify(value).slice(1, -1)
    const ascii = json.replace(/é/g, '\\u00e9')
    for (const f of [json, ascii, ascii.replace(/\//g, '\\/'), value.replace(/'/g, '&#39;'), value.replace(/'/g, '&#x27;')]) {
      expect(clean(`{"v":"${f}"}`)).toBe('{"v":"[redacted secret:K]"}')
    }
  })

  it('under layers a client would unwrap: JSON inside JSON, twice and three times percent-encoded, encodings mixed', () => {
    const v = 'Tok"en/ä\\x'
    const t = new SecretScrubber(new Map([['K', v]]))
    const once = JSON.stringify({ v })
    const layered = [
      JSON.stringify({ inner: once }),
      JSON.stringify({ inner: JSON.stringify({ inner: once }) }),
      encodeURIComponent(encodeURIComponent(v)),
      encodeURIComponent(encodeURIComponent(encodeURIComponent(v))),
      JSON.stringify({ q: encodeURIComponent(v) }).replace(/%/g, '%25'), // percent inside JSON, then encoded again
      encodeURIComponent(JSON.stringify({ v })), // JSON inside a query string
    ]
    for (const text of layered) {
      const out = t.scrubText(`<${text}>`)
      expect(out, text).toContain('[redacted secret:K]')
      expect(out).not.toMatch(/Tok/i)
      expect(out.startsWith('<') && out.endsWith('>')).toBe(true)
    }
  })

  it('escaped one character at a time: \\u, \\u{}, \\x, decimal and hex HTML references, %XX of unreserved characters', () => {
    const v = 'hunter2secret'
    const t = new SecretScrubber(new Map([['K', v]]))
    const each = (f: (c: string) => string) => [...v].map(f).join('')
    const hex = (c: string) => c.charCodeAt(0).toString(16)
    const forms = [
      each((c) => `\\u${hex(c).padStart(4, '0')}`),
      each((c) => `\\u{${hex(c)}}`),
      each((c) => `\\x${hex(c)}`),
      each((c) => `&#${c.charCodeAt(0)};`),
      each((c) => `&#x${hex(c).toUpperCase()};`),
      each((c) => `%${hex(c)}`),
      // mixed: every other character escaped, the rest plain
      [...v].map((c, i) => (i % 2 ? `\\u00${hex(c)}` : c)).join(''),
    ]
    for (const f of forms) expect(t.scrubText(`a ${f} b`), f).toBe('a [redacted secret:K] b')
  })

  it('in another case outside ASCII: Greek, Cyrillic and accented Latin upper case', () => {
    const t = new SecretScrubber(new Map([['K', 'σκληρό-пароль-élan']]))
    expect(t.scrubText('x ΣΚΛΗΡΌ-ПАРОЛЬ-ÉLAN y')).toBe('x [redacted secret:K] y')
    expect(
      t.scrubText(
        JSON.stringify('ΣΚΛΗΡΌ-ПАРОЛЬ-ÉLAN').replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      ),
    ).toBe('"[redacted secret:K]"')
  })

  it('counts its work: at most the text and four decoded layers are searched, however deep the escaping goes', () => {
    const t = new SecretScrubber(new Map([['K', 'never-present-secret']]))
    let text = 'a%b'
    for (let i = 0; i < 12; i++) text = encodeURIComponent(text)
    const before = t.charactersSearched
    expect(t.scrubText(text)).toBe(text)
    expect(t.charactersSearched - before).toBeLessThanOrEqual(5 * text.length)
    const plain = 'no escapes here at all'
    const mark = t.charactersSearched
    t.scrubText(plain)
    expect(t.charactersSearched - mark).toBe(plain.length)
  })

  it('searches a long text once plus a window around each escape, not once more per layer', () => {
    const t = new SecretScrubber(new Map([['K', 'hunter2secret']]))
    const words = 'plain words of a long tool result '.repeat(3_000)
    const text = `${words}\\u0068unter2secret ${words}%2568unter2secret ${words}&amp;#104;unter2secret ${words}`
    const searched = t.charactersSearched
    const out = t.scrubText(text)
    expect(out.split('[redacted secret:K]')).toHaveLength(4)
    // three escape sites, one to two layers each: the automaton steps over a few characters past each replacement
    expect(t.charactersSearched - searched).toBeLessThan(text.length + 3 * 2 * 40)
    // scanning for escapes: the text once, then only the windows around the three sites (and a few characters of look-ahead each)
    expect(t.charactersScanned).toBeLessThan(text.length + 3 * 2 * 2 * (13 + 2 + 36 + 12) + 100)
  })

  it('looks at most one character reference ahead of each &, so a text of ampersands costs a bounded multiple of its length', () => {
    const t = new SecretScrubber(new Map([['K', 'hunter2secret']]))
    const text = '&'.repeat(200_000)
    expect(t.scrubText(text)).toBe(text)
    // each `&` looks for its `;` at most eleven characters on (it looked to the text's end before: quadratic)
    expect(t.charactersScanned).toBeLessThanOrEqual(12 * text.length)
    expect(t.charactersSearched).toBe(text.length)
  })

  it('in base64 after a prefix of any length, so all three alignments, in both alphabets', () => {
    for (let n = 0; n < 6; n++) {
      const prefix = 'user:'.padEnd(n, '#').slice(0, n)
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${value}-and-more`).toString(encoding)
        const out = clean(`Basic ${encoded}`)
        // what is left around the redaction is at most the characters that mix prefix or suffix bits
        expect(out.replace('Basic ', '').replace('[redacted secret:K]', '').length).toBeLessThanOrEqual(Math.ceil((n * 8) / 6) + 16)
        expect(reflectedForms(value).has(Buffer.from(value).toString(encoding))).toBe(true)
      }
    }
  })

  it('leaves text that contains no secret untouched and identical', () => {
    const text = 'nothing to see here, just words'
    expect(s.scrubText(text)).toBe(text)
  })
})

describe('LiteralSearch', () => {
  it('finds every occurrence case-insensitively and merges overlapping ones', () => {
    const search = new LiteralSearch<string>([
      ['he', 'he'],
      ['she', 'she'],
      ['hers', 'hers'],
      ['XY', 'xy'],
    ])
    expect(search.spans('ushers xy Xy')).toEqual([
      { start: 1, end: 6, value: 'hers' },
      { start: 7, end: 9, value: 'xy' },
      { start: 10, end: 12, value: 'xy' },
    ])
  })

  it('finds a short pattern that is a suffix of a longer partial match', () => {
    const search = new LiteralSearch<number>([
      ['abcd', 1],
      ['bc', 2],
    ])
    expect(search.spans('abce')).toEqual([{ start: 1, end: 3, value: 2 }])
  })

  it('finds nothing with no patterns', () => {
    expect(new LiteralSearch<number>([]).spans('anything')).toEqual([])
  })
})
