/** The ObservedLimitStore contract: memory (test/unit) and DynamoDB on dynalite (test/integration). */
import { beforeEach, describe, expect, it } from 'vitest'
import type { ObservedLimitRecord, ObservedLimitStore } from '../../lib/surface/limits'

const rec = (maxTools: number, over: Partial<ObservedLimitRecord> = {}): ObservedLimitRecord => ({
  tenant: 'acme',
  endpoint: 'cortecs/glm-5',
  maxTools,
  observedAt: '2026-01-01T00:00:00.000Z',
  requestedToolCount: 163,
  errorMessage: "Invalid 'tools': array too long",
  ...over,
})

export function observedLimitStoreContract(name: string, make: () => Promise<ObservedLimitStore>) {
  describe(`ObservedLimitStore contract (${name})`, () => {
    let store: ObservedLimitStore
    beforeEach(async () => {
      store = await make()
    })

    it('stores the first observation and reads it back', async () => {
      expect(await store.lower(rec(128))).toEqual({ maxTools: 128, lowered: true })
      expect(await store.getMany('acme', ['cortecs/glm-5', 'cortecs/other'])).toEqual(new Map([['cortecs/glm-5', 128]]))
    })

    it('keeps the minimum ever seen', async () => {
      await store.lower(rec(128))
      expect(await store.lower(rec(200))).toEqual({ maxTools: 128, lowered: false })
      expect(await store.lower(rec(128))).toEqual({ maxTools: 128, lowered: false })
      expect(await store.lower(rec(64))).toEqual({ maxTools: 64, lowered: true })
      expect((await store.getMany('acme', ['cortecs/glm-5'])).get('cortecs/glm-5')).toBe(64)
    })

    it('keeps the minimum when observations race', async () => {
      await Promise.all([90, 40, 120, 64, 41, 200].map((n) => store.lower(rec(n))))
      expect((await store.getMany('acme', ['cortecs/glm-5'])).get('cortecs/glm-5')).toBe(40)
    })

    it('keys endpoints trimmed and lower-cased, answering under the spelling asked for', async () => {
      await store.lower(rec(50, { endpoint: ' Cortecs/GLM-5 ' }))
      expect(await store.lower(rec(60, { endpoint: 'cortecs/glm-5' }))).toEqual({ maxTools: 50, lowered: false })
      expect(await store.lower(rec(40, { endpoint: 'CORTECS/Glm-5' }))).toEqual({ maxTools: 40, lowered: true })
      expect(await store.getMany('acme', ['cortecs/glm-5', 'Cortecs/GLM-5', 'cortecs/other'])).toEqual(
        new Map([
          ['cortecs/glm-5', 40],
          ['Cortecs/GLM-5', 40],
        ]),
      )
    })

    it('keeps tenants and endpoints apart', async () => {
      await store.lower(rec(10))
      await store.lower(rec(20, { tenant: 'globex' }))
      await store.lower(rec(30, { endpoint: 'cortecs/qwen' }))
      expect(await store.getMany('acme', ['cortecs/glm-5', 'cortecs/qwen'])).toEqual(
        new Map([
          ['cortecs/glm-5', 10],
          ['cortecs/qwen', 30],
        ]),
      )
      expect(await store.getMany('globex', ['cortecs/glm-5', 'cortecs/qwen'])).toEqual(new Map([['cortecs/glm-5', 20]]))
      expect(await store.getMany('acme', [])).toEqual(new Map())
    })
  })
}
