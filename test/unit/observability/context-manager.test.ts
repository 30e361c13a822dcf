/**
 * The SDK mode's context manager keeps the trace context in the request context's own
 * async-local storage (one storage, not two: functions/observability/context-manager.ts). Each
 * must survive the other being entered, across awaits and in callbacks bound to a span.
 */
import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { type RequestContext, requestContext } from '../../../functions/http/request-context'
import { FrameContextManager, LinkedContext } from '../../../functions/observability/context-manager'

const SPAN = createContextKey('test span')
const request = (requestId: string): RequestContext => ({ requestId, actor: () => undefined })
const tick = () => new Promise<void>((r) => setImmediate(r))

describe('one async-local storage for the request and the trace', () => {
  const cm = new FrameContextManager()

  it('a trace context entered inside a request keeps the request, across awaits, and leaves both as they were', async () => {
    await requestContext.run(request('r-1'), async () => {
      const seen = await cm.with(ROOT_CONTEXT.setValue(SPAN, 'server'), async () => {
        await tick()
        return { span: cm.active().getValue(SPAN), request: requestContext.current()?.requestId }
      })
      expect(seen).toEqual({ span: 'server', request: 'r-1' })
      expect(cm.active()).toBe(ROOT_CONTEXT)
      expect(requestContext.current()?.requestId).toBe('r-1')
    })
    expect(requestContext.current()).toBeUndefined()
  })

  it('a request entered inside a trace context keeps the trace', async () => {
    const seen = await cm.with(ROOT_CONTEXT.setValue(SPAN, 'caller'), () =>
      requestContext.run(request('r-2'), async () => {
        await tick()
        return { span: cm.active().getValue(SPAN), request: requestContext.current()?.requestId }
      }),
    )
    expect(seen).toEqual({ span: 'caller', request: 'r-2' })
  })

  it('a callback bound to a context runs in it and in the request it was bound in, wherever it fires', async () => {
    const bound = await requestContext.run(request('r-3'), async () =>
      cm.bind(ROOT_CONTEXT.setValue(SPAN, 'sandbox.run'), (x: number) => ({
        x,
        span: cm.active().getValue(SPAN),
        request: requestContext.current()?.requestId,
      })),
    )
    expect(cm.active().getValue(SPAN)).toBeUndefined()
    expect(bound(7)).toEqual({ x: 7, span: 'sandbox.run', request: 'r-3' })
  })
})

describe('LinkedContext: a span’s context is its parent plus one value', () => {
  const keys = Array.from({ length: 40 }, (_, i) => createContextKey(`key ${i}`))

  it('reads, overrides and deletes values as the API’s own context does, however long the chain (variants of length and order)', () => {
    for (const length of [1, 2, 15, 16, 17, 40]) {
      let ours = LinkedContext.over(ROOT_CONTEXT.setValue(keys[0], 'from the API'))
      let theirs = ROOT_CONTEXT.setValue(keys[0], 'from the API')
      for (let i = 0; i < length; i++) {
        // every third step deletes an earlier key, every fourth overrides one
        const key = keys[i % 3 === 2 ? i - 1 : i % 4 === 3 ? 0 : i + 1]
        if (i % 3 === 2) {
          ours = ours.deleteValue(key)
          theirs = theirs.deleteValue(key)
        } else {
          ours = ours.setValue(key, `value ${i}`)
          theirs = theirs.setValue(key, `value ${i}`)
        }
      }
      for (const key of keys) expect([length, ours.getValue(key)]).toEqual([length, theirs.getValue(key)])
    }
  })

  it('leaves its parent as it was', () => {
    const parent = LinkedContext.over(ROOT_CONTEXT).setValue(SPAN, 'server')
    parent.setValue(SPAN, 'tool')
    parent.deleteValue(SPAN)
    expect(parent.getValue(SPAN)).toBe('server')
  })
})
