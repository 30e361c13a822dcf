/** Request headers, read the same way in every route and middleware. */
import type { IncomingMessage } from 'node:http'
import type { Context } from 'hono'

/**
 * A request header, as `Headers.get` answers it (case-insensitive, repeated fields joined by
 * `, `). On @hono/node-server it is read from the Node request's raw header list: `c.req.header`
 * there builds a whole web `Headers` on first use, validating every field, which cost a tool call
 * ~16 µs of CPU over HTTP, more than any single step of the call (bench/usage). Every route reads
 * headers through this (test/architecture/dependencies.test.ts keeps `c.req.header` out of the
 * HTTP layer). Elsewhere (Lambda, app.request) the Request is real and its own headers answer.
 */
export function headerOf(c: Context, name: string): string | undefined {
  const raw = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.rawHeaders
  if (!raw) return c.req.header(name)
  const wanted = name.toLowerCase()
  let value: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i]
    // as the adapter does: HTTP/2 pseudo-headers (`:path`) are not headers
    if (key.length !== wanted.length || key.charCodeAt(0) === 58 || key.toLowerCase() !== wanted) continue
    value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`
  }
  return value
}
