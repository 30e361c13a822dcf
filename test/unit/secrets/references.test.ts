import { describe, expect, it } from 'vitest'
import { MemorySecretStore } from '../../../lib/secrets/memory'
import { loadSecrets, malformedSecretReferences, secretNamesIn, substituteSecrets } from '../../../lib/secrets/references'

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
    expect(
      malformedSecretReferences({ headers: { 'a/b': '${secret:}', ok: '${secret:GOOD}' }, list: ['x ${secret:1bad} y', '${secret:open'] }),
    ).toEqual([
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
