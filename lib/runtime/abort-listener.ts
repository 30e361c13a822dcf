/**
 * An abort listener that lets go of what it would run once it is removed.
 *
 * Node allocates an EventTarget's listener records where it has seen them live long (V8
 * pretenures the allocation site: sockets and servers keep theirs for hours), so a record made
 * for one call is often in the old generation from birth. Removing it unlinks it from its
 * signal, but until the next full collection the dead record still points at its callback, and a
 * young-generation collection treats every old-to-young pointer as live: whatever the callback's
 * closure reached — a sandbox run, its host tools, the whole request — was copied and promoted
 * on every collection. Measured under `npm start`: 12 KB a call of `execute_javascript`, mean
 * scavenge pause 8.8 against 3.4 ms without the listener (docs/decisions.md, session 14). Here
 * the record reaches only a holder that the remover empties.
 */
export function onAbort(signal: AbortSignal, run: () => void): () => void {
  const holder: { run?: () => void } = { run }
  const listener = () => holder.run?.()
  signal.addEventListener('abort', listener, { once: true })
  return () => {
    holder.run = undefined
    signal.removeEventListener('abort', listener)
  }
}
