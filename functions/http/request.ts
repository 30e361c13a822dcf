/** Reading requests the same way in every route: ids, bodies, versions. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import type { Context } from 'hono'
import { JsonByteScan } from '../../lib/config/json-byte-scan'
import { CHUNK_CHARS, type ItemLimits, parseJsonInSlices } from '../../lib/config/json-slices'
import { jsonSyntaxIssue, jsonTooDeep, MAX_NESTING_DEPTH } from '../../lib/config/nesting'
import type { YamlParsing } from '../../lib/config/yaml'
import { MAX_DOCUMENT_BYTES } from '../../lib/documents/ports'
import type { Preconditions } from '../../lib/documents/preconditions'
import { invalidInput, ServerToolsError } from '../../lib/errors'
import { type CallSignal, DeferredSignal } from '../../lib/runtime/deferred-signal'
import { ID_PATTERN, isValidProjectId, TENANT_LAYER_ID } from './auth'
import { headerOf } from './headers'

export function projectParam(c: Context): string {
  const project = c.req.param('project') ?? ''
  if (!isValidProjectId(project)) {
    throw invalidInput(`project id '${project.slice(0, 80)}' must match ${ID_PATTERN} or be '${TENANT_LAYER_ID}'`, [
      { pointer: '/project', message: 'invalid project id' },
    ])
  }
  return project
}

export const tenantParam = (c: Context) => c.req.param('tenant') as string

const TEXT_TYPES = [
  'application/yaml',
  'application/x-yaml',
  'text/yaml',
  'text/x-yaml',
  'application/json',
  'text/plain',
  'text/markdown',
  'text/javascript',
  'application/javascript',
  'application/octet-stream',
]

/**
 * Reads a body's chunks as they arrive and refuses it the moment a budget is certainly passed,
 * before the body is whole: `kept` are the chunks read before this one.
 */
export interface BodyGuard {
  feed(chunk: Uint8Array, kept: readonly Uint8Array[]): Error | undefined
}

/** The body as UTF-8 text, refusing what is too large or not text (or what `guard` refuses while it streams). */
export async function bodyText(c: Context, opts: { allowAnyText?: boolean; guard?: BodyGuard } = {}): Promise<string> {
  const type = mediaTypeOf(c)
  if (type && !TEXT_TYPES.includes(type) && !(opts.allowAnyText && type.startsWith('text/'))) {
    throw new ServerToolsError(
      'UNSUPPORTED_MEDIA_TYPE',
      `content type '${type}' is not accepted; send application/yaml or application/json`,
    )
  }
  const declared = Number(headerOf(c, 'content-length') ?? 0)
  if (declared > MAX_DOCUMENT_BYTES) throw bodyTooLarge(c)
  const buf = await rawBody(c, opts.guard)
  if (buf.byteLength > MAX_DOCUMENT_BYTES) throw bodyTooLarge(c)
  try {
    return UTF8.decode(buf)
  } catch {
    throw invalidInput('the body is not valid UTF-8 text')
  }
}

/** Stateless between calls (never asked to `stream`), so one decoder serves every request. */
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** The content type without its parameters, lower-cased (`''` when absent). */
const mediaTypeOf = (c: Context) => (headerOf(c, 'content-type') ?? '').split(';')[0].trim().toLowerCase()

/**
 * A 413 leaves the rest of the body unread on the connection: answered on a kept-alive socket,
 * the client's next request would be read after those bytes (or hang behind a detached
 * request), so the answer also closes the connection.
 */
export const bodyTooLarge = (c: Context) => {
  const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing
  if (outgoing && typeof outgoing.setHeader === 'function' && !outgoing.headersSent) outgoing.setHeader('connection', 'close')
  return new ServerToolsError('TOO_LARGE', `the body may be at most ${MAX_DOCUMENT_BYTES} bytes`)
}

/**
 * The body's bytes, never more than the limit. On @hono/node-server the IncomingMessage is read
 * directly: materialising a web Request for it (a stream, an AbortController) measured as the
 * largest single cost of a tool call. On Lambda the edge passes the event's body beside the Request;
 * elsewhere (app.request) the Request's body is read.
 */
export function rawBody(c: Context, guard?: BodyGuard): Promise<Uint8Array> {
  // no async frames of its own: the body is read once per call, and each frame is promises more
  const env = c.env as { incoming?: IncomingMessage; body?: unknown } | undefined
  const incoming = env?.incoming
  if (incoming instanceof Readable && !incoming.readableDidRead) return readIncoming(c, incoming, guard)
  // On Lambda the edge hands over the event's body as bytes (functions/http/lambda-streaming.ts):
  // read through the Request, the same bytes would go through a web stream first. Either way the
  // body is whole already, so `guard` has nothing left to save: the sliced parse checks the same
  // budgets before it parses anything.
  if (env?.body instanceof Uint8Array) return Promise.resolve(kept(c, env.body))
  return c.req.arrayBuffer().then((bytes) => kept(c, new Uint8Array(bytes)))
}

