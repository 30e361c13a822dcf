/**
 * Egress allow-lists as data. An allow-list names exceptions to the refusal of non-public
 * addresses; public addresses need no entry.
 *
 * - `hosts`: exact host names or IP literals (case-insensitive, trailing dot ignored), or
 *   `*.example.com` for every subdomain (not the apex). A host entry permits whatever addresses
 *   that name resolves to — so allowing `127.0.0.1` does not allow `localhost`.
 * - `cidrs`: address blocks (`10.1.0.0/16`, `fd00::/8`, a bare address = one address) that are
 *   permitted whichever host name led to them.
 *
 * Any entry may name one port: `host:8443`, `*.corp.example:443`, `[::1]:8080`, `10.0.0.0/8:8443`,
 * `fd00::/8:443`, `[fd00::1]:443` (an IPv6 address takes brackets before a port; a CIDR's port
 * follows its prefix length). An entry without a port allows every port — except the service's
 * own listeners, which OwnEndpoints keeps out whatever an allow-list says.
 */
import { type Issue, ServerToolsError } from '../errors'
import { type AddressBytes, type Cidr, cidrContains, formatAddress, parseAddress, parseCidr } from './address'

export interface AllowListData {
  hosts?: string[]
  cidrs?: string[]
}

/** Absent: every port. */
type PortScope = number | undefined

interface HostEntry {
  host: string
  port: PortScope
}
interface CidrEntry {
  cidr: Cidr
  port: PortScope
}

const portMatches = (scope: PortScope, port: number) => scope === undefined || scope === port

export class AllowList {
  static readonly empty = new AllowList(new Map(), [], [])

  private constructor(
    /** Exact host → the port scopes allowed for it. */
    private readonly exactHosts: Map<string, PortScope[]>,
    /** `.example.com` suffixes with their port scope. */
    private readonly suffixes: HostEntry[],
    private readonly cidrs: CidrEntry[],
  ) {}

  /** Builds an allow-list; every invalid entry is reported (pointer `/hosts/i` or `/cidrs/i`). */
  static parse(data: AllowListData): { list: AllowList; issues: Issue[] } {
    const issues: Issue[] = []
    const exact = new Map<string, PortScope[]>()
    const suffixes: HostEntry[] = []
    const cidrs: CidrEntry[] = []
    ;(data.hosts ?? []).forEach((raw, i) => {
      const split = typeof raw === 'string' ? splitPort(raw.trim()) : undefined
      const entry = split ? normalizeHost(split.host) : ''
      if (split?.port === null)
        issues.push({ pointer: `/hosts/${i}`, message: `'${String(raw)}' has a port that is not a number from 1 to 65535` })
      else if (entry.startsWith('*.') && isHostName(entry.slice(2))) suffixes.push({ host: entry.slice(1), port: split!.port })
      else if (isHostName(entry) || parseAddress(entry)) {
        const host = normalizeHost(canonicalIfAddress(entry))
        exact.set(host, [...(exact.get(host) ?? []), split!.port])
      } else
        issues.push({
          pointer: `/hosts/${i}`,
          message: `'${String(raw)}' is not a host name, IP address or *.domain pattern (each optionally with :port)`,
        })
    })
    ;(data.cidrs ?? []).forEach((raw, i) => {
      const entry = typeof raw === 'string' ? parseCidrEntry(raw.trim()) : undefined
      if (entry) cidrs.push(entry)
      else
        issues.push({
          pointer: `/cidrs/${i}`,
          message: `'${String(raw)}' is not a CIDR block such as 10.0.0.0/8, fd00::/8 or 10.0.0.0/8:8443`,
        })
    })
    return { list: new AllowList(exact, suffixes, cidrs), issues }
  }

  /** Like parse, but an invalid entry is an INVALID_CONFIG error (for deployment settings). */
  static of(data: AllowListData, what = 'egress allow-list'): AllowList {
    const { list, issues } = AllowList.parse(data)
    if (issues.length)
      throw new ServerToolsError('INVALID_CONFIG', `${what} has ${issues.length} invalid entr${issues.length === 1 ? 'y' : 'ies'}`, {
        errors: issues,
      })
    return list
  }

  get isEmpty() {
    return this.exactHosts.size === 0 && this.suffixes.length === 0 && this.cidrs.length === 0
  }

  /** Whether a connection to `port` of `address`, reached through the name `host`, is allowed. */
  allows(host: string, address: AddressBytes, port: number): boolean {
    return this.allowsHost(host, port) || this.allowsAddress(address, port)
  }

  allowsHost(host: string, port: number): boolean {
    const h = normalizeHost(canonicalIfAddress(normalizeHost(host)))
    if (this.exactHosts.get(h)?.some((scope) => portMatches(scope, port))) return true
    return this.suffixes.some((s) => h.endsWith(s.host) && h.length > s.host.length && portMatches(s.port, port))
  }

