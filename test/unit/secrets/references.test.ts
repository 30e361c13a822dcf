import { describe, expect, it } from 'vitest'
import { MemorySecretStore } from '../../../lib/secrets/memory'
import { loadSecrets, malformedSecretReferences, SecretScrubber, secretNamesIn, substituteSecrets } from '../../../lib/secrets/references'

describe('secret references', () => {
  it('finds every referenced name in strings, arrays and nested objects', () => {
    const names = secretNamesIn({
      url: 'https://x/${secret:HOST_KEY}/a',
      headers: { Authorization: 'Bearer ${secret:TOKEN}', 'X-Two': '${secret:A}-${secret:B}' },
      body: [{ k: '${secret:TOKEN}' }, 3, null, true],
    })
    expect([...names]).toEqual(['HOST_KEY', 'TOKEN', 'A', 'B'])
  })

  it('reports malformed references with their pointer', () => {
    expect(malformedSecretReferences({ headers: { 'a/b': '${secret:}', ok: '${secret:GOOD}' }, list: ['x ${secret:1bad} y', '${secret:open'] })).toEqual([
      { pointer: '/headers/a~1b', message: expect.stringContaining("'${secret:}' is not a valid secret reference") },
      { pointer: '/list/0', message: expect.stringContaining('${secret:1bad}') },
      { pointer: '/list/1', message: expect.stringContaining('${secret:open') },
    ])
  })

  it('substitutes values, encoded when asked, and leaves unknown references alone', () => {
    const values = new Map([['T', 'a b/c']])
    expect(substituteSecrets('k=${secret:T}&u=${secret:U}', values)).toBe('k=a b/c&u=${secret:U}')
    expect(substituteSecrets('k=${secret:T}', values, encodeURIComponent)).toBe('k=a%20b%2Fc')
  })

  it('loads all referenced secrets in one store call and names the missing ones', async () => {
    const store = new MemorySecretStore()
    await store.put('acme', 'A', '1')
    store.reads = 0
    const { values, missing } = await loadSecrets(store, 'acme', ['A', 'B', 'A'])
    expect(values.get('A')).toBe('1')
    expect(missing).toEqual(['B'])
    expect(store.reads).toBe(1)
  })
})

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
    const input = { list: [`a ${secret} b`, 7, null], [secret]: true, nested: { buf: Buffer.from(secret), err: new Error(`failed with ${secret}`) } }
    const out = scrubber.scrub(input) as any
    expect(JSON.stringify(out)).not.toContain(secret)
    expect(out.list).toEqual(['a [redacted secret:TOKEN] b', 7, null])
    expect(out['[redacted secret:TOKEN]']).toBe(true)
    expect(out.nested.buf.toString()).toBe('[redacted secret:TOKEN]')
    expect(out.nested.err.message).toBe('failed with [redacted secret:TOKEN]')
    expect(input.list[0]).toContain(secret)
  })

  it('removes derived values and never re-scrubs its own replacement text', () => {
    const s = new SecretScrubber(new Map([['PW', 'hunter2'], ['R', 'red']]))
    s.addDerived('PW', Buffer.from('user:hunter2').toString('base64'))
    expect(s.scrubText(`Basic ${Buffer.from('user:hunter2').toString('base64')}`)).toBe('Basic [redacted secret:PW]')
    expect(s.scrubText('hunter2 red')).toBe('[redacted secret:PW] [redacted secret:R]')
  })

  it('prefers the longest match when one secret contains another', () => {
    const s = new SecretScrubber(new Map([['SHORT', 'abc'], ['LONG', 'abcdef']]))
    expect(s.scrubText('abcdef abc')).toBe('[redacted secret:LONG] [redacted secret:SHORT]')
  })

  it('treats values with regular-expression characters literally', () => {
    const s = new SecretScrubber(new Map([['RX', 'a.*b(c)[d]$']]))
    expect(s.scrubText('xa.*b(c)[d]$y aXXb')).toBe('x[redacted secret:RX]y aXXb')
  })
})
