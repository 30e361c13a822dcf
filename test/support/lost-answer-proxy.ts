/**
 * A loopback HTTP proxy in front of a DynamoDB (dynalite) that loses answers: a request picked by
 * `lose` is forwarded and applied upstream, and then its answer never reaches the client — the
 * socket is reset, or left silent until the client's attempt timeout. That is what a dropped
 * connection or a stalled load balancer does to a write DynamoDB has already made; no real
 * component produces it on demand, so this one does, with the real dynalite behind it. `drop`
 * resets the socket without forwarding: a request that never reached the table.
 */
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export type LossMode = 'reset' | 'silence' | 'drop'

export interface ProxiedRequest {
  /** DynamoDB operation (X-Amz-Target without its prefix). */
  operation: string
  body: string
}

export interface LostAnswerProxy {
  endpoint: string
  /** Decides per request whether its answer is lost (it is applied upstream either way). */
  lose: (req: ProxiedRequest) => LossMode | undefined
  /** Requests forwarded, and those whose answers were lost. */
  forwarded: number
  lost: ProxiedRequest[]
  close(): Promise<void>
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'])
export const isWrite = (r: ProxiedRequest) => WRITES.has(r.operation)

/**
 * Loses the answer to the first attempt of each of the next `count` writes (a write's retry
 * carries the same body; it goes through).
 */
export function loseFirstAttempts(mode: LossMode, count = Infinity): (r: ProxiedRequest) => LossMode | undefined {
  const seen = new Set<string>()
  let left = count
  return (r) => {
    if (!isWrite(r) || left <= 0 || seen.has(r.body)) return undefined
    seen.add(r.body)
    left--
    return mode
  }
}

export async function startLostAnswerProxy(upstream: string): Promise<LostAnswerProxy> {
  const target = new URL(upstream)
  const sockets = new Set<Socket>()
  const proxy: LostAnswerProxy = {
    endpoint: '',
    lose: () => undefined,
    forwarded: 0,
    lost: [],
    close: async () => {},
  }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const operation =
        String(req.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? ''
      const seen: ProxiedRequest = { operation, body: body.toString('utf8') }
      const loss = proxy.lose(seen)
      if (loss === 'drop') {
        proxy.lost.push(seen)
        req.socket.resetAndDestroy()
        return
      }
      proxy.forwarded++
      const up = request(
        { hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (upRes) => {
          const answer: Buffer[] = []
          upRes.on('data', (c: Buffer) => answer.push(c))
          upRes.on('end', () => {
            if (loss) {
              // applied upstream; the client never hears of it
              proxy.lost.push(seen)
              if (loss === 'reset') req.socket.resetAndDestroy()
              return
            }
            res.writeHead(upRes.statusCode ?? 502, upRes.headers)
            res.end(Buffer.concat(answer))
          })
        },
      )
      up.on('error', () => req.socket.destroy())
      up.end(body)
    })
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy()
      server.close(() => r())
    })
  return proxy
}
