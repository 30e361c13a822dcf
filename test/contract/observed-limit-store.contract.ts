/** The ObservedLimitStore contract: memory (test/unit) and DynamoDB on dynalite (test/integration). */
import { beforeEach, describe, expect, it } from 'vitest'
import type { LearnedLimit, ObservedLimitRecord, ObservedLimitStore } from '../../lib/surface/limits'

/** "Now" in epoch seconds; records live until NOW + 3600 unless told otherwise. */
const NOW = 1_767_225_600

const rec = (maxTools: number, over: Partial<ObservedLimitRecord> = {}): ObservedLimitRecord => ({
  tenant: 'acme',
  endpoint: 'cortecs/glm-5',
  maxTools,
  observedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: NOW + 3600,
  catalog: 'none',
  requestedToolCount: 163,
  errorMessage: "Invalid 'tools': array too long",
  ...over,
})

const limits = (m: Map<string, LearnedLimit>) => new Map([...m].map(([k, v]) => [k, v.maxTools]))

export function observedLimitStoreContract(name: string, make: () => Promise<ObservedLimitStore>) {
  describe(`ObservedLimitStore contract (${name})`, () => {
    let store: ObservedLimitStore
    const lower = (r: ObservedLimitRecord, now = NOW) => store.lower(r, now)
    const get = async (tenant: string, endpoints: string[], now = NOW) => limits(await store.getMany(tenant, endpoints, now))
    beforeEach(async () => {
      store = await make()
    })

    it('stores the first observation and reads it back with the catalog mark it was learned under', async () => {
      expect(await lower(rec(128, { catalog: '200' }))).toEqual({ maxTools: 128, lowered: true })
      expect(await store.getMany('acme', ['cortecs/glm-5', 'cortecs/other'], NOW)).toEqual(
        new Map([['cortecs/glm-5', { maxTools: 128, catalog: '200' }]]),
      )
    })

    it('keeps the minimum ever seen while it lives', async () => {
      await lower(rec(128))
      expect(await lower(rec(200))).toEqual({ maxTools: 128, lowered: false })
      expect(await lower(rec(128))).toEqual({ maxTools: 128, lowered: false })
      expect(await lower(rec(64))).toEqual({ maxTools: 64, lowered: true })
      expect((await get('acme', ['cortecs/glm-5'])).get('cortecs/glm-5')).toBe(64)
    })

    it('leaves an expired limit out of reads and lets any observation replace it', async () => {
      await lower(rec(64, { expiresAt: NOW + 10 }))
      expect(await get('acme', ['cortecs/glm-5'], NOW + 9)).toEqual(new Map([['cortecs/glm-5', 64]]))
      expect(await get('acme', ['cortecs/glm-5'], NOW + 10)).toEqual(new Map())
      expect(await lower(rec(100, { expiresAt: NOW + 4000 }), NOW + 10)).toEqual({ maxTools: 100, lowered: true })
      expect(await get('acme', ['cortecs/glm-5'], NOW + 10)).toEqual(new Map([['cortecs/glm-5', 100]]))
    })

    it('replaces a limit learned under another catalog mark, even by a larger one', async () => {
      await lower(rec(20, { catalog: '50' }))
      expect(await lower(rec(40, { catalog: '80' }))).toEqual({ maxTools: 40, lowered: true })
      expect(await store.getMany('acme', ['cortecs/glm-5'], NOW)).toEqual(new Map([['cortecs/glm-5', { maxTools: 40, catalog: '80' }]]))
    })

    it('keeps the minimum when observations race', async () => {
      await Promise.all([90, 40, 120, 64, 41, 200].map((n) => lower(rec(n))))
      expect((await get('acme', ['cortecs/glm-5'])).get('cortecs/glm-5')).toBe(40)
    })

    it('keys endpoints trimmed and lower-cased, answering under the spelling asked for', async () => {
      await lower(rec(50, { endpoint: ' Cortecs/GLM-5 ' }))
      expect(await lower(rec(60, { endpoint: 'cortecs/glm-5' }))).toEqual({ maxTools: 50, lowered: false })
      expect(await lower(rec(40, { endpoint: 'CORTECS/Glm-5' }))).toEqual({ maxTools: 40, lowered: true })
      expect(await get('acme', ['cortecs/glm-5', 'Cortecs/GLM-5', 'cortecs/other'])).toEqual(
        new Map([
          ['cortecs/glm-5', 40],
          ['Cortecs/GLM-5', 40],
        ]),
      )
    })

    it('keeps tenants and endpoints apart', async () => {
      await lower(rec(10))
      await lower(rec(20, { tenant: 'globex' }))
      await lower(rec(30, { endpoint: 'cortecs/qwen' }))
      expect(await get('acme', ['cortecs/glm-5', 'cortecs/qwen'])).toEqual(
        new Map([
          ['cortecs/glm-5', 10],
          ['cortecs/qwen', 30],
        ]),
      )
      expect(await get('globex', ['cortecs/glm-5', 'cortecs/qwen'])).toEqual(new Map([['cortecs/glm-5', 20]]))
      expect(await get('acme', [])).toEqual(new Map())
    })
  })
}
