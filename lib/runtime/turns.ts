/**
 * Where long tenant work lets other work run between its slices (JSON parsed in slices, an
 * OpenAPI pack expanded, patterns compiled): every such yield in lib goes through `nextTurn`, so
 * the composition root can make a slice of a held tenant's request wait for a lighter tenant's
 * request to end (the fair-share gate, lib/runtime/fair-gate.ts `pause`). lib knows no request:
 * the waiter is a port the composition root sets once, and it finds the current request itself
 * (functions/http/fair-share.ts reads it from the request context).
 */

/** What a yield also waits for: undefined to go on after the turn, or a promise (bounded by whoever returns it). */
export type TurnWait = () => Promise<void> | undefined

let turnWait: TurnWait | undefined

/** Sets the port every `nextTurn` consults (undefined: none). */
export function useTurnWait(wait: TurnWait | undefined): void {
  turnWait = wait
}

/** One turn of the event loop (setImmediate: other requests' I/O runs first), then what the port says to wait for. */
export async function nextTurn(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve))
  const wait = turnWait?.()
  if (wait) await wait
}
