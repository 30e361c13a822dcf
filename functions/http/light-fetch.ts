/**
 * `Headers` and `Response` that do not load Node's undici, for the Lambda entry only.
 *
 * Why: the first `Headers`, `Request` or `Response` a Node process touches loads undici, the
 * largest single step of a cold start (~15–30 ms of CPU, the floor's too: Hono builds every
 * answer from these globals). A cold tool call needs none of what undici adds: its request and
 * answer are bytes and a few headers. These stand-ins keep a header list and, for a body that
 * is already whole (text, bytes, none), the bytes; anything else — a stream or form body, a
 * body read as a stream, `formData`, `Response.redirect`/`error` — is handed to the real class,
 * loaded then. `x instanceof Response` and `x instanceof Headers` hold for the real objects too,
 * so a `fetch` result still passes the checks written against the globals.
 *
 * The edge builds its request with `lightRequest` (never a global: `new Request` elsewhere, the
 * MCP transport's, stays real) and writes a light answer's bytes as they are.
 */

type RealHeaders = typeof globalThis.Headers
type RealResponse = typeof globalThis.Response
type RealRequest = typeof globalThis.Request

/** Node's own lazy getters for the globals, kept before they are replaced: calling one loads undici. */
function realGlobal<T>(name: 'Headers' | 'Response' | 'Request'): () => T {
  const d = Object.getOwnPropertyDescriptor(globalThis, name)
  if (!d) throw new Error(`no global ${name} to stand in for`)
  let value: T | undefined = d.get ? undefined : (d.value as T)
  return () => {
    value ??= d.get?.call(globalThis) as T
    return value
  }
}

let realHeaders: () => RealHeaders = () => globalThis.Headers
let realResponse: () => RealResponse = () => globalThis.Response
let realRequest: () => RealRequest = () => globalThis.Request

// RFC 9110 token; values are byte strings without NUL, CR or LF (the fetch standard's checks)
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const BAD_VALUE = /[\0\r\n]|[^\x00-\xff]/
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g

