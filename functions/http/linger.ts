/**
 * Lingering close (as nginx's `lingering_close`) for an answer that leaves a request body unread
 * on @hono/node-server: a refusal written before a body of unknown length (chunked), or of a
 * declared length larger than any route takes, has arrived.
 *
 * Left to the adapter, such a body is drained for up to 500 ms or 64 MiB (its `drainIncoming`):
 * an unauthenticated client streaming a chunked body bought ~1 ms of the shared thread per MiB
 * (h11n5: 16 MiB with no token, 16 ms of main thread, 480 ms wall). Closing at once loses the
 * answer: a socket closed with unread data sends an RST, which discards the client's receive
 * buffer, the answer in it (19 of 20 clients). So the answer says `Connection: close`, the
 * socket is half-closed after it (FIN), what still arrives is read and dropped up to
 * `readBytes`, then reading stops (the TCP window closes and the client's sends block: no RST),
 * and the socket is destroyed when the client closes or after `lingerMs`.
 *
 * A body of declared length up to `drainDeclaredBytes` is drained as before and the connection
 * kept: draining 340 KB costs the main thread less than the client's new connection would
 * (h11n5: 0.35–0.6 ms vs 0.2–0.24 ms plus worse throughput), and never more than reading an
 * accepted body of that size. After a refusal (4xx/5xx) its rest is skipped by Node's parser
 * rather than copied into Buffers (./unread-body.ts).
 */
import { type IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { MAX_DOCUMENT_BYTES } from '../../lib/documents/ports'
import { skipUnreadBody } from './unread-body'

export interface LingerSettings {
  /** bytes read and dropped after the answer, before reading stops */
  readBytes: number
  /** how long a half-closed socket waits for its client to close before it is destroyed */
  lingerMs: number
  /** lingering sockets at once, per server: past it the oldest is destroyed */
  maxLingering: number
  /** a declared body up to this size is drained and its connection kept */
  drainDeclaredBytes: number
}

export const DEFAULT_LINGER: LingerSettings = {
  readBytes: 64 * 1024,
  lingerMs: 2_000,
  maxLingering: 256,
  // the largest body any route takes: a refused body costs no more to drain than an accepted one to read
  drainDeclaredBytes: MAX_DOCUMENT_BYTES,
}

/** A `ServerResponse` class for `http.createServer` (@hono/node-server's `serverOptions.ServerResponse`). */
export function lingeringResponse(settings: LingerSettings = DEFAULT_LINGER): LingeringResponseClass {
  // each lingering socket and its bytes read when its answer was out; insertion order: the oldest first
  const lingering = new Map<Socket, number>()
  const counted = { closedRead: 0, stopped: 0, skipped: 0 }
  // (Node's own type is generic over the request class; this one serves Node's IncomingMessage)
  return class LingeringResponse extends ServerResponse<IncomingMessage> {
    /** Sockets lingering now (counted for tests and the bound). */
    static lingering = () => lingering.size
    /** Bodies whose reading stopped at the budget (counted for tests). */
    static readStopped = () => counted.stopped
    /** Refused bodies whose rest the parser skipped (./unread-body.ts; counted for tests). */
    static bodiesSkipped = () => counted.skipped
    /** Bytes read after their answers by every socket that lingered (counted for tests). */
    static readWhileLingering = () => counted.closedRead + [...lingering].reduce((sum, [s, from]) => sum + s.bytesRead - from, 0)

    // Every head goes through here (Node's implicit head calls it too): the last moment the
    // connection's fate can still be said in the answer.
    override writeHead(...args: unknown[]): this {
      const socket = this.socket
      const req = this.req
      if (socket && !this.headersSent && leavesLongBodyUnread(req, settings.drainDeclaredBytes)) {
        // Node then writes `Connection: close` and calls `destroySoon` once the answer is out
        this.shouldKeepAlive = false
        dropUpTo(settings.readBytes, socket, req, counted)
        socket.destroySoon = () => linger(socket, settings, lingering, counted)
      } else if (socket && !this.headersSent && refusal(args[0], this.statusCode)) {
        // the rest of a body drained as before, but skipped by the parser rather than copied into Buffers
        if (skipUnreadBody(req)) counted.skipped++
      }
      return (super.writeHead as (...a: unknown[]) => this)(...args)
    }
  } as LingeringResponseClass
}

export type LingeringResponseClass = typeof ServerResponse & {
  lingering(): number
  readStopped(): number
  bodiesSkipped(): number
  readWhileLingering(): number
}

/** Only a refusal's body is skipped: a route that answers 2xx early may still read its request as it streams. */
const refusal = (status: unknown, fallback: number) => (typeof status === 'number' ? status : fallback) >= 400

function leavesLongBodyUnread(req: IncomingMessage, drainDeclaredBytes: number): boolean {
  if (req.complete) return false
  const declared = req.headers['content-length']
  if (declared !== undefined) return Number(declared) > drainDeclaredBytes
  return req.headers['transfer-encoding'] !== undefined
}

/**
 * Reads the rest of the body through the request, as Node's parser hands it over, and drops it;
 * at `budget` bytes the request is let go and the socket paused. Listened to on the request, not
 * the socket: the parser reads a socket itself, and a socket listener would take the bytes from
 * it (and a socket paused under the parser then never reads again).
 */
function dropUpTo(budget: number, socket: Socket, req: IncomingMessage, counted: { stopped: number }) {
  if (req.destroyed) return
  let dropped = 0
  const onData = (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped < budget) return
    req.off('data', onData)
    // Detached first, as Node's own stream destroyer ends a server request: destroyed while
    // attached it would destroy the socket, an RST. Destroyed, nothing asks the socket to read on.
    ;(req as { socket: unknown }).socket = null
    req.destroy()
    socket.pause()
    counted.stopped++
  }
  req.on('data', onData)
}

function linger(socket: Socket, s: LingerSettings, lingering: Map<Socket, number>, counted: { closedRead: number }) {
  if (socket.destroyed || lingering.has(socket)) return
  const from = socket.bytesRead
  lingering.set(socket, from)
  if (lingering.size > s.maxLingering) {
    const oldest = lingering.keys().next().value as Socket
    lingering.delete(oldest)
    oldest.destroy()
  }
  const timer = setTimeout(() => socket.destroy(), s.lingerMs)
  timer.unref()
  socket.once('close', () => {
    clearTimeout(timer)
    lingering.delete(socket)
    counted.closedRead += socket.bytesRead - from
  })
  // FIN once the answer is written; the socket closes when the client's FIN is read too
  socket.end()
}
