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

const DELETED = Symbol('deleted')
/** The key of a link that adds nothing (LinkedContext.over): no caller holds it, so no lookup matches it. */
const NOTHING = Symbol('nothing')
/** Past this many links a context is copied into the API's own (one map): a lookup walks at most this far. */
const MAX_LINKS = 16

/**
 * A context that is its parent plus one value. The API's own context copies its whole map and
 * makes three closures on every setValue; a span sets one value (itself) on its parent's context,
 * twice per tool call, so this is one small object instead. Lookups walk the links up to the first
 * context of another kind, at most MAX_LINKS.
 */
export class LinkedContext implements Context {
  private constructor(
    private readonly parent: Context,
    private readonly key: symbol,
    private readonly value: unknown,
    private readonly links: number,
  ) {}

  /** `parent` with `key` set to `value`: what parent.setValue(key, value) returns, without the copy. */
  static of(parent: Context, key: symbol, value: unknown): Context {
    const links = parent instanceof LinkedContext ? parent.links + 1 : 1
    if (links <= MAX_LINKS) return new LinkedContext(parent, key, value, links)
    return LinkedContext.flatten(parent).setValue(key, value)
  }

  /** `parent` itself if it is a LinkedContext, else one that adds nothing to it: its setValue links instead of copying. */
  static over(parent: Context): Context {
    return parent instanceof LinkedContext ? parent : new LinkedContext(parent, NOTHING, undefined, 1)
  }

  getValue(key: symbol): unknown {
    let c: Context = this
    while (c instanceof LinkedContext) {
      if (c.key === key) return c.value === DELETED ? undefined : c.value
      c = c.parent
    }
    return c.getValue(key)
  }

  setValue(key: symbol, value: unknown): Context {
    return LinkedContext.of(this, key, value)
  }

  deleteValue(key: symbol): Context {
    return LinkedContext.of(this, key, DELETED)
  }

  /** The same values in the API's own context, which a lookup does not walk. */
  private static flatten(context: Context): Context {
    const entries: [symbol, unknown][] = []
    let c = context
    while (c instanceof LinkedContext) {
      entries.push([c.key, c.value])
      c = c.parent
    }
    // oldest first, so a newer value of a key lands over an older one
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, value] = entries[i]
      c = value === DELETED ? c.deleteValue(key) : c.setValue(key, value)
    }
    return c
  }
}
