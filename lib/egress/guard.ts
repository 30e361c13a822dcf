/**
 * The egress guard: decides whether a URL may be called, and which address to connect to.
 *
 * Rules, for every outbound call (REST, MCP, prompt tools):
 * - only `http:` and `https:`; no credentials in the URL;
 * - never one of the service's own listeners (OwnEndpoints), whatever any allow-list says;
 * - the host is resolved (IP literals in any spelling are taken as they are), and EVERY address
 *   must pass — one private answer among public ones refuses the call;
 * - a public address passes; any other class passes only when the deployment allow-list names
 *   the host or a CIDR containing the address (at that port, when the entry names one), or — for the site-network classes in
 *   `tenantGrantable` (private, CGNAT, unique-local by default) — when the tenant's own
 *   allow-list does. Loopback, link-local (cloud metadata), unspecified, multicast, broadcast and
 *   reserved addresses can only be opened by the deployment;
 * - the caller connects to the returned `pinned` address, never re-resolving (no DNS rebinding).
 */
import type { Logger } from '../runtime/logger'
import { silentLogger } from '../runtime/logger'
import { type AddressClass, type ClassifiedAddress, classifyBytes, parseAddress } from './address'
import { AllowList, normalizeHost } from './allow-list'
import { EgressError } from './errors'
import { OwnEndpoints } from './own-endpoints'
import type { TenantAllowListSource } from './tenant-allow-list'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Name resolution, injectable so tests can map names to any address without DNS. */
export interface Resolver {
  resolve(hostname: string): Promise<ResolvedAddress[]>
}

// node:dns/promises loads with the first outbound call, not at cold start; once, because import()
// resolves its specifier again on every call
let dns: Promise<typeof import('node:dns/promises')> | undefined

/** getaddrinfo through node:dns (honours /etc/hosts, as the connection would). */
export const systemResolver: Resolver = {
  async resolve(hostname) {
    dns ??= import('node:dns/promises')
    const { lookup } = await dns
    const answers = await lookup(hostname, { all: true, verbatim: true })
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
  },
}

export interface CheckedTarget {
  url: URL
  /** Normalized host name (no brackets, lowercase). */
  host: string
  port: number
  /** Every address the host resolved to, each classified. */
  addresses: ClassifiedAddress[]
  /** The address to connect to. */
  pinned: ClassifiedAddress
}

export interface EgressGuardOptions {
  /** The deployment allow-list (EGRESS_ALLOW_HOSTS / EGRESS_ALLOW_CIDRS). */
  allow?: AllowList
  /** The service's own listeners: refused before any allow-list is consulted. */
  ownEndpoints?: OwnEndpoints
  /** The tenant's own allow-list; only consulted for non-public addresses. */
  tenantAllowList?: TenantAllowListSource
  /** Address classes a tenant's allow-list may open (default: private, cgnat, unique-local). */
  tenantGrantable?: AddressClass[]
  resolver?: Resolver
  log?: Logger
}

export const DEFAULT_TENANT_GRANTABLE: AddressClass[] = ['private', 'cgnat', 'unique-local']

const DESCRIBE: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private network address',
  'link-local': 'a link-local address',
  cgnat: 'a carrier-grade NAT address',
  'unique-local': 'a unique-local IPv6 address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
}

export class EgressGuard {
  private readonly allow: AllowList
  private readonly own: OwnEndpoints
  private readonly tenantGrantable: Set<AddressClass>
  private readonly resolver: Resolver
  private readonly log: Logger

  constructor(private readonly opts: EgressGuardOptions = {}) {
    this.allow = opts.allow ?? AllowList.empty
    this.own = opts.ownEndpoints ?? new OwnEndpoints()
    this.tenantGrantable = new Set(opts.tenantGrantable ?? DEFAULT_TENANT_GRANTABLE)
    this.resolver = opts.resolver ?? systemResolver
    this.log = opts.log ?? silentLogger
  }

  /** Parses, resolves and checks a URL; throws EgressError (EGRESS_DENIED, …) when refused. */
  async check(tenant: string, target: string | URL): Promise<CheckedTarget> {
    let url: URL
    try {
      url = new URL(String(target))
    } catch {
      throw new EgressError('invalid-url', 'the URL is not a valid absolute URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new EgressError('scheme', `only http and https URLs may be called, not ${url.protocol.replace(/:$/, '')}`, {
        host: url.hostname,
      })
    }
    if (url.username || url.password)
      throw new EgressError('invalid-url', 'credentials in the URL are not supported; send them in a header')
    const host = normalizeHost(url.hostname)
    if (!host) throw new EgressError('invalid-url', 'the URL has no host')
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80

    const literal = parseAddress(host)
    let addresses: ClassifiedAddress[]
    if (literal) addresses = [classifyBytes(literal)]
    else {
      let answers: ResolvedAddress[]
      try {
        answers = await this.resolver.resolve(host)
      } catch (e) {
        throw new EgressError('dns', `the host ${host} could not be resolved`, { host }, { cause: e })
      }
      addresses = []
      for (const a of answers) {
        const bytes = parseAddress(a.address)
        if (!bytes) throw new EgressError('dns', `the host ${host} resolved to something that is not an address`, { host })
        addresses.push(classifyBytes(bytes))
      }
      if (!addresses.length) throw new EgressError('dns', `the host ${host} has no addresses`, { host })
    }

    for (const a of addresses) {
      if (!this.own.covers(host, a, port)) continue
      this.log.log('warn', 'egress.denied_own_endpoint', { tenant, host, address: a.address, port })
      // Worded like any refusal of the address (no port, nothing saying it is ours): a tenant
      // probing ports must not learn where the service's own stores listen. The log says which.
      throw new EgressError('denied', refusal(host, a.class, !!literal), { host, class: a.class })
    }
    let tenantList: AllowList | undefined
    for (const a of addresses) {
      if (a.class === 'public') continue
      const bytes = parseAddress(a.address)!
      if (this.allow.allows(host, bytes, port)) continue
      if (this.tenantGrantable.has(a.class) && !a.metadata && this.opts.tenantAllowList) {
        tenantList ??= await this.opts.tenantAllowList(tenant)
        if (tenantList.allows(host, bytes, port)) continue
      }
      this.log.log('warn', 'egress.denied', { tenant, host, address: a.address, class: a.class })
      throw new EgressError('denied', refusal(host, a.class, !!literal), { host, class: a.class })
    }
    return { url, host, port, addresses, pinned: addresses[0] }
  }
}

/** The one sentence every refused address gets, whatever the reason inside (an own endpoint included). */
function refusal(host: string, cls: AddressClass, literal: boolean): string {
  if (cls === 'public') return `outbound calls to ${host} are not allowed; ask an administrator to allow-list it`
  return literal
    ? `outbound calls to ${DESCRIBE[cls]} are not allowed (${host}); ask an administrator to allow-list it`
    : `outbound calls to ${host} are not allowed (it resolves to ${DESCRIBE[cls]}); ask an administrator to allow-list it`
}
