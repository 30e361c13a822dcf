/**
 * The fair-share gate at the HTTP edge (lib/runtime/fair-gate.ts): after authentication, so a
 * request is charged to the tenant its token proves, and before any body is read, so a held
 * request holds only its headers. Its place is released when its answer is written and its body
 * received (see `afterBoth`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Context, MiddlewareHandler } from 'hono'
import { ServerToolsError } from '../../lib/errors'
import type { FairGate, Release } from '../../lib/runtime/fair-gate'
import { useTurnWait } from '../../lib/runtime/turns'
import type { AuthEnv } from './auth'
import { headerOf } from './headers'
import { requestContext } from './request-context'

export function fairShare(gate: FairGate | undefined): MiddlewareHandler<AuthEnv> {
  if (!gate) return (_, next) => next()
  // every yield of long work in lib asks the request it runs for (one port for the process; each
  // request's context names its own gate, so apps side by side in one process do not mix)
  useTurnWait(currentTurnWait)
  return async (c, next) => {
    const tenant = c.get('principal').tenant
    const entry = gate.enter(tenant)
    // @hono/node-server hands the Node request and response over (Lambda and app.request do not)
    const node = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined
    let release: Release | undefined
    if (typeof entry === 'function') release = entry
    else {
      // the response closing before the answer is the client going away
      const outgoing = node?.outgoing
      const gone = () => entry.cancel()
      outgoing?.once('close', gone)
      try {
        release = await entry.admitted
      } finally {
        outgoing?.off('close', gone)
      }
      // nobody reads this answer: the connection is closed
      if (!release) throw new ServerToolsError('OVERLOADED', 'the client went away while its request waited for its share of the server')
    }
    const context = requestContext.current()
    // a pause that lasted all of maxHoldMs waited on a lighter request that is slow, not busy: this
    // request pauses no more, so its added time is one maxHoldMs plus the lighter calls it let go first
    let pausing = true
    if (context)
      context.turnWait = () =>
        pausing
          ? gate.pause(tenant)?.then((full) => {
              if (full) pausing = false
            })
          : undefined
    try {
      await next()
    } finally {
      // an event stream (MCP) stays open as long as the client listens: only its start is the request's work
      const streaming = mayStream(c) && (c.res.headers.get('content-type')?.startsWith('text/event-stream') ?? false)
      afterBoth(node, release, streaming)
    }
  }
}

/**
 * Whether the answer can be an event stream: only to a request whose Accept lists one (the MCP
 * endpoints and the SDK's transport answer with a stream only then, else JSON or a 406). Every
 * other answer's headers are not read: on @hono/node-server a `c.json` answer keeps its headers
 * as a plain object until something asks, and `c.res.headers` builds a web `Headers` from it
 * (then the adapter walks that instead of the object): ~2 % of a tool call's CPU over HTTP.
 */
const mayStream = (c: Context) => EVENT_STREAM.test(headerOf(c, 'accept') ?? '')
const EVENT_STREAM = /text\/event-stream/i

const currentTurnWait = () => requestContext.current()?.turnWait?.()

/**
 * Calls `release` once the response is written and the body received (at once off the node
 * server): the write and the drain are the request's work too, and a tenant whose requests are
 * answered before their bodies arrive would otherwise have any number of them arriving at once.
 */
function afterBoth(node: { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined, release: Release, streaming: boolean) {
  let pending = 1
  const one = () => {
    if (--pending === 0) release()
  }
  const wait = (emitter: IncomingMessage | ServerResponse, done: boolean, event: 'end' | 'finish', socket?: Socket | null) => {
    if (done || emitter.destroyed) return
    pending++
    let once = false
    const fire = () => {
      if (once) return
      once = true
      emitter.off(event, fire)
      emitter.off('close', fire)
      socket?.off('close', fire)
      one()
    }
    emitter.once(event, fire)
    emitter.once('close', fire)
    // A body whose answer was already written is neither ended nor destroyed by Node when its
    // connection closes (the server let go of it with the answer): without the socket's close, a
    // request answered before its body and then cut off (a refusal that closes the connection, a
    // client that gives up its upload) would hold its tenant's place for ever.
    socket?.once('close', fire)
  }
  if (node?.incoming) wait(node.incoming, node.incoming.complete, 'end', node.incoming.socket)
  if (node?.outgoing && !streaming) wait(node.outgoing, node.outgoing.writableFinished, 'finish')
  one()
}
