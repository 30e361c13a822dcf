/**
 * The resolve-then-pin path with an injected resolver and a connector that RECORDS attempts and
 * never opens a socket: nothing in this file can reach any network, whatever the guard does.
 */
import { describe, expect, it } from 'vitest'
import { AllowList } from '../../../lib/egress/allow-list'
import { EgressClient } from '../../../lib/egress/client'
import type { Connector, ConnectorResponse, PinnedRequest } from '../../../lib/egress/connector'
import { EgressError } from '../../../lib/egress/errors'
import type { ResolvedAddress, Resolver } from '../../../lib/egress/guard'
import { OwnEndpoints } from '../../../lib/egress/own-endpoints'
import { MemoryLogger } from '../../../lib/runtime/logger'

class FakeResolver implements Resolver {
  readonly queries: string[] = []
  constructor(private readonly table: Record<string, string[]>) {}
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    this.queries.push(hostname)
    const answers = this.table[hostname]
    if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  }
}

type Reply = Partial<ConnectorResponse> | ((req: PinnedRequest) => Partial<ConnectorResponse> | Promise<Partial<ConnectorResponse>>)

/** Records every attempt; answers from a script keyed by `address port path`, else 200 "ok". */
class RecordingConnector implements Connector {
  readonly attempts: PinnedRequest[] = []
  constructor(private readonly replies: Record<string, Reply> = {}) {}
  async send(req: PinnedRequest): Promise<ConnectorResponse> {
    this.attempts.push(req)
    const key = `${req.address} ${req.port} ${req.url.pathname}`
    const reply = this.replies[key] ?? this.replies[req.url.pathname] ?? {}
    const r = typeof reply === 'function' ? await reply(req) : reply
    return { status: r.status ?? 200, statusText: r.statusText ?? 'OK', headers: r.headers ?? {}, body: r.body ?? Buffer.from('ok') }
  }
}

const PUBLIC = '93.184.216.34'
const PUBLIC2 = '151.101.1.69'

function client(opts: {
  table?: Record<string, string[]>
  replies?: Record<string, Reply>
  allow?: { hosts?: string[]; cidrs?: string[] }
  tenantAllow?: { hosts?: string[]; cidrs?: string[] }
  own?: string[]
  log?: MemoryLogger
}) {
  const resolver = new FakeResolver({ 'api.example.com': [PUBLIC], 'cdn.example.net': [PUBLIC2], ...opts.table })
  const connector = new RecordingConnector(opts.replies)
  const tenantLookups: string[] = []
  const egress = new EgressClient({
    resolver,
    connector,
    log: opts.log,
    allow: opts.allow ? AllowList.of(opts.allow) : undefined,
    ...(opts.own ? { ownEndpoints: new OwnEndpoints(opts.own) } : {}),
    tenantAllowList: async (tenant) => {
      tenantLookups.push(tenant)
      return opts.tenantAllow ? AllowList.of(opts.tenantAllow) : AllowList.empty
    },
  })
  return { egress, resolver, connector, tenantLookups }
}

async function refusal(p: Promise<unknown>): Promise<EgressError> {
  const e = await p.then(
    () => undefined,
    (err) => err,
  )
  expect(e, 'expected the call to be refused').toBeInstanceOf(EgressError)
  return e as EgressError
}

