/**
 * The OpenTelemetry context manager the SDK mode registers: the trace context lives in the one
 * AsyncLocalStorage the request context already uses (functions/http/request-context.ts), instead
 * of a second one of the SDK's own. Under async hooks each enabled storage copies its value onto
 * every promise the process creates; the second storage cost more per tool call than the spans
 * themselves (bench/observability.ts, docs/operations/observability.md).
 *
 * Functions only: `bind` on an event emitter returns it unchanged (nothing in the service binds one).
 */
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api'
import { asyncFrames } from '../http/request-context'

export class FrameContextManager implements ContextManager {
  active(): Context {
    return (asyncFrames.current()?.trace as Context | undefined) ?? ROOT_CONTEXT
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const request = asyncFrames.current()?.request
    return asyncFrames.run({ request, trace: context }, () => fn.apply(thisArg, args))
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target
    // the request's context is captured with the trace's: a bound callback fires outside both
    const request = asyncFrames.current()?.request
    const fn = target as (...args: unknown[]) => unknown
    return function (this: unknown, ...args: unknown[]) {
      return asyncFrames.run({ request, trace: context }, () => fn.apply(this, args))
    } as T
  }

  enable(): this {
    return this
  }

  disable(): this {
    return this
  }
}
