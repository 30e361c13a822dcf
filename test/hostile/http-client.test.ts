/**
 * The bench's scanning client (test/hostile/http-client.ts, `rawScanClient`) against a real
 * `node:http` server on 127.0.0.1: its own HTTP/1.1 parser reads into one buffer per connection, so
 * what it hands over must be every byte of the body, in order, each piece whole while `look` runs.
 */
import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rawScanClient } from './http-client'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

describe('the bench client that scans answers as they arrive', () => {
  let server: http.Server
  let base: string
  let handler: Handler = (_, res) => res.end()
  const client = rawScanClient()

  beforeAll(async () => {
    server = http.createServer((req, res) => handler(req, res))
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    client.close()
    server.closeAllConnections()
    await new Promise((r) => server.close(r))
  })

  /** Every piece's bytes hashed while `look` runs, and how many pieces came. */
  const hashing = () => {
    const hash = createHash('sha256')
    let pieces = 0
    let bytes = 0
    return {
      look: (piece: Uint8Array) => {
        hash.update(piece)
        pieces++
        bytes += piece.byteLength
      },
      done: () => ({ sha: hash.digest('hex'), pieces, bytes }),
    }
  }
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')

  it('hands over every byte of a chunked answer of 3 MB in order, in many pieces read into the same buffer', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024)
    for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 13)) & 0xff
    handler = (_, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      // uneven writes, so chunk framing falls anywhere in the client's reads
      let at = 0
      for (const size of [1, 2, 17, 65_537, 300_001]) {
        res.write(body.subarray(at, at + size))
        at += size
      }
      res.end(body.subarray(at))
    }
    const h = hashing()
    expect(await client(`${base}/big`, {}, h.look)).toBe(200)
    const got = h.done()
    expect(got.bytes).toBe(body.length)
    expect(got.sha).toBe(sha(body))
    expect(got.pieces).toBeGreaterThan(6)
  })

  it('reads an answer of a content-length, sends the request body, and keeps the connection for the next request', async () => {
    const seen: string[] = []
    const ports = new Set<number | undefined>()
    handler = (req, res) => {
      const parts: Buffer[] = []
      req.on('data', (c) => parts.push(c))
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers['x-test']} ${Buffer.concat(parts).toString()}`)
        ports.add(req.socket.remotePort)
        res.writeHead(201, { 'content-length': '5' }).end('hello')
      })
    }
    for (const n of [1, 2, 3]) {
      const h = hashing()
      expect(await client(`${base}/p?n=${n}`, { method: 'POST', headers: { 'x-test': 'yes' }, body: `body ${n}` }, h.look)).toBe(201)
      expect(h.done()).toMatchObject({ bytes: 5, sha: sha(Buffer.from('hello')) })
    }
    expect(seen).toEqual(['POST /p?n=1 yes body 1', 'POST /p?n=2 yes body 2', 'POST /p?n=3 yes body 3'])
    expect(ports.size).toBe(1)
  })

  it('answers a 204 and a head-only error without a body, and an answer ending with the connection', async () => {
    handler = (req, res) => {
      if (req.url === '/none') res.writeHead(204).end()
      else if (req.url === '/closing') {
        // no length, no chunking: the body is what comes until the server closes
        res.socket?.write('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end')
        res.socket?.end()
      } else res.writeHead(404, { 'content-length': '0' }).end()
    }
    const none = hashing()
    expect(await client(`${base}/none`, {}, none.look)).toBe(204)
    expect(none.done().bytes).toBe(0)
    const missing = hashing()
    expect(await client(`${base}/missing`, {}, missing.look)).toBe(404)
    expect(missing.done().bytes).toBe(0)
    const closing = hashing()
    expect(await client(`${base}/closing`, {}, closing.look)).toBe(200)
    expect(closing.done()).toMatchObject({ sha: sha(Buffer.from('until the end')) })
  })

  it('rejects when `look` throws, and the next request goes out on a new connection', async () => {
    handler = (_, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000))
    await expect(
      client(`${base}/a`, {}, () => {
        throw new Error('refused text in the answer')
      }),
    ).rejects.toThrow('refused text in the answer')
    const h = hashing()
    expect(await client(`${base}/b`, {}, h.look)).toBe(200)
    expect(h.done().bytes).toBe(100_000)
  })

  it('sends again on a new connection when a kept one was closed by the server before answering', async () => {
    handler = (_, res) => res.writeHead(200, { 'content-length': '2' }).end('ok')
    expect(await client(`${base}/first`, {}, () => {})).toBe(200)
    // the server drops its idle kept-alive connections, as its keep-alive timeout would
    server.closeIdleConnections()
    await new Promise((r) => setTimeout(r, 50))
    const h = hashing()
    expect(await client(`${base}/second`, {}, h.look)).toBe(200)
    expect(h.done().bytes).toBe(2)
  })

  it('refuses an answer that is not HTTP/1.x and one whose chunk framing is broken', async () => {
    handler = (req, res) => {
      if (req.url === '/garbage') res.socket?.end('SSH-2.0-nope\r\n\r\n')
      else res.socket?.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n')
    }
    await expect(client(`${base}/garbage`, {}, () => {})).rejects.toThrow(/not an HTTP\/1.x status line/)
    await expect(client(`${base}/framing`, {}, () => {})).rejects.toThrow(/a chunk size that is not one/)
  })
})