  allowsAddress(bytes: AddressBytes, port: number): boolean {
    return this.cidrs.some((c) => portMatches(c.port, port) && cidrContains(c.cidr, bytes))
  }

  toJSON(): Required<AllowListData> {
    return {
      hosts: [
        ...[...this.exactHosts].flatMap(([host, scopes]) =>
          scopes.map((port) => withPort(host.includes(':') && port !== undefined ? `[${host}]` : host, port)),
        ),
        ...this.suffixes.map((s) => withPort(`*${s.host}`, s.port)),
      ],
      cidrs: this.cidrs.map((c) => withPort(c.cidr.text, c.port)),
    }
  }
}

const withPort = (text: string, port: PortScope) => (port === undefined ? text : `${text}:${port}`)

/**
 * Splits `host:port`, `[v6]:port`, `[v6]`, `host` and a bare IPv6 address (no port: its colons
 * are the address's). `port` is undefined without one and null when it is not 1–65535.
 */
export function splitPort(text: string): { host: string; port: number | undefined | null } | undefined {
  if (text.startsWith('[')) {
    const m = /^\[([^\]]+)\](?::(\d*))?$/.exec(text)
    if (!m) return undefined
    return { host: m[1], port: m[2] === undefined ? undefined : portNumber(m[2]) }
  }
  const colon = text.indexOf(':')
  if (colon < 0 || text.indexOf(':', colon + 1) >= 0) return { host: text, port: undefined }
  return { host: text.slice(0, colon), port: portNumber(text.slice(colon + 1)) }
}

function portNumber(text: string): number | null {
  if (!/^\d{1,5}$/.test(text)) return null
  const n = Number(text)
  return n >= 1 && n <= 65535 ? n : null
}

/** `10.0.0.0/8`, `10.0.0.0/8:8443`, `fd00::/8:443`, `[fd00::]/8`, an address, `1.2.3.4:80`, `[fd00::1]:443`. */
function parseCidrEntry(text: string): CidrEntry | undefined {
  const slash = text.indexOf('/')
  let address: string
  let prefix = ''
  let port: number | undefined | null
  if (slash >= 0) {
    const m = /^(\d{1,3})(?::(\d*))?$/.exec(text.slice(slash + 1))
    if (!m) return undefined
    address = text.slice(0, slash).replace(/^\[(.*)\]$/, '$1')
    prefix = `/${m[1]}`
    port = m[2] === undefined ? undefined : portNumber(m[2])
  } else {
    const split = splitPort(text)
    if (!split) return undefined
    address = split.host
    port = split.port
  }
  if (port === null) return undefined
  const cidr = parseCidr(`${address}${prefix}`)
  return cidr ? { cidr, port } : undefined
}

/** Lowercase, without brackets and without a trailing dot. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase()
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1)
  if (h.endsWith('.')) h = h.slice(0, -1)
  return h
}

const canonicalIfAddress = (h: string) => {
  const bytes = parseAddress(h)
  return bytes ? formatAddress(bytes) : h
}

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/
function isHostName(h: string): boolean {
  if (!h || h.length > 253) return false
  const labels = h.split('.')
  // an all-numeric last label is an IPv4 spelling, not a name
  if (/^[0-9]+$/.test(labels[labels.length - 1]) || /^0x[0-9a-f]*$/.test(labels[labels.length - 1])) return false
  return labels.every((l) => LABEL.test(l))
}

/**
 * The deployment setting: `EGRESS_ALLOW_HOSTS` and `EGRESS_ALLOW_CIDRS`, comma- (or whitespace-)
 * separated. The composition root passes the raw strings (lib never reads process.env):
 *
 *   AllowList.of(parseAllowListSetting(process.env.EGRESS_ALLOW_HOSTS, process.env.EGRESS_ALLOW_CIDRS))
 */
export function parseAllowListSetting(hosts: string | undefined, cidrs: string | undefined): AllowListData {
  const split = (s: string | undefined) => (s ?? '').split(/[\s,]+/).filter(Boolean)
  return { hosts: split(hosts), cidrs: split(cidrs) }
}

/** Convenience for composition roots: the deployment allow-list from the two env values. */
export function deploymentAllowList(env: { EGRESS_ALLOW_HOSTS?: string; EGRESS_ALLOW_CIDRS?: string }): AllowList {
  return AllowList.of(parseAllowListSetting(env.EGRESS_ALLOW_HOSTS, env.EGRESS_ALLOW_CIDRS), 'EGRESS_ALLOW_HOSTS/EGRESS_ALLOW_CIDRS')
}
