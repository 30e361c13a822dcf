/** An OTLP/HTTP receiver on 127.0.0.1 for exporter tests: keeps the bodies posted to /v1/traces. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface OtlpReceiver {
  server: http.Server
  /** The trace export bodies received, as text, in arrival order. */
  traces: string[]
  /** `http://127.0.0.1:<port>`, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  base: string
  close(): Promise<void>
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const traces: string[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/v1/traces') traces.push(Buffer.concat(chunks).toString('utf8'))
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { server, traces, base, close: () => new Promise<void>((r) => server.close(() => r())) }
}
