/**
 * A request's abort signal, made when something first asks for it. Every tool call carries its
 * request's signal, and most (a `whoami`, a document read) finish without any tool listening:
 * an `AbortController` and a close listener per request were ~3 % of a tool call's CPU over HTTP
 * (bench/usage profiles). The dispatcher and sibling calls pass this along; a tool reading
 * `ctx.signal` gets a real `AbortSignal`, already aborted when the caller left before it asked.
 */
export class DeferredSignal {
  #made: AbortSignal | undefined

  /**
   * `left()`: whether the caller has gone already (asked while nothing is made); `make()`: the
   * signal, called at most once, that aborts when the caller goes from then on.
   */
  constructor(
    private readonly left: () => boolean,
    private readonly make: () => AbortSignal,
  ) {}

  get aborted(): boolean {
    return this.#made ? this.#made.aborted : this.left()
  }

  get signal(): AbortSignal {
    this.#made ??= this.make()
    return this.#made
  }
}

/** A signal as a call carries it: a real one, or one made on first use. */
export type CallSignal = AbortSignal | DeferredSignal

/** The real signal behind a call's (made now if it is deferred). */
export const signalOf = (s: CallSignal | undefined): AbortSignal | undefined => (s instanceof DeferredSignal ? s.signal : s)
