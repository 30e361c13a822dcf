/**
 * Every attack class `npm run bench -- hostile` floods (test/hostile/attacks.ts) sends its request
 * and gets the answer its own check expects, through the bench's `node:http` client: a class whose
 * check has drifted from the app would otherwise be found only by a bench run, as a row of
 * "wrong answers". Counts only, never a timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ATTACK_CLASSES } from './attacks'
import { type HostileApp, startApp, warmUp } from './harness'
import { answered } from './rows/discovery'

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

describe('a flood checking an answer on its bytes as they arrive', () => {
  // each piece in one buffer the sender overwrites once `look` returns, as the bench's client does
  const inPieces =
    (status: number, ...pieces: string[]) =>
    async (look: (piece: Uint8Array) => void) => {
      const shared = Buffer.alloc(64)
      for (const p of pieces) {
        const n = shared.write(p)
        look(shared.subarray(0, n))
        shared.fill('#')
      }
      return status
    }

  it('finds what it expects even where two pieces split it, and counts every byte', async () => {
    expect(await answered(inPieces(200, '{"isEr', 'ror":false,', '"content":1}'), 'call', '{"isError":false,')).toBe(29)
  })

  it('refuses an answer carrying the refused text, split or whole, a status other than 200/201, or no expected text', async () => {
    await expect(answered(inPieces(200, '{"result":{', '"isError":t', 'rue}}'), 'mcp', '"result":{', '"isError":true')).rejects.toThrow(
      /"isError":true in the answer/,
    )
    await expect(answered(inPieces(500, '{"result":{}}'), 'mcp', '"result":{')).rejects.toThrow(/mcp: 500/)
    await expect(answered(inPieces(200, '{"isError":true,"content":1}'), 'call', '{"isError":false,')).rejects.toThrow(
      /no \{"isError":false,/,
    )
  })
})
