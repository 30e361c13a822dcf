/**
 * Egress allow-lists as data. An allow-list names exceptions to the refusal of non-public
 * addresses; public addresses need no entry.
 *
 * - `hosts`: exact host names or IP literals (case-insensitive, trailing dot ignored), or
 *   `*.example.com` for every subdomain (not the apex). A host entry permits whatever addresses
 *   that name resolves to — so allowing `127.0.0.1` does not allow `localhost`.
 * - `cidrs`: address blocks (`10.1.0.0/16`, `fd00::/8`, a bare address = one address) that are
 *   permitted whichever host name led to them.
 */
import { ServerToolsError, type Issue } from '../errors'
import { cidrContains, formatAddress, parseAddress, parseCidr, type AddressBytes, type Cidr } from './address'

export interface AllowListData {
  hosts?: string[]
  cidrs?: string[]
}

export class AllowList {
  static readonly empty = new AllowList(new Set(), [])

  private constructor(
    private readonly exactHosts: Set<string>,
    private readonly suffixes: string[],
    readonly cidrs: Cidr[] = [],
  ) {}

  /** Builds an allow-list; every invalid entry is reported (pointer `/hosts/i` or `/cidrs/i`). */
  static parse(data: AllowListData): { list: AllowList; issues: Issue[] } {
    const issues: Issue[] = []
    const exact = new Set<string>()
    const suffixes: string[] = []
    const cidrs: Cidr[] = []
    ;(data.hosts ?? []).forEach((raw, i) => {
      const entry = typeof raw === 'string' ? normalizeHost(raw) : ''
      if (entry.startsWith('*.') && isHostName(entry.slice(2))) suffixes.push(entry.slice(1))
      else if (isHostName(entry) || parseAddress(entry)) exact.add(normalizeHost(canonicalIfAddress(entry)))
      else issues.push({ pointer: `/hosts/${i}`, message: `'${String(raw)}' is not a host name, IP address or *.domain pattern` })
    })
    ;(data.cidrs ?? []).forEach((raw, i) => {
      const cidr = typeof raw === 'string' ? parseCidr(raw.trim()) : undefined
      if (cidr) cidrs.push(cidr)
      else issues.push({ pointer: `/cidrs/${i}`, message: `'${String(raw)}' is not a CIDR block such as 10.0.0.0/8 or fd00::/8` })
    })
    return { list: new AllowList(exact, suffixes, cidrs), issues }
  }

  /** Like parse, but an invalid entry is an INVALID_CONFIG error (for deployment settings). */
  static of(data: AllowListData, what = 'egress allow-list'): AllowList {
    const { list, issues } = AllowList.parse(data)
    if (issues.length) throw new ServerToolsError('INVALID_CONFIG', `${what} has ${issues.length} invalid entr${issues.length === 1 ? 'y' : 'ies'}`, { errors: issues })
    return list
  }

  get isEmpty() {
    return this.exactHosts.size === 0 && this.suffixes.length === 0 && this.cidrs.length === 0
  }

  allowsHost(host: string): boolean {
    const h = normalizeHost(canonicalIfAddress(normalizeHost(host)))
    if (this.exactHosts.has(h)) return true
    return this.suffixes.some((s) => h.endsWith(s) && h.length > s.length)
  }

  allowsAddress(bytes: AddressBytes): boolean {
    return this.cidrs.some((c) => cidrContains(c, bytes))
  }

  toJSON(): Required<AllowListData> {
    return { hosts: [...this.exactHosts, ...this.suffixes.map((s) => `*${s}`)], cidrs: this.cidrs.map((c) => c.text) }
  }
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
