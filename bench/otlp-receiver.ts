/**
 * The OTLP/HTTP receiver of bench/observability.ts: answers every post as a collector does (an
 * empty ExportTraceServiceResponse) and counts the requests, bytes and spans it got — the spans
 * by walking each protobuf body down to them, or in a JSON one by their start times.
 *
 * The bench runs it in a child process of its own, as a deployment's collector is another process
 * (its CPU is then not the service's), and in the bench's own process for the reference figure.
 * As a child (BENCH_OTLP_RECEIVER_CHILD=http/protobuf|http/json) it sends `{ endpoint }` once
 * listening, and its counts in answer to each `'count'` message.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  requests: number
  bytes: number
  spans: number
}

export async function listenOtlp(json: boolean): Promise<{ endpoint: string; received: Received; close(): Promise<void> }> {
  const received: Received = { requests: 0, bytes: 0, spans: 0 }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      received.requests++
      received.bytes += body.length
      if (req.url === '/v1/traces') received.spans += spansIn(body, json)
      // an empty ExportTraceServiceResponse: no bytes in protobuf, {} in JSON
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  }
}

/** Reads a varint at `at` of `buf`: [value, next position]. */
function varint(buf: Buffer, at: number): [number, number] {
  let v = 0
  let scale = 1
  for (;;) {
    const b = buf[at++]
    v += (b & 127) * scale
    if (b < 128) return [v, at]
    scale *= 128
  }
}

/** Calls `fn` with the bounds of each length-delimited field `field` of the message in buf[from, to); skips every other field. */
function eachField(buf: Buffer, from: number, to: number, field: number, fn: (start: number, end: number) => void) {
  let at = from
  while (at < to) {
    const [tag, next] = varint(buf, at)
    at = next
    const wire = tag & 7
    if (wire === 0) at = varint(buf, at)[1]
    else if (wire === 1) at += 8
    else if (wire === 5) at += 4
    else if (wire === 2) {
      const [length, start] = varint(buf, at)
      at = start + length
      if (tag >>> 3 === field) fn(start, at)
    } else throw new Error(`OTLP body: wire type ${wire}`)
  }
}

/** Spans in an OTLP/HTTP traces body: ExportTraceServiceRequest → ResourceSpans (1) → ScopeSpans (2) → Span (2). */
function spansIn(body: Buffer, json: boolean): number {
  if (json) return body.toString('utf8').split('"startTimeUnixNano"').length - 1
  let n = 0
  eachField(body, 0, body.length, 1, (a, b) =>
    eachField(body, a, b, 2, (c, d) =>
      eachField(body, c, d, 2, () => {
        n++
      }),
    ),
  )
  return n
}

const child = process.env.BENCH_OTLP_RECEIVER_CHILD
if (child && process.send) {
  const { endpoint, received } = await listenOtlp(child === 'http/json')
  process.send({ endpoint })
  process.on('message', (m) => {
    if (m === 'count') process.send?.({ received })
  })
  // the bench ended (or died): so does its collector
  process.on('disconnect', () => process.exit(0))
}
