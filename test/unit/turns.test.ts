/**
 * The yield port of long tenant work (lib/runtime/turns.ts): every slice boundary of a sliced
 * JSON parse goes through it, so what the composition root sets there (the fair-share gate's
 * pause) is consulted at each, and a slice waits as long as the port says.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { parseJsonInSlices } from '../../lib/config/json-slices'
import { nextTurn, useTurnWait } from '../../lib/runtime/turns'

afterEach(() => useTurnWait(undefined))

describe('the turn port', () => {
  it('asks the port at every slice boundary of a sliced JSON parse and waits for what it returns', async () => {
    let asked = 0
    let open!: () => void
    const gate = new Promise<void>((r) => (open = r))
    useTurnWait(() => (++asked === 2 ? gate : undefined))
    const text = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => `item-${i}`))
    let done = false
    const parse = parseJsonInSlices(text, { sliceChars: 16_384 }).then((r) => {
      done = true
      return r
    })
    for (let i = 0; i < 20 && asked < 2; i++) await nextTurnUnported()
    expect(asked).toBe(2)
    for (let i = 0; i < 5; i++) await nextTurnUnported()
    expect(done).toBe(false) // held at the second boundary
    open()
    const result = await parse
    expect(result.ok).toBe(true)
    // one question per slice boundary: ~280 KB of text in 16 KiB slices
    expect(asked).toBeGreaterThanOrEqual(Math.floor(text.length / 16_384) - 1)
  })

  it('goes on after the turn when no port is set', async () => {
    await expect(nextTurn()).resolves.toBeUndefined()
  })
})

/** A turn of the loop that does not consult the port (the test's own waiting). */
const nextTurnUnported = () => new Promise<void>((r) => setImmediate(r))
