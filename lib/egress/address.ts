/**
 * Pure IP address parsing and classification for the egress guard. No I/O.
 *
 * `classifyAddress` accepts every spelling a resolver, a URL or an attacker might produce:
 * dotted IPv4 and the inet_aton forms (`2130706433`, `0177.0.0.1`, `0x7f.1`), IPv6 with `::`,
 * an embedded dotted quad, a zone id or brackets. Addresses that carry an IPv4 address inside
 * IPv6 (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are classified by the IPv4 address they carry.
 */

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private' // RFC 1918, and IPv6 site-local fec0::/10
  | 'link-local' // 169.254/16 (incl. cloud metadata 169.254.169.254), fe80::/10
  | 'cgnat' // 100.64.0.0/10 shared address space
  | 'unique-local' // fc00::/7 (incl. AWS IMDS fd00:ec2::254)
  | 'multicast'
  | 'unspecified' // 0.0.0.0/8, ::
  | 'broadcast' // 255.255.255.255
  | 'reserved' // documentation, benchmarking, IETF, 240/4, discard, Teredo, anything outside 2000::/3

export interface ClassifiedAddress {
  /** Canonical text: dotted quad for IPv4 (also for IPv4 carried in IPv6), RFC 5952 for IPv6. */
  address: string
  family: 4 | 6
  class: AddressClass
  /** The IPv4 address an IPv6 form carried, when classification used it. */
  embeddedIPv4?: string
  /** True for well-known cloud metadata endpoints (always a non-public class as well). */
  metadata?: boolean
}

/** Bytes of a parsed address: 4 for IPv4, 16 for IPv6. */
export type AddressBytes = Uint8Array

/**
 * inet_aton semantics: 1–4 parts, each decimal, octal (leading 0) or hex (0x); the last part
 * fills the remaining bytes. Returns undefined for anything else (no whitespace, no signs).
 */
export function parseIPv4(text: string): AddressBytes | undefined {
  if (text.length === 0 || text.length > 64) return undefined
  const parts = text.split('.')
  if (parts.length > 4) return undefined
  // a single trailing dot is accepted by resolvers ("1.2.3.4.") but not by us: be strict
  const values: number[] = []
  for (const part of parts) {
    const v = parseIPv4Part(part)
    if (v === undefined) return undefined
    values.push(v)
  }
  const last = values.pop()!
  for (const v of values) if (v > 0xff) return undefined
  const remaining = 4 - values.length
  if (last >= 2 ** (8 * remaining)) return undefined
  const bytes = new Uint8Array(4)
  values.forEach((v, i) => (bytes[i] = v))
  for (let i = 3, rest = last; i >= values.length; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256
  return bytes
}

function parseIPv4Part(part: string): number | undefined {
  let digits: string
  let radix: number
  if (/^0[xX][0-9a-fA-F]*$/.test(part)) {
    digits = part.slice(2) || '0'
    radix = 16
  } else if (/^0[0-7]+$/.test(part)) {
    digits = part.slice(1)
    radix = 8
  } else if (/^(0|[1-9][0-9]*)$/.test(part)) {
    digits = part
    radix = 10
  } else return undefined
  if (digits.length > 12) return undefined
  const v = parseInt(digits, radix)
  return Number.isSafeInteger(v) && v <= 0xffffffff ? v : undefined
}

/** Strict dotted-quad (what may appear at the end of an IPv6 address). */
function parseDottedQuad(text: string): AddressBytes | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (!m) return undefined
  const bytes = m.slice(1).map(Number)
  if (bytes.some((b) => b > 255)) return undefined
  return Uint8Array.from(bytes)
}

/** IPv6, with optional brackets and zone id; an embedded dotted quad in the last 32 bits. */
export function parseIPv6(input: string): AddressBytes | undefined {
  let text = input
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1)
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  if (!text.includes(':') || text.length > 64) return undefined
  let tail: AddressBytes | undefined
  const lastColon = text.lastIndexOf(':')
  const lastPart = text.slice(lastColon + 1)
  if (lastPart.includes('.')) {
    tail = parseDottedQuad(lastPart)
    if (!tail) return undefined
    text = `${text.slice(0, lastColon + 1)}0:0` // two placeholder groups, replaced below
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const group = (s: string) => (s === '' ? [] : s.split(':'))
  const head = group(halves[0])
  const rest = halves.length === 2 ? group(halves[1]) : []
  if (halves.length === 2 && head.length + rest.length > 7) return undefined
  const groups = halves.length === 2 ? [...head, ...Array(8 - head.length - rest.length).fill('0'), ...rest] : head
  if (groups.length !== 8) return undefined
  const bytes = new Uint8Array(16)
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(groups[i])) return undefined
    const v = parseInt(groups[i], 16)
    bytes[2 * i] = v >> 8
    bytes[2 * i + 1] = v & 0xff
  }
  if (tail) bytes.set(tail, 12)
  return bytes
}

