/**
 * The rest of a refused request body, skipped by Node's HTTP parser instead of drained through
 * JavaScript (issue 21 N5, h12n5). An answer written before its body arrived (a spawn past its
 * rate, a body refused while it streams, a 401 with a body) leaves the rest to be read so the
 * connection can carry the next request. Left to Node and @hono/node-server, each piece of it is
 * copied into a new Buffer, pushed through the request's stream and dropped: for a flood of 340 KB
 * refused spawns, ~330 KB of Buffers an attack, counted by V8 as external memory, which starts its
 * mark-compacts.
 *
 * Node's parser calls its `kOnBody` slot for each piece of a body, and copies the piece into a
 * Buffer only when that slot holds a function. So for the rest of a refused body the slot is
 * emptied: the parser still reads and frames the bytes (the connection stays usable), and hands
 * none of them to JavaScript. The slot is given back when the message completes — inside the
 * parser's own callback, before it parses a byte of the next request — or when the socket
 * closes, since a parser is reused for another connection. Slots read from the parser's class
 * (`HTTPParser.kOnBody`), not hard-coded; a parser of another shape is left to drain as before.
 */
import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

type ParserSlots = Record<number, unknown> & {
  incoming?: unknown
  constructor: { kOnBody?: unknown; kOnMessageComplete?: unknown }
}

/**
 * Skips what is left of `req`'s body when nothing reads it; false when there is nothing to skip
 * (the body is whole, someone reads it, or the parser is not one this knows).
 */
export function skipUnreadBody(req: IncomingMessage): boolean {
  const socket = req.socket as (Socket & { parser?: ParserSlots | null }) | null
  const parser = socket?.parser
  if (!socket || !parser || parser.incoming !== req) return false
  if (req.complete || req.destroyed || req.listenerCount('data') > 0 || req.listenerCount('readable') > 0) return false
  const { kOnBody, kOnMessageComplete } = parser.constructor
  if (typeof kOnBody !== 'number' || typeof kOnMessageComplete !== 'number') return false
  const onBody = parser[kOnBody]
  const onComplete = parser[kOnMessageComplete]
  if (typeof onBody !== 'function' || typeof onComplete !== 'function') return false
  const giveBack = () => {
    socket.off('close', giveBack)
    if (parser[kOnMessageComplete] !== completed) return
    parser[kOnBody] = onBody
    parser[kOnMessageComplete] = onComplete
  }
  const completed = function (this: unknown, ...args: unknown[]) {
    giveBack()
    return onComplete.apply(this, args)
  }
  parser[kOnBody] = undefined
  parser[kOnMessageComplete] = completed
  socket.once('close', giveBack)
  return true
}
