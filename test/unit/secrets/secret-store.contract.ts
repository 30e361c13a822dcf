/** The promises every SecretStore keeps, run against each adapter. */
import { describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../../lib/errors'
import type { SecretStore } from '../../../lib/secrets/ports'

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
    return undefined
  } catch (e) {
    return isServerToolsError(e) ? e.code : `not a ServerToolsError: ${String(e)}`
  }
}

export function secretStoreContract(name: string, make: () => Promise<SecretStore>) {
  describe(`SecretStore (${name})`, () => {
    it('stores a value, says whether it was created or replaced, and reads it back', async () => {
      const store = await make()
      expect(await store.put('acme', 'API_TOKEN', 'v1')).toBe('created')
      expect(await store.get('acme', 'API_TOKEN')).toBe('v1')
      expect(await store.put('acme', 'API_TOKEN', 'v2')).toBe('updated')
      expect(await store.get('acme', 'API_TOKEN')).toBe('v2')
    })

    it('keeps tenants apart', async () => {
      const store = await make()
      await store.put('acme', 'TOKEN', 'acme-value')
      await store.put('globex', 'TOKEN', 'globex-value')
      expect(await store.get('acme', 'TOKEN')).toBe('acme-value')
      expect(await store.get('globex', 'TOKEN')).toBe('globex-value')
      expect(await store.get('initech', 'TOKEN')).toBeUndefined()
      expect(await store.list('initech')).toEqual([])
    })

    it('lists names sorted and never values', async () => {
      const store = await make()
      for (const n of ['b_token', 'A-key', 'c']) await store.put('acme', n, `value-of-${n}`)
      const names = await store.list('acme')
      expect(names).toEqual(['A-key', 'b_token', 'c'])
      expect(JSON.stringify(names)).not.toContain('value-of')
    })

    it('lists more names than one backend page holds', async () => {
      const store = await make()
      const names = Array.from({ length: 23 }, (_, i) => `S${String(i).padStart(2, '0')}`)
      for (const n of names) await store.put('acme', n, 'x')
      expect(await store.list('acme')).toEqual(names)
    })

    it('reads many values at once and leaves out names that are not set', async () => {
      const store = await make()
      const names = Array.from({ length: 12 }, (_, i) => `K${i}`)
      for (const n of names) await store.put('acme', n, `v-${n}`)
      const got = await store.getMany('acme', [...names, 'MISSING', 'K0'])
      expect(got.size).toBe(12)
      expect(got.get('K11')).toBe('v-K11')
      expect(got.has('MISSING')).toBe(false)
      expect((await store.getMany('acme', [])).size).toBe(0)
    })

    it('deletes a secret, and a second delete is NOT_FOUND', async () => {
      const store = await make()
      await store.put('acme', 'GONE', 'x')
      await store.delete('acme', 'GONE')
      expect(await store.get('acme', 'GONE')).toBeUndefined()
      expect(await store.list('acme')).toEqual([])
      expect(await codeOf(store.delete('acme', 'GONE'))).toBe('NOT_FOUND')
      expect(await store.put('acme', 'GONE', 'again')).toBe('created')
    })

    it('refuses invalid names and values without echoing the value', async () => {
      const store = await make()
      expect(await codeOf(store.put('acme', '1abc', 'x'))).toBe('INVALID_INPUT')
      expect(await codeOf(store.put('acme', 'a/b', 'x'))).toBe('INVALID_INPUT')
      expect(await codeOf(store.put('acme', 'a'.repeat(129), 'x'))).toBe('INVALID_INPUT')
      expect(await codeOf(store.put('acme', 'EMPTY', ''))).toBe('INVALID_INPUT')
      expect(await codeOf(store.put('acme', 'BIG', 'z'.repeat(4097)))).toBe('TOO_LARGE')
      expect(await codeOf(store.put('../etc', 'X', 'x'))).toBe('INVALID_INPUT')
      try {
        await store.put('acme', 'BIG', `top-secret-${'z'.repeat(5000)}`)
      } catch (e) {
        expect(JSON.stringify({ m: (e as Error).message, d: (e as { details?: unknown }).details })).not.toContain('top-secret')
      }
      expect(await store.put('acme', 'MAX', 'z'.repeat(4096))).toBe('created')
    })

    it('keeps values byte for byte, including unicode and JSON-looking text', async () => {
      const store = await make()
      const value = '{"k": "ä€😀"}\n\tline2 ${secret:OTHER}'
      await store.put('acme', 'ODD', value)
      expect(await store.get('acme', 'ODD')).toBe(value)
    })
  })
}
