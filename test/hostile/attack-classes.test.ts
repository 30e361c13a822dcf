/**
 * Every attack class `npm run bench -- hostile` floods (test/hostile/attacks.ts) sends its request
 * and gets the answer its own check expects, through the bench's `node:http` client: a class whose
 * check has drifted from the app would otherwise be found only by a bench run, as a row of
 * "wrong answers". Counts only, never a timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ATTACK_CLASSES } from './attacks'
import { type HostileApp, startApp, warmUp } from './harness'

describe('the attack classes of the hostile bench', () => {
  let app: HostileApp

  beforeAll(async () => {
    app = await startApp({ label: 'attack classes', client: 'node-http' })
    await warmUp(app)
  }, 60_000)

  afterAll(async () => {
    await app?.stop()
  })

  ATTACK_CLASSES.forEach((attack, i) => {
    it(`${attack.name}: prepared once, its request answers as its check expects twice in a row on a kept connection`, async () => {
      const tenant = `attacker-${i}`
      const prepared = await attack.prepare?.(app, tenant)
      for (let n = 0; n < 2; n++) await attack.once(app, tenant, prepared)
      expect(app.alive(), app.output().slice(-2000)).toBe(true)
    }, 60_000)
  })
})