function checkedName(name: unknown): string {
  const n = String(name)
  if (!TOKEN.test(n)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(n)}`)
  return n.toLowerCase()
}

function checkedValue(value: unknown): string {
  const v = String(value).replace(HTTP_WHITESPACE, '')
  if (BAD_VALUE.test(v)) throw new TypeError(`Headers: invalid header value ${JSON.stringify(v)}`)
  return v
}

type HeadersInit = ConstructorParameters<typeof globalThis.Headers>[0]
type BodyInit = ConstructorParameters<typeof globalThis.Response>[0]
const isLightHeaders = (h: unknown): h is LightHeaders => LightHeaders.is(h)

/** The fetch standard's `Headers`, in the order and with the checks undici's has. */
export class LightHeaders {
  /** lower-cased name → its values in order */
  #list = new Map<string, string[]>()

  constructor(init?: HeadersInit | LightHeaders) {
    if (init === undefined || init === null) return
    if (typeof init !== 'object' && typeof init !== 'function') throw new TypeError('Headers: init must be an object')
    if (isLightHeaders(init)) {
      for (const [k, v] of init.#list) this.#list.set(k, [...v])
      return
    }
    const iterator = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator]
    if (typeof iterator === 'function') {
      for (const pair of init as Iterable<unknown>) {
        const p = typeof pair === 'string' ? undefined : [...(pair as Iterable<unknown>)]
        if (p?.length !== 2) throw new TypeError('Headers: each init pair must be [name, value]')
        this.append(p[0] as string, p[1] as string)
      }
      return
    }
    for (const k of Object.keys(init)) this.append(k, (init as Record<string, string>)[k])
  }

  static is(h: unknown): h is LightHeaders {
    return typeof h === 'object' && h !== null && #list in h
  }

  static [Symbol.hasInstance](v: unknown): boolean {
    return isLightHeaders(v) || (typeof v === 'object' && v !== null && v instanceof realHeaders())
  }

  append(name: string, value: string): void {
    const n = checkedName(name)
    const v = checkedValue(value)
    const values = this.#list.get(n)
    if (values) values.push(v)
    else this.#list.set(n, [v])
  }

  set(name: string, value: string): void {
    this.#list.set(checkedName(name), [checkedValue(value)])
  }

  delete(name: string): void {
    this.#list.delete(checkedName(name))
  }

  get(name: string): string | null {
    return this.#list.get(checkedName(name))?.join(', ') ?? null
  }

  has(name: string): boolean {
    return this.#list.has(checkedName(name))
  }

  getSetCookie(): string[] {
    return [...(this.#list.get('set-cookie') ?? [])]
  }

  /** Sorted by name, `set-cookie` one entry per value, every other name's values joined. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#list.keys()].sort()) {
      const values = this.#list.get(name)
      if (!values) continue
      if (name === 'set-cookie') for (const v of values) yield [name, v]
      else yield [name, values.join(', ')]
    }
  }

  *keys(): IterableIterator<string> {
    for (const [k] of this.entries()) yield k
  }

  *values(): IterableIterator<string> {
    for (const [, v] of this.entries()) yield v
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries()
  }

  forEach(callback: (value: string, name: string, parent: LightHeaders) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) callback.call(thisArg, v, k, this)
  }

  get [Symbol.toStringTag]() {
    return 'Headers'
  }
}

/** A body that is whole already: what a light Response or Request keeps as bytes. */
type WholeBody = string | ArrayBuffer | ArrayBufferView

const isWhole = (body: unknown): body is WholeBody => typeof body === 'string' || body instanceof ArrayBuffer || ArrayBuffer.isView(body)

const UTF8 = new TextEncoder()
const bytesOf = (body: WholeBody): Uint8Array =>
  typeof body === 'string'
    ? UTF8.encode(body)
    : body instanceof ArrayBuffer
      ? new Uint8Array(body.slice(0))
      : new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength))

/** WebIDL's `unsigned short`, as the real constructor reads `init.status` (201.7 is 201). */
const unsignedShort = (v: unknown) => {
  const n = Math.trunc(Number(v))
  return Number.isFinite(n) ? ((n % 65536) + 65536) % 65536 : 0
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304])
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/

interface LightInit {
  status?: number
  statusText?: string
  headers?: HeadersInit | LightHeaders
}

const isLightResponse = (r: unknown): r is LightResponse => LightResponse.is(r)

/**
 * The body reads a light Response and a light Request share: while no real object was built,
 * the whole bytes are read once (a second read throws, as the real classes do; no body reads
 * empty every time); once one was, it answers.
 */
abstract class WholeBodyReads {
  abstract get headers(): Headers
  /** the real object once it was built (reads go to it), else undefined */
  protected abstract built(): Response | Request | undefined
  /** the bytes, marked used (throws when they were; no body: empty, never used) */
  protected abstract take(): Uint8Array

  async arrayBuffer(): Promise<ArrayBuffer> {
    const real = this.built()
    if (real) return real.arrayBuffer()
    const b = this.take()
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer
  }
  async bytes(): Promise<Uint8Array> {
    return new Uint8Array(await this.arrayBuffer())
  }
  async text(): Promise<string> {
    const real = this.built()
    return real ? real.text() : new TextDecoder().decode(this.take())
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text())
  }
  async blob(): Promise<Blob> {
    const real = this.built()
    return real ? real.blob() : new Blob([this.take()], { type: this.headers.get('content-type') ?? '' })
  }
}

/**
 * A `Response` whose body is whole (or absent) keeps its status, headers and bytes; reading the
 * body as a stream, `clone`-free reads aside, builds the real one from them. Any other body is
 * the real `Response` from the start, reached through this one.
 */
export class LightResponse extends WholeBodyReads {
  #bytes: Uint8Array | null = null
  #status = 200
  #statusText = ''
  #headers: LightHeaders | undefined
  #used = false
  /** the real Response: from the start for a body that is not whole, else built on demand */
  #real: Response | undefined

  constructor(body?: BodyInit | null, init?: LightInit | LightResponse) {
    super()
    if (body !== undefined && body !== null && !isWhole(body)) {
      const R = realResponse()
      this.#real = new R(body, init as ResponseInit)
      return
    }
    const status = init?.status === undefined ? 200 : unsignedShort(init.status)
    if (status < 200 || status > 599)
      throw new RangeError(`Response: init.status must be in the range of 200 to 599, inclusive (got ${status})`)
    const statusText = init?.statusText === undefined ? '' : String(init.statusText)
    if (!REASON_PHRASE.test(statusText)) throw new TypeError('Response: invalid statusText')
    this.#status = status
    this.#statusText = statusText
    this.#headers = new LightHeaders(init?.headers as HeadersInit)
    if (body !== undefined && body !== null) {
      if (NULL_BODY_STATUS.has(status)) throw new TypeError(`Response: a response with status ${status} cannot have a body`)
      this.#bytes = bytesOf(body)
      if (typeof body === 'string' && !this.#headers.has('content-type')) this.#headers.set('content-type', 'text/plain;charset=UTF-8')
    }
  }

  static is(r: unknown): r is LightResponse {
    return typeof r === 'object' && r !== null && #bytes in r
  }

  static override [Symbol.hasInstance](v: unknown): boolean {
    return isLightResponse(v) || (typeof v === 'object' && v !== null && v instanceof realResponse())
  }

  static json(data: unknown, init?: LightInit): LightResponse {
    const text = JSON.stringify(data)
    if (text === undefined) throw new TypeError('Response.json: the value is not JSON-serializable')
    const headers = new LightHeaders(init?.headers as HeadersInit)
    if (!headers.has('content-type')) headers.set('content-type', 'application/json')
    return new LightResponse(text, { status: init?.status, statusText: init?.statusText, headers })
  }

  static redirect(url: string | URL, status?: number): Response {
    return realResponse().redirect(url, status as Parameters<RealResponse['redirect']>[1])
  }

  static error(): Response {
    return realResponse().error()
  }

  /** The real Response with this one's status, headers and body, for what only it can do. */
  #materialise(): Response {
    if (this.#real) return this.#real
    const R = realResponse()
    this.#real = new R(this.#bytes as BodyInit | null, {
      status: this.#status,
      statusText: this.#statusText,
      headers: [...(this.#headers as LightHeaders)],
    })
    return this.#real
  }

  /** Light and unread: its bytes, for the edge to write as they are (undefined otherwise). */
  static wholeBody(r: unknown): { bytes: Uint8Array | null } | undefined {
    if (!isLightResponse(r) || r.#real || r.#used) return undefined
    if (r.#bytes !== null) r.#used = true
    return { bytes: r.#bytes }
  }

  get status() {
    return this.#real && !this.#headers ? this.#real.status : this.#status
  }
  get statusText() {
    return this.#real && !this.#headers ? this.#real.statusText : this.#statusText
  }
  get ok() {
    return this.status >= 200 && this.status <= 299
  }
  get headers(): Headers {
    return (this.#headers ?? (this.#real as Response).headers) as Headers
  }
  get type(): Response['type'] {
    return this.#real && !this.#headers ? this.#real.type : 'default'
  }
  get url() {
    return this.#real && !this.#headers ? this.#real.url : ''
  }
  get redirected() {
    return this.#real && !this.#headers ? this.#real.redirected : false
  }
  get body() {
    if (!this.#real && this.#bytes === null) return null
    return this.#materialise().body
  }
  get bodyUsed() {
    return this.#real ? this.#real.bodyUsed : this.#used
  }

  protected override built(): Response | undefined {
    return this.#real
  }
  protected override take(): Uint8Array {
    // no body: nothing to use up, every read answers empty (as the real one)
    if (this.#bytes === null) return new Uint8Array(0)
    if (this.#used) throw new TypeError('Response: the body has already been read')
    this.#used = true
    return this.#bytes
  }
  async formData(): Promise<FormData> {
    return this.#materialise().formData()
  }
  clone(): LightResponse | Response {
    if (this.#real) return this.#real.clone()
    if (this.#used && this.#bytes !== null) throw new TypeError('Response: the body has already been read')
    return new LightResponse(this.#bytes, { status: this.#status, statusText: this.#statusText, headers: this.#headers })
  }
  get [Symbol.toStringTag]() {
    return 'Response'
  }
}

const REAL = Symbol('the real Request')

/**
 * The edge's request: method, URL, headers and whole body bytes, read as they are. What only a
 * real `Request` has (its body as a stream, `clone`, `formData`, the fetch options) builds one.
 */
export class LightRequest extends WholeBodyReads {
  readonly method: string
  readonly url: string
  readonly headers: Headers
  #bytes: Uint8Array | undefined
  #used = false
  #signal: AbortSignal | undefined
  #real: Request | undefined

  constructor(url: string, method: string, headers: LightHeaders, body: Uint8Array | undefined) {
    super()
    // as the Request constructor checks them (the URL's parse error is the edge's 400)
    const parsed = new URL(url)
    if (parsed.username || parsed.password) throw new TypeError('Request: a URL with credentials cannot be requested')
    this.url = parsed.href
    this.method = method
    this.headers = headers as unknown as Headers
    this.#bytes = body
  }

  /** Never aborted: the runtime ends the invocation, not the client (as the real Request's). */
  get signal(): AbortSignal {
    this.#signal ??= new AbortController().signal
    return this.#signal
  }

  [REAL](): Request {
    if (!this.#real) {
      const R = realRequest()
      this.#real = new R(this.url, {
        method: this.method,
        headers: [...(this.headers as unknown as LightHeaders)],
        body: this.#bytes,
        signal: this.signal,
      })
    }
    return this.#real
  }

  get body() {
    return this.#bytes === undefined ? null : this[REAL]().body
  }
  get bodyUsed() {
    return this.#real ? this.#real.bodyUsed : this.#used
  }
  protected override built(): Request | undefined {
    return this.#real
  }
  protected override take(): Uint8Array {
    if (this.#bytes === undefined) return new Uint8Array(0)
    if (this.#used) throw new TypeError('Request: the body has already been read')
    this.#used = true
    return this.#bytes
  }
  async formData(): Promise<FormData> {
    return this[REAL]().formData()
  }
  clone(): Request {
    return this[REAL]().clone()
  }
  get [Symbol.toStringTag]() {
    return 'Request'
  }
}

// the fetch options a route might read: answered by the real Request
for (const key of [
  'cache',
  'credentials',
  'destination',
  'duplex',
  'integrity',
  'keepalive',
  'mode',
  'redirect',
  'referrer',
  'referrerPolicy',
])
  Object.defineProperty(LightRequest.prototype, key, {
    get(this: LightRequest) {
      return (this[REAL]() as unknown as Record<string, unknown>)[key]
    },
  })

let installed = false

/**
 * Replaces the global `Headers` and `Response` with the light ones, for the whole process: call it
 * once, in the Lambda entry, before the first request. `Request`, `fetch` and the rest stay Node's.
 */
export function installLightFetch(): void {
  if (installed) return
  installed = true
  realHeaders = realGlobal<RealHeaders>('Headers')
  realResponse = realGlobal<RealResponse>('Response')
  realRequest = realGlobal<RealRequest>('Request')
  for (const [name, value] of [
    ['Headers', LightHeaders],
    ['Response', LightResponse],
  ] as const)
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false })
}