/** Kept for the audit entry's content hash (functions/http/observe.ts): the bytes the route read. */
function kept(c: Context, body: Uint8Array): Uint8Array {
  c.set(REQUEST_BODY, body)
  return body
}

export const REQUEST_BODY = 'requestBody' as const

/**
 * Listeners rather than `for await`: the async iterator costs a promise per chunk and its own
 * machinery (~9 µs of CPU per small body over HTTP, scratch measurement in
 * docs/operations/cold-start-and-latency.md).
 */
function readIncoming(c: Context, incoming: IncomingMessage, guard: BodyGuard | undefined): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    // gone before this route read it: no event would come
    if (incoming.destroyed) return reject(bodyEnded(incoming.errored ?? undefined))
    const chunks: Buffer[] = []
    let size = 0
    const done = (settle: () => void) => {
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('error', onError)
      incoming.off('close', onClose)
      settle()
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_DOCUMENT_BYTES) {
        done(() => reject(bodyTooLarge(c)))
        // As Node's own stream destroyer (which `for await` used) ends a server request: detached
        // from its socket first, so the 413 still goes out while nothing more is kept.
        ;(incoming as { socket: unknown }).socket = null
        incoming.destroy()
        return
      }
      const refusal = guard?.feed(chunk, chunks)
      // Refused while it streams: what was kept is let go, and the rest of the body is read by
      // nobody (the stream flows on with no listener; the server drains it once the answer is
      // out), so the whole body never exists as one buffer or one string.
      if (refusal) done(() => reject(refusal))
      else chunks.push(chunk)
    }
    const onEnd = () => done(() => resolve(kept(c, Buffer.concat(chunks, size))))
    // The client went away (or timed out) mid-body: its error, not the service's — a 400 nobody
    // reads, never a logged 500 (one aborted upload was one error line per request).
    const onError = (e: unknown) => done(() => reject(bodyEnded(e)))
    const onClose = () => done(() => reject(bodyEnded(incoming.errored ?? undefined)))
    incoming.on('data', onData)
    incoming.once('end', onEnd)
    incoming.once('error', onError)
    incoming.once('close', onClose)
  })
}

const bodyEnded = (cause: unknown) =>
  new ServerToolsError('INVALID_INPUT', 'the request body ended before it was complete (the client closed the connection)', undefined, {
    cause,
  })

/**
 * The request's abort signal: it aborts when the client goes away before the answer is sent, and
 * a tool call hands it to the running tool. On @hono/node-server, `c.req.raw.signal` materialises
 * a whole web Request (its headers copied, the body wrapped as a web stream, an AbortController),
 * which cost a tool call over HTTP more than everything else on its path (bench/usage); the
 * signal is taken from the Node response instead, aborted as the adapter itself would abort it:
 * on 'close' before the answer was written — and only when a tool first asks for it
 * (lib/runtime/deferred-signal.ts). Elsewhere (Lambda, app.request) the Request is real already
 * and its own signal is used.
 */
export function requestSignal(c: Context): CallSignal {
  const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined
  const incoming = env?.incoming
  const outgoing = env?.outgoing
  if (!incoming || !outgoing || typeof outgoing.once !== 'function') return c.req.raw.signal
  const abortReason = () => incoming.errored ?? new DOMException('Client connection prematurely closed.', 'AbortError')
  // closed before the answer was written: the client went away
  const left = () => outgoing.destroyed && !outgoing.writableFinished
  // made when a tool first asks for it (lib/runtime/deferred-signal.ts); already aborted if the client left before that
  return new DeferredSignal(left, () => {
    const controller = new AbortController()
    if (left()) controller.abort(abortReason())
    else
      outgoing.once('close', () => {
        if (!outgoing.writableFinished) controller.abort(abortReason())
      })
    return controller.signal
  })
}

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']

/**
 * A JSON object body (YAML only when the content type says YAML); 400 with the position when it
 * does not parse. The nesting is checked by a linear scan before any parser runs, and a JSON body
 * that JSON.parse refuses is refused — never handed to the (far slower) YAML parser (issue 10 F3).
 * A JSON body longer than one parse chunk is parsed in slices (lib/config/json-slices.ts), so no
 * single stretch of its scan or parse holds the event loop for more than a fraction of a
 * millisecond; `itemLimits` refuses an over-long array from that scan, before anything is parsed.
 */