/** Parses any IP literal (IPv4 in every inet_aton spelling, or IPv6). */
export function parseAddress(text: string): AddressBytes | undefined {
  return text.includes(':') || text.startsWith('[') ? parseIPv6(text) : parseIPv4(text)
}

export function formatAddress(bytes: AddressBytes): string {
  if (bytes.length === 4) return Array.from(bytes).join('.')
  // ::ffff:0:0/96, checked by hand: formatting must not build the classification tables
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff)
    return `::ffff:${Array.from(bytes.slice(12)).join('.')}`
  const groups: number[] = []
  for (let i = 0; i < 8; i++) groups.push((bytes[2 * i] << 8) | bytes[2 * i + 1])
  // RFC 5952: compress the longest run (≥ 2) of zero groups, the first one on a tie
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i]
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestLen < 2) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

interface Range {
  bytes: AddressBytes
  prefix: number
}

const v4 = (cidr: string): Range => {
  const [a, p] = cidr.split('/')
  return { bytes: parseIPv4(a)!, prefix: Number(p) }
}
const v6 = (cidr: string): Range => {
  const [a, p] = cidr.split('/')
  return { bytes: parseIPv6(a)!, prefix: Number(p) }
}

export function inRange(bytes: AddressBytes, range: { bytes: AddressBytes; prefix: number }): boolean {
  if (bytes.length !== range.bytes.length) return false
  let bits = range.prefix
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if ((bytes[i] & mask) !== (range.bytes[i] & mask)) return false
  }
  return true
}

/**
 * The classification tables, parsed on first use: a request that never checks an address (most
 * requests: no outbound call) does not pay for them at cold start.
 */
let tables: ReturnType<typeof buildTables> | undefined
const T = () => (tables ??= buildTables())

function buildTables() {
  // Most specific first where ranges nest (169.254.169.254 before 169.254/16 is handled by `metadata`).
  const IPV4_TABLE: [Range, AddressClass][] = [
    [v4('255.255.255.255/32'), 'broadcast'],
    [v4('0.0.0.0/8'), 'unspecified'],
    [v4('10.0.0.0/8'), 'private'],
    [v4('100.64.0.0/10'), 'cgnat'],
    [v4('127.0.0.0/8'), 'loopback'],
    [v4('169.254.0.0/16'), 'link-local'],
    [v4('172.16.0.0/12'), 'private'],
    [v4('192.0.0.0/24'), 'reserved'], // IETF protocol assignments (incl. 192.0.0.192, Oracle metadata)
    [v4('192.0.2.0/24'), 'reserved'], // TEST-NET-1
    [v4('192.88.99.0/24'), 'reserved'], // deprecated 6to4 relay anycast
    [v4('192.168.0.0/16'), 'private'],
    [v4('198.18.0.0/15'), 'reserved'], // benchmarking
    [v4('198.51.100.0/24'), 'reserved'], // TEST-NET-2
    [v4('203.0.113.0/24'), 'reserved'], // TEST-NET-3
    [v4('224.0.0.0/4'), 'multicast'],
    [v4('240.0.0.0/4'), 'reserved'],
  ]

  const IPV4_METADATA = [v4('169.254.169.254/32'), v4('169.254.170.2/32'), v4('169.254.169.123/32'), v4('100.100.100.200/32')]

  /** IPv6 prefixes whose low 32 bits (or bits 16–48 for 6to4) are an IPv4 address to classify. */
  const IPV6_MAPPED = v6('::ffff:0:0/96')
  const IPV6_COMPATIBLE = v6('::/96')
  const IPV6_SIIT = v6('::ffff:0:0:0/96')
  const IPV6_NAT64 = v6('64:ff9b::/96')
  const IPV6_6TO4 = v6('2002::/16')

  const IPV6_TABLE: [Range, AddressClass][] = [
    [v6('::/128'), 'unspecified'],
    [v6('::1/128'), 'loopback'],
    [v6('64:ff9b:1::/48'), 'reserved'], // local-use NAT64
    [v6('100::/64'), 'reserved'], // discard-only
    [v6('2001::/32'), 'reserved'], // Teredo (carries an obfuscated IPv4 client address)
    [v6('2001:db8::/32'), 'reserved'], // documentation
    [v6('2001:2::/48'), 'reserved'], // benchmarking
    [v6('2001:10::/28'), 'reserved'], // ORCHID
    [v6('2001:20::/28'), 'reserved'], // ORCHIDv2
    [v6('3fff::/20'), 'reserved'], // documentation (RFC 9637)
    [v6('5f00::/16'), 'reserved'], // SRv6 SIDs
    [v6('fc00::/7'), 'unique-local'],
    [v6('fe80::/10'), 'link-local'],
    [v6('fec0::/10'), 'private'], // deprecated site-local
    [v6('ff00::/8'), 'multicast'],
  ]
  const IPV6_GLOBAL_UNICAST = v6('2000::/3')
  const IPV6_METADATA = [v6('fd00:ec2::254/128')]
  return {
    IPV4_TABLE,
    IPV4_METADATA,
    IPV6_MAPPED,
    IPV6_COMPATIBLE,
    IPV6_SIIT,
    IPV6_NAT64,
    IPV6_6TO4,
    IPV6_TABLE,
    IPV6_GLOBAL_UNICAST,
    IPV6_METADATA,
  }
}

