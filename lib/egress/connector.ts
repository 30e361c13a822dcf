/**
 * The connector sends one HTTP exchange to an address the guard has already checked.
 * `NodeConnector` connects by IP (so nothing re-resolves the name) and sends the original host
 * in `Host` and as TLS SNI/certificate identity; tests inject a connector that only records.
 */
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { Transform } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { parseAddress } from './address'
import { normalizeHost } from './allow-list'
import { EgressError } from './errors'

export interface PinnedRequest {
  /** The URL as requested: its host goes into `Host` and TLS servername. */
  url: URL
  /** The checked address to connect to, and its family. */
  address: string
  family: 4 | 6
  port: number
  method: string
  headers: Record<string, string>
  body?: Buffer
  /** Largest (decoded) body to accept. */
  maxBytes: number
  signal: AbortSignal
}

export interface ConnectorResponse {
  status: number
  statusText: string
  /** Lowercase names; repeated headers joined with ", ". */
  headers: Record<string, string>
  body: Buffer
}

export interface Connector {
  send(req: PinnedRequest): Promise<ConnectorResponse>
}

/** A `lookup` that can only ever answer the pinned address (defence in depth: we connect by IP). */
export function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }])
    else callback(null, address, family)
  }) as unknown as LookupFunction
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
])

export interface NodeConnectorOptions {
  /** Reuse connections (per address, port and servername). Default true. */
  keepAlive?: boolean
  /** Extra CA certificates (PEM), e.g. for a corporate proxy or a test server. */
  ca?: string | string[]
}

export class NodeConnector implements Connector {
  private readonly httpAgent: http.Agent
  private readonly httpsAgent: https.Agent

  constructor(opts: NodeConnectorOptions = {}) {
    const keepAlive = opts.keepAlive ?? true
    this.httpAgent = new http.Agent({ keepAlive, maxSockets: 64 })
    this.httpsAgent = new https.Agent({ keepAlive, maxSockets: 64, ...(opts.ca ? { ca: opts.ca } : {}) })
  }

  /** Closes pooled connections (tests, graceful shutdown). */
  close() {
    this.httpAgent.destroy()
    this.httpsAgent.destroy()
  }

  send(req: PinnedRequest): Promise<ConnectorResponse> {
    const secure = req.url.protocol === 'https:'
    const hostname = normalizeHost(req.url.hostname)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k.toLowerCase())) headers[k] = v
    headers.host = req.url.host
    if (req.body) headers['content-length'] = String(req.body.length)
    const options: https.RequestOptions = {
      host: req.address,
      family: req.family,
      port: req.port,
      path: `${req.url.pathname}${req.url.search}`,
      method: req.method,
      headers,
      agent: secure ? this.httpsAgent : this.httpAgent,
      lookup: pinnedLookup(req.address, req.family),
      signal: req.signal,
      ...(secure && !parseAddress(hostname) ? { servername: hostname } : {}),
    }
    return new Promise<ConnectorResponse>((resolve, reject) => {
      let settled = false
      const fail = (e: unknown) => {
        if (settled) return
        settled = true
        reject(req.signal.aborted ? req.signal.reason : e)
      }
      const request = (secure ? https : http).request(options, (res) => {
        const status = res.statusCode ?? 0
        const out: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
        const encoding = (out['content-encoding'] ?? '').trim().toLowerCase()
        const declared = Number(out['content-length'])
        if ((encoding === '' || encoding === 'identity') && Number.isFinite(declared) && declared > req.maxBytes) {
          request.destroy()
          fail(tooLarge(req.maxBytes, hostname))
          return
        }
        let decoder: Transform | undefined
        if (encoding === 'gzip' || encoding === 'x-gzip') decoder = createGunzip()
        else if (encoding === 'deflate') decoder = createInflate()
        else if (encoding === 'br') decoder = createBrotliDecompress()
        const stream = decoder ? res.pipe(decoder) : res
        if (decoder) res.on('error', (e) => decoder!.destroy(e))
        const chunks: Buffer[] = []
        let size = 0
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > req.maxBytes) {
            request.destroy()
            decoder?.destroy()
            fail(tooLarge(req.maxBytes, hostname))
            return
          }
          chunks.push(chunk)
        })
        stream.on('end', () => {
          if (settled) return
          settled = true
          resolve({ status, statusText: res.statusMessage ?? '', headers: out, body: Buffer.concat(chunks) })
        })
        stream.on('error', (e) => fail(networkError(e, hostname)))
        res.on('close', () => {
          if (!res.complete)
            fail(new EgressError('network', `the connection to ${hostname} closed before the response was complete`, { host: hostname }))
        })
      })
      request.on('error', (e) => fail(networkError(e, hostname)))
      if (req.body) request.end(req.body)
      else request.end()
    })
  }
}

const tooLarge = (max: number, host: string) =>
  new EgressError('too-large', `the response from ${host} is larger than the limit of ${max} bytes`, { host, maxBytes: max })

function networkError(e: unknown, host: string): EgressError {
  if (e instanceof EgressError) return e
  const code = (e as { code?: string }).code
  // node's messages carry the address and port; the code says enough
  const what = code ? describeCode(code) : 'a network error'
  return new EgressError('network', `the call to ${host} failed: ${what}`, { host, ...(code ? { errno: code } : {}) }, { cause: e })
}

function describeCode(code: string): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)'
    case 'ECONNRESET':
      return 'connection reset (ECONNRESET)'
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `host unreachable (${code})`
    case 'ETIMEDOUT':
      return 'connection timed out (ETIMEDOUT)'
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_STATUS':
      return `the server did not answer with valid HTTP (${code})`
    default:
      return code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') ? `TLS failed (${code})` : code
  }
}