describe('EgressClient resolve-then-pin', () => {
  it('connects to the address it checked and sends the original host name', async () => {
    const { egress, resolver, connector } = client({})
    const res = await egress.request({ tenant: 't1', url: 'https://api.example.com/v1/items?q=1' })
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('ok')
    expect(resolver.queries).toEqual(['api.example.com'])
    expect(connector.attempts).toHaveLength(1)
    const [a] = connector.attempts
    expect(a.address).toBe(PUBLIC)
    expect(a.family).toBe(4)
    expect(a.port).toBe(443)
    expect(a.url.hostname).toBe('api.example.com')
    expect(a.url.search).toBe('?q=1')
  })

  it('does not look up the tenant allow-list for a public destination', async () => {
    const { egress, tenantLookups } = client({})
    await egress.request({ tenant: 't1', url: 'http://api.example.com/' })
    expect(tenantLookups).toEqual([])
  })

  const privateNames: [string, string][] = [
    ['loopback', '127.0.0.1'],
    ['another loopback', '127.0.0.2'],
    ['IPv6 loopback', '::1'],
    ['RFC 1918', '10.0.0.5'],
    ['RFC 1918 172.16/12', '172.20.1.1'],
    ['RFC 1918 192.168/16', '192.168.0.10'],
    ['cloud metadata', '169.254.169.254'],
    ['ECS task metadata', '169.254.170.2'],
    ['CGNAT', '100.64.0.7'],
    ['multicast', '224.0.0.251'],
    ['unspecified', '0.0.0.0'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 unique-local', 'fd12::7'],
    ['AWS IPv6 metadata', 'fd00:ec2::254'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['NAT64 private', '64:ff9b::10.0.0.1'],
  ]
  it.each(privateNames)('refuses a name that resolves to a %s address (%s) without connecting', async (_what, address) => {
    const { egress, connector } = client({ table: { 'evil.example.com': [address] } })
    const e = await refusal(egress.request({ tenant: 't1', url: 'http://evil.example.com/' }))
    expect(e.code).toBe('EGRESS_DENIED')
    expect(e.reason).toBe('denied')
    expect(e.message).toContain('evil.example.com')
    expect(connector.attempts).toEqual([])
  })

  it('refuses a name when any one of its addresses is private, even if the first is public', async () => {
    const { egress, connector } = client({ table: { 'mixed.example.com': [PUBLIC, '10.1.2.3'] } })
    const e = await refusal(egress.request({ tenant: 't1', url: 'http://mixed.example.com/' }))
    expect(e.details).toMatchObject({ host: 'mixed.example.com', class: 'private' })
    expect(connector.attempts).toEqual([])
  })

  const literals = [
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
    'http://169.254.169.254/latest/meta-data/',
    'http://0xA9FEA9FE/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1%25eth0]/',
    'http://0.0.0.0:8080/',
    'http://10.0.0.1/',
    'http://[2002:7f00:1::]/',
  ]
  it.each(literals)('refuses the literal address URL %s without resolving or connecting', async (url) => {
    const { egress, resolver, connector } = client({})
    const e = await refusal(egress.request({ tenant: 't1', url }))
    expect(['denied', 'invalid-url']).toContain(e.reason)
    expect(resolver.queries).toEqual([])
    expect(connector.attempts).toEqual([])
  })

  it('refuses schemes other than http and https', async () => {
    const { egress, connector } = client({})
    for (const url of ['file:///etc/passwd', 'ftp://api.example.com/x', 'gopher://api.example.com/', 'data:text/plain,hi']) {
      const e = await refusal(egress.request({ tenant: 't1', url }))
      expect(e.reason).toBe('scheme')
    }
    expect(connector.attempts).toEqual([])
  })

  it('refuses credentials in the URL and URLs that do not parse', async () => {
    const { egress, connector } = client({})
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://user:pw@api.example.com/' }))).reason).toBe('invalid-url')
    expect((await refusal(egress.request({ tenant: 't1', url: 'not a url' }))).reason).toBe('invalid-url')
    expect(connector.attempts).toEqual([])
  })

  it('reports a name that does not resolve as a DNS failure', async () => {
    const { egress } = client({})
    const e = await refusal(egress.request({ tenant: 't1', url: 'http://nowhere.invalid/' }))
    expect(e.reason).toBe('dns')
    expect(e.code).toBe('UPSTREAM_FAILURE')
  })

  it('logs a refusal with host, address and class but not the URL', async () => {
    const log = new MemoryLogger()
    const { egress } = client({ table: { 'evil.example.com': ['10.0.0.5'] }, log })
    await refusal(egress.request({ tenant: 't1', url: 'http://evil.example.com/path?token=abc' }))
    const [line] = log.find('egress.denied')
    expect(line.fields).toEqual({ tenant: 't1', host: 'evil.example.com', address: '10.0.0.5', class: 'private' })
    expect(JSON.stringify(log.lines)).not.toContain('token=abc')
  })
})

describe('EgressClient allow-lists', () => {
  it('lets the deployment allow-list open a loopback host by name, and only that name', async () => {
    const { egress, connector } = client({ table: { localhost: ['127.0.0.1'] }, allow: { hosts: ['127.0.0.1'] } })
    await egress.request({ tenant: 't1', url: 'http://127.0.0.1:8080/x' })
    expect(connector.attempts.map((a) => `${a.address}:${a.port}`)).toEqual(['127.0.0.1:8080'])
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://127.0.0.2:8080/x' }))).reason).toBe('denied')
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://localhost:8080/x' }))).reason).toBe('denied')
    expect(connector.attempts).toHaveLength(1)
  })

  it('lets a deployment CIDR open every name that resolves into it', async () => {
    const { egress, connector } = client({
      table: { 'svc.internal': ['10.20.0.9'], 'other.internal': ['10.21.0.9'] },
      allow: { cidrs: ['10.20.0.0/16'] },
    })
    await egress.request({ tenant: 't1', url: 'http://svc.internal/' })
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://other.internal/' }))).reason).toBe('denied')
    expect(connector.attempts.map((a) => a.address)).toEqual(['10.20.0.9'])
  })

  it('matches *.domain host patterns on subdomains only', async () => {
    const { egress, connector } = client({
      table: { 'a.corp.test': ['10.0.0.1'], 'corp.test': ['10.0.0.2'] },
      allow: { hosts: ['*.corp.test'] },
    })
    await egress.request({ tenant: 't1', url: 'http://A.Corp.Test./' })
    await refusal(egress.request({ tenant: 't1', url: 'http://corp.test/' }))
    expect(connector.attempts.map((a) => a.address)).toEqual(['10.0.0.1'])
  })

  it('lets a tenant allow-list open private addresses but never loopback, link-local or metadata', async () => {
    const { egress, connector, tenantLookups } = client({
      table: {
        'intranet.acme': ['10.9.0.1'],
        'meta.acme': ['169.254.169.254'],
        'loop.acme': ['127.0.0.1'],
        'imds6.acme': ['fd00:ec2::254'],
      },
      tenantAllow: { hosts: ['intranet.acme', 'meta.acme', 'loop.acme', 'imds6.acme'], cidrs: ['0.0.0.0/0', '::/0'] },
    })
    await egress.request({ tenant: 'acme', url: 'http://intranet.acme/' })
    for (const host of ['meta.acme', 'loop.acme', 'imds6.acme']) {
      expect((await refusal(egress.request({ tenant: 'acme', url: `http://${host}/` }))).reason).toBe('denied')
    }
    await refusal(egress.request({ tenant: 'acme', url: 'http://169.254.169.254/' }))
    expect(connector.attempts.map((a) => a.address)).toEqual(['10.9.0.1'])
    expect(tenantLookups.every((t) => t === 'acme')).toBe(true)
  })
})

describe("EgressClient and the service's own endpoints", () => {
  const everything = { hosts: ['127.0.0.1', 'localhost'], cidrs: ['0.0.0.0/0', '::/0'] }

  it('allows a port-scoped entry at its port only', async () => {
    const { egress, connector } = client({ allow: { hosts: ['127.0.0.1:8080'] } })
    await egress.request({ tenant: 't1', url: 'http://127.0.0.1:8080/x' })
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://127.0.0.1:8081/x' }))).reason).toBe('denied')
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://127.0.0.1/x' }))).reason).toBe('denied')
    expect(connector.attempts.map((a) => `${a.address}:${a.port}`)).toEqual(['127.0.0.1:8080'])
  })

  it('never connects to an own listener, in any spelling of loopback, whatever the allow-list says', async () => {
    const log = new MemoryLogger()
    const { egress, connector } = client({
      table: { localhost: ['127.0.0.1'] },
      allow: everything,
      own: ['http://127.0.0.1:4567', '127.0.0.1:9001'],
      log,
    })
    const urls = [
      'http://127.0.0.1:4567/',
      'http://127.0.0.2:4567/',
      'http://[::1]:4567/',
      'http://[::ffff:127.0.0.1]:4567/',
      'http://0.0.0.0:4567/',
      'http://2130706433:4567/',
      'http://localhost:9001/2018-06-01/runtime/invocation/next',
    ]
    for (const url of urls) {
      const e = await refusal(egress.request({ tenant: 't1', url }))
      expect(e.reason, url).toBe('denied')
      expect(e.message, url).toMatch(/are not allowed/)
      expect(e.message, url).not.toMatch(/4567|9001|endpoint|this service/)
    }
    expect(connector.attempts).toEqual([])
    await egress.request({ tenant: 't1', url: 'http://127.0.0.1:4568/' })
    expect(connector.attempts.map((a) => `${a.address}:${a.port}`)).toEqual(['127.0.0.1:4568'])
    expect(log.find('egress.denied_own_endpoint')[0].fields).toMatchObject({ tenant: 't1', port: 4567 })
  })

  it('refuses a redirect to an own listener', async () => {
    const { egress, connector } = client({
      allow: everything,
      own: ['127.0.0.1:4567'],
      replies: { '/start': { status: 307, headers: { location: 'http://127.0.0.1:4567/' } } },
    })
    const e = await refusal(egress.request({ tenant: 't1', url: 'http://127.0.0.1:8080/start', method: 'POST', body: 'x' }))
    expect(e.details).toEqual({ reason: 'denied', host: '127.0.0.1', class: e.details?.class })
    expect(e.message).not.toContain('4567')
    expect(connector.attempts.map((a) => `${a.address}:${a.port}`)).toEqual(['127.0.0.1:8080'])
  })

  it('refuses every non-public address at the port of a listener bound to every interface', async () => {
    const { egress, connector } = client({ table: { 'box.internal': ['10.1.2.3'] }, allow: everything, own: ['0.0.0.0:8787'] })
    for (const url of ['http://10.1.2.3:8787/', 'http://box.internal:8787/', 'http://[::1]:8787/', 'http://192.168.0.1:8787/']) {
      expect((await refusal(egress.request({ tenant: 't1', url }))).reason, url).toBe('denied')
    }
    await egress.request({ tenant: 't1', url: 'http://api.example.com:8787/' })
    await egress.request({ tenant: 't1', url: 'http://10.1.2.3:8788/' })
    expect(connector.attempts.map((a) => `${a.address}:${a.port}`)).toEqual([`${PUBLIC}:8787`, '10.1.2.3:8788'])
  })
})

describe('OwnEndpoints', () => {
  it('reads URLs with their default port, host:port and [v6]:port, and refuses anything else', () => {
    const own = new OwnEndpoints(['https://169.254.170.23/v1/credentials', 'http://[fd00::5]:81/x', 'sandbox.localdomain:9001'])
    const at = (address: string, port: number, host = address) =>
      own.covers(host, { address, family: address.includes(':') ? 6 : 4, class: 'link-local' }, port)
    expect(at('169.254.170.23', 443)).toBe(true)
    expect(at('169.254.170.23', 80)).toBe(false)
    expect(at('fd00::5', 81)).toBe(true)
    expect(at('10.0.0.1', 9001, 'Sandbox.LocalDomain')).toBe(true)
    expect(at('10.0.0.1', 9001, 'other.localdomain')).toBe(false)
    for (const bad of ['127.0.0.1', 'nope', 'http://', '[::1]', 'x:0'])
      expect(() => new OwnEndpoints([bad]), bad).toThrow(/is not an endpoint of this service/)
  })
})

describe('EgressClient redirects', () => {
  it('re-checks every redirect and refuses one that leads to a private address', async () => {
    const { egress, connector } = client({
      table: { 'internal.example.com': ['10.0.0.8'] },
      replies: { '/start': { status: 302, headers: { location: 'http://internal.example.com/admin' } } },
    })
    const e = await refusal(egress.request({ tenant: 't1', url: 'https://api.example.com/start' }))
    expect(e.reason).toBe('denied')
    expect(connector.attempts.map((a) => a.address)).toEqual([PUBLIC])
  })

  it('refuses a redirect to the metadata address written as a number', async () => {
    const { egress, connector } = client({
      replies: { '/start': { status: 301, headers: { location: 'http://2852039166/latest/meta-data/' } } },
    })
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://api.example.com/start' }))).reason).toBe('denied')
    expect(connector.attempts).toHaveLength(1)
  })

  it('refuses a redirect to another scheme', async () => {
    const { egress, connector } = client({ replies: { '/start': { status: 302, headers: { location: 'file:///etc/passwd' } } } })
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://api.example.com/start' }))).reason).toBe('scheme')
    expect(connector.attempts).toHaveLength(1)
  })

  it('pins each hop to its own checked address and resolves each host once', async () => {
    const { egress, resolver, connector } = client({
      replies: { '/a': { status: 302, headers: { location: 'https://cdn.example.net/b' } } },
    })
    const res = await egress.request({ tenant: 't1', url: 'http://api.example.com/a' })
    expect(res.url).toBe('https://cdn.example.net/b')
    expect(res.redirects).toBe(1)
    expect(resolver.queries).toEqual(['api.example.com', 'cdn.example.net'])
    expect(connector.attempts.map((a) => `${a.address}:${a.port} ${a.url.hostname}`)).toEqual([
      `${PUBLIC}:80 api.example.com`,
      `${PUBLIC2}:443 cdn.example.net`,
    ])
  })

  it('follows five redirects and refuses the sixth', async () => {
    const chain = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`/r${i}`, { status: 307, headers: { location: `/r${i + 1}` } }])) as Record<
        string,
        Reply
      >
    const five = client({ replies: chain(5) })
    const res = await five.egress.request({ tenant: 't1', url: 'http://api.example.com/r0' })
    expect(res.status).toBe(200)
    expect(res.redirects).toBe(5)
    expect(five.connector.attempts).toHaveLength(6)

    const six = client({ replies: chain(6) })
    const e = await refusal(six.egress.request({ tenant: 't1', url: 'http://api.example.com/r0' }))
    expect(e.reason).toBe('redirects')
    expect(six.connector.attempts).toHaveLength(6)
  })

  it('turns POST into GET without a body on 303 and keeps both on 307', async () => {
    const { egress, connector } = client({
      replies: {
        '/see-other': { status: 303, headers: { location: '/done' } },
        '/temporary': { status: 307, headers: { location: '/done' } },
      },
    })
    await egress.request({
      tenant: 't1',
      url: 'http://api.example.com/see-other',
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    })
    await egress.request({
      tenant: 't1',
      url: 'http://api.example.com/temporary',
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
    })
    const [, afterSeeOther, , afterTemporary] = connector.attempts
    expect(afterSeeOther).toMatchObject({ method: 'GET', body: undefined })
    expect(afterSeeOther.headers['content-type']).toBeUndefined()
    expect(afterTemporary.method).toBe('POST')
    expect(afterTemporary.body?.toString()).toBe('{"a":1}')
  })

  it('drops credentials when a redirect leaves the origin and keeps them within it', async () => {
    const { egress, connector } = client({
      replies: {
        '/same': { status: 302, headers: { location: '/next' } },
        '/next': { status: 302, headers: { location: 'https://cdn.example.net/elsewhere' } },
      },
    })
    await egress.request({
      tenant: 't1',
      url: 'https://api.example.com/same',
      headers: { Authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y', Cookie: 'c=1', Accept: 'application/json' },
      sensitiveHeaders: ['X-Api-Key'],
    })
    const [first, second, third] = connector.attempts
    expect(first.headers).toMatchObject({ Authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y' })
    expect(second.headers).toMatchObject({ Authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y', Cookie: 'c=1' })
    expect(third.headers).toEqual({ Accept: 'application/json' })
  })

  it('does not carry a body marked sensitive to another origin, whatever the redirect status', async () => {
    const { egress, connector } = client({
      replies: {
        '/t': { status: 307, headers: { location: 'https://cdn.example.net/t' } },
        '/p': { status: 308, headers: { location: 'https://cdn.example.net/p' } },
        '/m': { status: 301, headers: { location: 'https://cdn.example.net/m' } },
        '/s': { status: 303, headers: { location: 'https://cdn.example.net/s-done' } },
        '/here': { status: 307, headers: { location: '/there' } },
      },
    })
    const send = (path: string, method = 'POST') =>
      egress.request({ tenant: 't1', url: `https://api.example.com${path}`, method, body: 'client_secret=s3cret', sensitiveBody: true })
    for (const [path, method] of [
      ['/t', 'POST'],
      ['/p', 'POST'],
      ['/m', 'PUT'],
    ]) {
      const e = await refusal(send(path, method))
      expect(e.reason, path).toBe('unsafe-redirect')
      expect(e.code).toBe('EGRESS_DENIED')
    }
    await send('/s') // 303: the body is dropped, nothing to protect
    await send('/here') // the same origin
    expect(connector.attempts.map((a) => `${a.url.hostname}${a.url.pathname} ${a.method} ${a.body?.toString() ?? ''}`)).toEqual([
      'api.example.com/t POST client_secret=s3cret',
      'api.example.com/p POST client_secret=s3cret',
      'api.example.com/m PUT client_secret=s3cret',
      'api.example.com/s POST client_secret=s3cret',
      'cdn.example.net/s-done GET ',
      'api.example.com/here POST client_secret=s3cret',
      'api.example.com/there POST client_secret=s3cret',
    ])
  })

  it('returns a redirect as it is when asked not to follow', async () => {
    const { egress, connector } = client({ replies: { '/a': { status: 302, headers: { location: 'http://10.0.0.1/' } } } })
    const res = await egress.request({ tenant: 't1', url: 'http://api.example.com/a', redirect: 'manual' })
    expect(res.status).toBe(302)
    expect(connector.attempts).toHaveLength(1)
  })
})

describe('EgressClient deadlines', () => {
  const hang = (req: PinnedRequest) =>
    new Promise<Partial<ConnectorResponse>>((_, reject) =>
      req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true }),
    )

  it('fails a call that outlives timeoutMs with a timeout error', async () => {
    const { egress } = client({ replies: { '/slow': hang } })
    const e = await refusal(egress.request({ tenant: 't1', url: 'http://api.example.com/slow', timeoutMs: 50 }))
    expect(e.reason).toBe('timeout')
    expect(e.message).toContain('50 ms')
  })

  it('bounds name resolution by the same deadline', async () => {
    const egress = new EgressClient({ resolver: { resolve: () => new Promise(() => {}) }, connector: new RecordingConnector() })
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://slow-dns.example.com/', timeoutMs: 30 }))).reason).toBe('timeout')
  })

  it('stops when the caller aborts', async () => {
    const { egress } = client({ replies: { '/slow': hang } })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 20)
    expect((await refusal(egress.request({ tenant: 't1', url: 'http://api.example.com/slow', signal: controller.signal }))).reason).toBe(
      'aborted',
    )
  })

  it('caps timeouts and response sizes at the client limits', async () => {
    const connector = new RecordingConnector()
    const egress = new EgressClient({ resolver: new FakeResolver({ 'api.example.com': [PUBLIC] }), connector, maxResponseBytes: 1000 })
    await egress.request({ tenant: 't1', url: 'http://api.example.com/', maxBytes: 10_000_000 })
    expect(connector.attempts[0].maxBytes).toBe(1000)
  })
})