function classifyV4(bytes: AddressBytes): { class: AddressClass; metadata: boolean } {
  const metadata = T().IPV4_METADATA.some((r) => inRange(bytes, r))
  for (const [range, cls] of T().IPV4_TABLE) if (inRange(bytes, range)) return { class: cls, metadata }
  return { class: metadata ? 'reserved' : 'public', metadata }
}

/** The IPv4 address an IPv6 address carries, for the forms that route to it. */
export function embeddedIPv4(bytes: AddressBytes): AddressBytes | undefined {
  if (bytes.length !== 16) return undefined
  if (inRange(bytes, T().IPV6_MAPPED) || inRange(bytes, T().IPV6_SIIT) || inRange(bytes, T().IPV6_NAT64)) return bytes.slice(12)
  // ::a.b.c.d (deprecated "compatible"), but not :: and ::1 which have their own meaning
  if (inRange(bytes, T().IPV6_COMPATIBLE) && (bytes[12] | bytes[13]) !== 0) return bytes.slice(12)
  if (inRange(bytes, T().IPV6_6TO4)) return bytes.slice(2, 6)
  return undefined
}

/** Classifies parsed address bytes. */
export function classifyBytes(bytes: AddressBytes): ClassifiedAddress {
  if (bytes.length === 4) {
    const { class: cls, metadata } = classifyV4(bytes)
    return { address: formatAddress(bytes), family: 4, class: cls, ...(metadata ? { metadata } : {}) }
  }
  const inner = embeddedIPv4(bytes)
  if (inner) {
    const { class: cls, metadata } = classifyV4(inner)
    const embedded = formatAddress(inner)
    return { address: formatAddress(bytes), family: 6, class: cls, embeddedIPv4: embedded, ...(metadata ? { metadata } : {}) }
  }
  const metadata = T().IPV6_METADATA.some((r) => inRange(bytes, r))
  for (const [range, cls] of T().IPV6_TABLE) {
    if (inRange(bytes, range)) return { address: formatAddress(bytes), family: 6, class: cls, ...(metadata ? { metadata } : {}) }
  }
  const cls: AddressClass = inRange(bytes, T().IPV6_GLOBAL_UNICAST) ? 'public' : 'reserved'
  return { address: formatAddress(bytes), family: 6, class: cls }
}

/** Classifies an IP literal in any spelling; undefined when the text is not an IP address. */
export function classifyAddress(text: string): ClassifiedAddress | undefined {
  const bytes = parseAddress(text.trim() === text ? text : '')
  return bytes ? classifyBytes(bytes) : undefined
}

export const isPublicAddress = (text: string) => classifyAddress(text)?.class === 'public'

/** A CIDR block (`10.0.0.0/8`, `fd00::/8`, or a bare address meaning /32 or /128). */
export interface Cidr {
  text: string
  bytes: AddressBytes
  prefix: number
}

export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  const addr = slash >= 0 ? text.slice(0, slash) : text
  const bytes = addr.includes(':') ? parseIPv6(addr) : parseDottedQuad(addr)
  if (!bytes) return undefined
  const max = bytes.length * 8
  let prefix = max
  if (slash >= 0) {
    const p = text.slice(slash + 1)
    if (!/^\d{1,3}$/.test(p)) return undefined
    prefix = Number(p)
    if (prefix > max) return undefined
  }
  return { text: `${formatAddress(bytes)}/${prefix}`, bytes, prefix }
}

/**
 * Whether a CIDR contains an address. An IPv4 CIDR also matches the IPv4 address carried by an
 * IPv4-mapped IPv6 address, so `127.0.0.1/32` covers `::ffff:127.0.0.1` — the same socket.
 */
export function cidrContains(cidr: Cidr, bytes: AddressBytes): boolean {
  if (inRange(bytes, cidr)) return true
  if (cidr.bytes.length === 4 && bytes.length === 16 && inRange(bytes, T().IPV6_MAPPED)) return inRange(bytes.slice(12), cidr)
  return false
}

/** Where to connect for a checked address: an IPv4-mapped IPv6 address is the IPv4 socket it names. */
export function socketAddress(a: ClassifiedAddress): { address: string; family: 4 | 6 } {
  const bytes = parseAddress(a.address)
  if (bytes && bytes.length === 16 && inRange(bytes, T().IPV6_MAPPED)) return { address: formatAddress(bytes.slice(12)), family: 4 }
  return { address: a.address, family: a.family }
}
