/**
 * NodeConnector against real servers on 127.0.0.1 only. Host names are mapped to 127.0.0.1 by an
 * injected resolver, so no test here asks DNS or leaves the loopback interface.
 * The TLS fixture is a self-signed certificate for `api.test` (test/unit/egress/fixtures).
 */
import { readFileSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AllowList } from '../../../lib/egress/allow-list'
import { EgressClient } from '../../../lib/egress/client'
import { NodeConnector } from '../../../lib/egress/connector'
import { EgressError } from '../../../lib/egress/errors'

const cert = readFileSync(new URL('./fixtures/api-test.cert.pem', import.meta.url), 'utf8')
const key = readFileSync(new URL('./fixtures/api-test.key.pem', import.meta.url), 'utf8')

const seen: { host?: string; method?: string; body: string; servername?: string }[] = []

function handler(req: http.IncomingMessage, res: http.ServerResponse) {
  let body = ''
  req.on('data', (c) => (body += c))
  req.on('end', () => {
    seen.push({ host: req.headers.host, method: req.method, body, servername: (req.socket as { servername?: string }).servername })
    const url = new URL(req.url ?? '/', 'http://x')
    switch (url.pathname) {
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5000' })
        res.end('x'.repeat(5000))
        return
      case '/chunked-big':
        res.writeHead(200, { 'content-type': 'text/plain' })
        for (let i = 0; i < 10; i++) res.write('y'.repeat(1000))
        res.end()
        return
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        res.end(gzipSync('hello, compressed world'))
        return
      case '/gzip-bomb':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
        res.end(gzipSync(Buffer.alloc(10_000_000)))
        return
      case '/cut':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' })
        res.write('partial')
        setTimeout(() => res.socket?.destroy(), 10)
        return
      default:
        res.writeHead(200, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] })
        res.end(JSON.stringify({ path: url.pathname }))
    }
  })
}

let plain: http.Server
let secure: https.Server
let plainPort: number
let securePort: number
let closedPort: number
const connector = new NodeConnector({ ca: cert })

const egress = new EgressClient({
  allow: AllowList.of({ cidrs: ['127.0.0.1/32'] }),
  resolver: {
    resolve: async (h) =>
      h === 'api.test' || h === 'other.test' ? [{ address: '127.0.0.1', family: 4 }] : Promise.reject(new Error('no DNS in tests')),
  },
  connector,
})

const listen = (server: http.Server | https.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))

beforeAll(async () => {
  plain = http.createServer(handler)
  secure = https.createServer({ cert, key }, handler)
  plainPort = await listen(plain)
  securePort = await listen(secure)
  const spare = http.createServer()
  closedPort = await listen(spare)
  await new Promise((r) => spare.close(r))
})

afterAll(async () => {
  connector.close()
  plain.closeAllConnections()
  secure.closeAllConnections()
  await new Promise((r) => plain.close(r))
  await new Promise((r) => secure.close(r))
})

async function failure(p: Promise<unknown>): Promise<EgressError> {
  const e = await p.then(
    () => undefined,
    (err) => err,
  )
  expect(e).toBeInstanceOf(EgressError)
  return e as EgressError
}

describe('NodeConnector', () => {
  it('connects to the pinned address and sends the requested host in the Host header', async () => {
    const res = await egress.request({
      tenant: 't',
      url: `http://api.test:${plainPort}/hello`,
      method: 'POST',
      body: 'abc',
      headers: { Host: 'forged.example' },
    })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json')
    expect(res.headers['x-multi']).toBe('a, b')
    expect(JSON.parse(res.body.toString())).toEqual({ path: '/hello' })
    expect(seen.at(-1)).toMatchObject({ host: `api.test:${plainPort}`, method: 'POST', body: 'abc' })
  })

  it('verifies TLS against the host name while connecting to the pinned address', async () => {
    const res = await egress.request({ tenant: 't', url: `https://api.test:${securePort}/tls` })
    expect(JSON.parse(res.body.toString())).toEqual({ path: '/tls' })
    expect(seen.at(-1)?.servername).toBe('api.test')
  })

  it('fails TLS when the certificate does not name the host', async () => {
    const e = await failure(egress.request({ tenant: 't', url: `https://other.test:${securePort}/tls` }))
    expect(e.reason).toBe('network')
    expect(e.message).toMatch(/TLS failed|ERR_TLS_CERT_ALTNAME_INVALID/)
  })

  it('refuses a body whose declared length exceeds the cap before reading it', async () => {
    const e = await failure(egress.request({ tenant: 't', url: `http://api.test:${plainPort}/big`, maxBytes: 1000 }))
    expect(e).toMatchObject({ reason: 'too-large', code: 'TOO_LARGE' })
  })

  it('stops reading a chunked body once it passes the cap', async () => {
    const e = await failure(egress.request({ tenant: 't', url: `http://api.test:${plainPort}/chunked-big`, maxBytes: 2500 }))
    expect(e.reason).toBe('too-large')
  })

  it('decodes gzip and counts the cap on decoded bytes', async () => {
    const res = await egress.request({ tenant: 't', url: `http://api.test:${plainPort}/gzip` })
    expect(res.body.toString()).toBe('hello, compressed world')
    const e = await failure(egress.request({ tenant: 't', url: `http://api.test:${plainPort}/gzip-bomb`, maxBytes: 100_000 }))
    expect(e.reason).toBe('too-large')
  })

  it('reports a connection closed mid-body', async () => {
    const e = await failure(egress.request({ tenant: 't', url: `http://api.test:${plainPort}/cut` }))
    expect(e.reason).toBe('network')
  })

  it('reports a refused connection without naming the address', async () => {
    const e = await failure(egress.request({ tenant: 't', url: `http://api.test:${closedPort}/` }))
    expect(e.reason).toBe('network')
    expect(e.message).toContain('ECONNREFUSED')
    expect(e.message).not.toContain('127.0.0.1')
  })
})
