/**
 * Services whose code loads on first use. A composition root hands out `deferred(load)` in place
 * of a service: callers see the service's async methods, and the first call runs `load` (a dynamic
 * import that builds the service), later calls reuse what it built. A failed load is retried by
 * the next call rather than remembered.
 */

/** The methods of T that return promises: all a deferred service can offer before it exists. */
export type AsyncMethods<T> = {
  [K in keyof T as T[K] extends (...args: never[]) => Promise<unknown> ? K : never]: T[K]
}

export function deferred<T extends object>(load: () => Promise<T>): AsyncMethods<T> {
  const service = once(load)
  return new Proxy(Object.create(null) as object, {
    // not a thenable (`await deps.x` must not call it), and no symbol-keyed methods
    get: (_, prop) =>
      prop === 'then' || typeof prop === 'symbol'
        ? undefined
        : (...args: unknown[]) => service().then((s) => (s as Record<string, (...a: unknown[]) => unknown>)[prop](...args)),
  }) as AsyncMethods<T>
}

/** One lazily built value for several deferred services (they share one load). */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined
  return () => {
    if (!loading) {
      loading = load()
      loading.catch(() => (loading = undefined))
    }
    return loading
  }
}
