/**
 * A JSON answer that may be large (a tool call's content, a layer export): within one slice it
 * is `c.json`; longer, it is streamed, each piece rendered only when the connection has taken the
 * one before and after a turn of the event loop (lib/config/json-render.ts: issue 21 D2, D3).
 * The bytes are exactly those `c.json` would send; only the framing differs (chunked, no
 * content-length).
 */
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { jsonBytes, WORK_BUDGETS, yieldToEventLoop } from '../../lib/config/expansion-budget'
import { jsonPieces } from '../../lib/config/json-render'
import { asyncFrames } from './request-context'

const SLICE = WORK_BUDGETS.jsonRenderSlice.limit

export function jsonAnswer(c: Context, value: unknown, status: ContentfulStatusCode = 200): Response {
  if (jsonBytes(value, SLICE) <= SLICE) return c.json(value as object, status)
  return c.body(jsonStream(value), status, { 'content-type': 'application/json' })
}

/** The same for a route that builds its Response itself (the MCP endpoint): the text whole within a slice, else streamed. */
export function jsonBody(value: unknown): string | ReadableStream<Uint8Array> {
  return jsonBytes(value, SLICE) <= SLICE ? JSON.stringify(value) : jsonStream(value)
}

function jsonStream(value: unknown): ReadableStream<Uint8Array> {
  const pieces = jsonPieces(value, SLICE)
  // The server pulls the pieces after the handler has returned, outside the request's async
  // context: the turn between two pieces runs in it again, so it is the request's own (the
  // fair-share gate pauses a held tenant's answer there while a lighter tenant's request runs).
  const frame = asyncFrames.current()
  const turn = () => (frame ? asyncFrames.run(frame, yieldToEventLoop) : yieldToEventLoop())
  let first = true
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // the first piece goes out in the handler's own turn; each later one waits for a turn of the loop
        if (!first) await turn()
        first = false
        const next = pieces.next()
        if (next.done) controller.close()
        else controller.enqueue(next.value)
      },
      cancel() {
        pieces.return(undefined)
      },
    },
    // nothing rendered ahead of what the connection takes
    { highWaterMark: 0 },
  )
}
