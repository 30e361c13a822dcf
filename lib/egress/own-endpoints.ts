/**
 * The service's own listeners — its data stores when they run beside it (the embedded dynalite
 * and s3rver of `npm start`), its HTTP port, the Lambda runtime API, container credential
 * endpoints. No tool may call them, whatever an allow-list says: they trust whoever can reach
 * them (an emulator has no authorization; the runtime API hands out the invocation), so a tool
 * reaching them would bypass tenants, auth and versions. The composition roots (functions/)
 * know them and hand them to the egress client; the guard checks every hop, redirects included.
 *
 * An endpoint is `scheme://host:port/…`, `host:port` or `[v6]:port`. What it covers:
 * - bound to a loopback or unspecified address (`127.0.0.1`, `::1`, `0.0.0.0`, `::`) or to
 *   `localhost`: that port on every loopback and unspecified address — `127.0.0.2`, `[::1]`,
 *   `0.0.0.0` and `::ffff:127.0.0.1` all reach a listener on 127.0.0.1 or on every interface;
 * - bound to every interface (`0.0.0.0`, `::`): also that port on every non-public address
 *   (the machine's private addresses reach it too);
 * - any other address: that address and port; a name: that name and port.
 */
import { ServerToolsError } from '../errors'
import { type Cidr, type ClassifiedAddress, cidrContains, parseAddress, parseCidr } from './address'
import { normalizeHost, splitPort } from './allow-list'

let local: Cidr[] | undefined
const LOCAL = () => (local ??= ['127.0.0.0/8', '::1/128', '0.0.0.0/8', '::/128'].map((c) => parseCidr(c)!))

export class OwnEndpoints {
  private readonly blocks: { cidr: Cidr; port: number }[] = []
  private readonly names: { host: string; port: number }[] = []
  /** Ports open on every interface: refused on every non-public address. */
  private readonly everyInterface = new Set<number>()

  /** Read but not yet classified: the address work waits for the first check (cold start). */
  private readonly pending: { host: string; port: number }[] = []

  constructor(endpoints: Iterable<string> = []) {
    for (const e of endpoints) this.add(e)
  }

  /** Adds a listener; an endpoint that cannot be read is an INVALID_CONFIG error (a setting is wrong). */
  add(endpoint: string): this {
    this.pending.push(readEndpoint(endpoint))
    return this
  }

  private classify() {
    for (const endpoint of this.pending.splice(0)) this.classifyOne(endpoint)
  }

  private classifyOne({ host, port }: { host: string; port: number }) {
    const name = normalizeHost(host)
    const bytes = parseAddress(name)
    if (!bytes) {
      if (name === 'localhost' || name.endsWith('.localhost')) for (const cidr of LOCAL()) this.blocks.push({ cidr, port })
      this.names.push({ host: name, port })
    } else if (LOCAL().some((c) => cidrContains(c, bytes))) {
      for (const cidr of LOCAL()) this.blocks.push({ cidr, port })
      if (bytes.every((b) => b === 0)) this.everyInterface.add(port)
    } else this.blocks.push({ cidr: parseCidr(name)!, port })
  }

  /** Whether `port` of this address (reached through the name `host`) is one of the service's own listeners. */
  covers(host: string, address: ClassifiedAddress, port: number): boolean {
    if (this.pending.length) this.classify()
    if (this.everyInterface.has(port) && address.class !== 'public') return true
    if (this.names.some((n) => n.port === port && n.host === normalizeHost(host))) return true
    const candidates = [parseAddress(address.address)!, ...(address.embeddedIPv4 ? [parseAddress(address.embeddedIPv4)!] : [])]
    return this.blocks.some((b) => b.port === port && candidates.some((bytes) => cidrContains(b.cidr, bytes)))
  }
}

function readEndpoint(endpoint: string): { host: string; port: number } {
  const text = endpoint.trim()
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw invalid(endpoint)
    }
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : NaN
    if (!url.hostname || !Number.isInteger(port)) throw invalid(endpoint)
    return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port }
  }
  const split = splitPort(text)
  if (!split?.host || typeof split.port !== 'number') throw invalid(endpoint)
  return { host: split.host, port: split.port }
}

const invalid = (endpoint: string) =>
  new ServerToolsError('INVALID_CONFIG', `'${endpoint}' is not an endpoint of this service: write host:port, [v6]:port or a URL`, {
    endpoint,
  })
