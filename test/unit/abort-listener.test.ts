/**
 * onAbort (lib/runtime/abort-listener.ts): a listener record that outlives its removal — V8 keeps
 * a dead old-generation record until the next full collection, and a young-generation collection
 * treats it as live — must not keep what the callback would have reached. The test holds the
 * registered function as that record would, and counts what a full collection frees.
 */
import { describe, expect, it } from 'vitest'
import { onAbort } from '../../lib/runtime/abort-listener'
import { fullGc } from '../support/gc'

/** A signal that remembers every listener it was given, as a dead record would. */
function recordingSignal() {
  const controller = new AbortController()
  const records: unknown[] = []
  const add = controller.signal.addEventListener.bind(controller.signal)
  controller.signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => {
    records.push(args[1])
    add(...args)
  }) as AbortSignal['addEventListener']
  return { controller, records }
}

describe('an abort listener', () => {
  it('runs once when the signal aborts', () => {
    const { controller } = recordingSignal()
    let runs = 0
    onAbort(controller.signal, () => runs++)
    controller.abort()
    controller.abort()
    expect(runs).toBe(1)
  })

  it('runs nothing once removed, though the signal aborts later', () => {
    const { controller } = recordingSignal()
    let runs = 0
    const stop = onAbort(controller.signal, () => runs++)
    stop()
    controller.abort()
    expect(runs).toBe(0)
  })

  it('lets go of what its callback reaches once removed, while a record of it is still held', async () => {
    const { controller, records } = recordingSignal()
    const reached: WeakRef<object>[] = []
    // in a function of its own, so no register of the test's frame still points at a request
    const register = () => {
      const request = { body: new Array(1000).fill('x') }
      reached.push(new WeakRef(request))
      return onAbort(controller.signal, () => void request.body.length)
    }
    const stops = [register(), register(), register()]
    for (const stop of stops) stop()
    await new Promise((r) => setImmediate(r))
    fullGc()
    expect(records).toHaveLength(3)
    expect(reached.filter((r) => r.deref() !== undefined)).toHaveLength(0)
  })
})