export async function objectBody(c: Context, yaml: YamlParsing, itemLimits?: ItemLimits): Promise<Record<string, unknown>> {
  const type = mediaTypeOf(c)
  const text = await bodyText(c, { guard: YAML_TYPES.includes(type) ? undefined : jsonGuard(c, itemLimits) })
  if (!text.trim()) return {}
  let data: unknown
  if (YAML_TYPES.includes(type)) {
    const parsed = await yaml.parse(text, { tenant: tenantParam(c) })
    if (!parsed.ok) throw invalidInput('the body is not valid YAML', parsed.issues)
    data = parsed.value.data
  } else if (text.length > CHUNK_CHARS) {
    const parsed = await parseJsonInSlices(text, { itemLimits: itemLimits?.limits })
    if (!parsed.ok) {
      if ('overLimit' in parsed) throw itemLimits!.refuse(parsed.overLimit.member, parsed.overLimit.items)
      throw parsed.tooDeep
        ? invalidInput(`the body is nested deeper than ${MAX_NESTING_DEPTH} levels`, [parsed.issue])
        : invalidInput('the body is not valid JSON', [parsed.issue])
    }
    data = parsed.value
  } else {
    const deep = jsonTooDeep(text)
    if (deep) throw invalidInput(`the body is nested deeper than ${MAX_NESTING_DEPTH} levels`, [deep])
    try {
      data = JSON.parse(text)
    } catch {
      throw invalidInput('the body is not valid JSON', [jsonSyntaxIssue(text)])
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw invalidInput('the body must be a JSON object', [{ pointer: '', message: 'expected an object' }])
  return data as Record<string, unknown>
}

/**
 * The budgets the sliced parse checks (nesting depth, `itemLimits`), checked on the bytes as they
 * arrive (lib/config/json-byte-scan.ts): an over-long `models` list is refused at its limit + 1,
 * whatever follows it, with nothing of the body decoded (issue 21 N5). A body that declares it
 * fits one parse chunk is not streamed: the whole of it costs less than the scan's own setup.
 */
function jsonGuard(c: Context, itemLimits: ItemLimits | undefined): BodyGuard | undefined {
  const declared = headerOf(c, 'content-length')
  if (declared !== undefined && Number(declared) <= CHUNK_CHARS) return undefined
  const scan = new JsonByteScan(MAX_NESTING_DEPTH, itemLimits?.limits)
  return {
    feed(chunk, kept) {
      const refusal = scan.feed(chunk)
      if (!refusal) return undefined
      if (refusal.kind === 'overLimit') return itemLimits!.refuse(refusal.member, refusal.atLeast, { atLeast: true })
      // the position is counted in characters, as the parsed text's would be: only the bytes up to
      // the bracket that went too deep are decoded, once
      const before = kept.reduce((sum, k) => sum + k.length, 0)
      const prefix = Buffer.concat([...kept, chunk.subarray(0, refusal.offset - before + 1)])
      const issue = jsonTooDeep(LENIENT_UTF8.decode(prefix))
      return invalidInput(`the body is nested deeper than ${refusal.max} levels`, issue ? [issue] : [])
    },
  }
}

const LENIENT_UTF8 = new TextDecoder('utf-8')

export const etag = (version: number) => `"${version}"`

/**
 * `If-Match` and `If-None-Match` as RFC 9110 §13.1.1–2 define them: `*` or a comma-separated list
 * of entity-tags (`"3"`, `W/"3"`). A malformed header is a 400; a well-formed tag that names no
 * version of a document (our ETags are `"<version>"`) just never matches. If-Match compares
 * strongly (a weak tag never matches), If-None-Match weakly.
 */
export function preconditionsOf(c: Context): Preconditions {
  const out: Preconditions = {}
  const ifMatch = headerOf(c, 'if-match')
  const ifNoneMatch = headerOf(c, 'if-none-match')
  if (ifMatch !== undefined) out.ifMatch = entityTags('If-Match', ifMatch, 'strong')
  if (ifNoneMatch !== undefined) out.ifNoneMatch = entityTags('If-None-Match', ifNoneMatch, 'weak')
  return out
}

const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/

function entityTags(header: string, value: string, comparison: 'strong' | 'weak'): '*' | number[] {
  if (value.trim() === '*') return '*'
  const versions: number[] = []
  const items = value.split(',').map((t) => t.trim())
  // A list may carry empty elements (RFC 9110 §5.6.1), but not be empty as a whole.
  if (items.every((t) => t === '')) throw badTag(header, value)
  for (const item of items) {
    if (!item) continue
    const m = ENTITY_TAG.exec(item)
    if (!m) throw badTag(header, value)
    if (m[1] && comparison === 'strong') continue
    if (/^(0|[1-9]\d{0,14})$/.test(m[2])) versions.push(Number(m[2]))
  }
  return versions
}

const badTag = (header: string, value: string) =>
  invalidInput(`${header} must be '*' or a list of quoted entity-tags such as "3" or W/"3", got '${value.slice(0, 60)}'`, [
    { pointer: `/headers/${header.toLowerCase()}`, message: 'malformed entity-tag' },
  ])
