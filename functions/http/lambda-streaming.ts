/**
 * The Lambda edge in response-streaming mode (Function URL invoke mode RESPONSE_STREAM): a
 * payload-format-2.0 event becomes a Request for the app, and the app's Response is written to
 * the runtime's response stream — the JSON prelude (status, headers, cookies) first, then the
 * body as it comes, bytes as they are (no base64).
 *
 * Why streaming: the client has its answer when the stream ends, while the invocation goes on
 * until the handler's promise settles. Work that must finish before the container freezes but
 * that the caller does not wait for (the usage counts, `afterResponse`) runs in that gap instead
 * of in front of every response. Streaming also lets MCP's server-sent events and large
 * documents leave as they are produced (up to 200 MB instead of the 6 MB buffered cap).
 */
import type { Writable } from 'node:stream'
import { LightHeaders, LightRequest, LightResponse } from './light-fetch'

/** The runtime's response stream: a Node writable plus the content-type setter the runtime adds. */
export interface LambdaResponseStream extends Writable {
  setContentType(type: string): void
}

/** What the Node.js runtime provides as the `awslambda` global. */
export interface AwsLambdaRuntime {
  streamifyResponse<H extends StreamingHandler>(handler: H): H
  HttpResponseStream: { from(stream: LambdaResponseStream, prelude: HttpPrelude): LambdaResponseStream }
}

export interface HttpPrelude {
  statusCode: number
  headers: Record<string, string>
  cookies: string[]
}

/** A payload-format-2.0 event (Function URL, API Gateway HTTP API): the fields read here. */
export interface HttpEventV2 {
  rawPath: string
  rawQueryString?: string
  headers?: Record<string, string | undefined>
  cookies?: string[]
  body?: string
  isBase64Encoded?: boolean
  requestContext: { domainName?: string; http: { method: string } }
}

export type StreamingHandler = (event: HttpEventV2, stream: LambdaResponseStream, context: unknown) => Promise<void>

export interface FetchApp {
  fetch(request: Request, env: Record<string, unknown>): Response | Promise<Response>
}

/** The runtime's `awslambda` global; a clear error where there is none (outside Lambda, `npm start` serves the app). */
export function lambdaRuntime(): AwsLambdaRuntime {
  // the AWS SDK's invoke store creates an `awslambda` object of its own, so look for the member
  const runtime = (globalThis as { awslambda?: Partial<AwsLambdaRuntime> }).awslambda
  if (typeof runtime?.streamifyResponse !== 'function' || !runtime.HttpResponseStream)
    throw new Error(
      'functions/api.ts is the AWS Lambda entry: it needs the Node.js runtime (the awslambda global). Run `npm start` to serve the API locally.',
    )
  return runtime as AwsLambdaRuntime
}

/**
 * The streaming handler: answers the event, ends the response stream, then awaits `afterResponse`
 * (which must not throw) before the invocation ends.
 */
export function streamingLambdaHandler(app: FetchApp, runtime: AwsLambdaRuntime, afterResponse: () => Promise<unknown>): StreamingHandler {
  return runtime.streamifyResponse(async (event, responseStream, context) => {
    try {
      let request: Request | undefined
      const body = bodyOf(event)
      try {
        request = requestOf(event, body)
      } catch (e) {
        // what hono/aws-lambda answered for an event it could not turn into a Request
        if (!(e instanceof TypeError)) throw e
      }
      const response = request
        ? await app.fetch(request, { event, requestContext: event.requestContext, lambdaContext: context, ...(body ? { body } : {}) })
        : new Response('Invalid request', { status: 400 })
      await writeResponse(runtime, responseStream, response)
    } finally {
      await afterResponse()
    }
  })
}

/**
 * The body's bytes, as the Request gets them. They are also handed to the app beside the Request
 * (`env.body`), so a route reads them as they are (functions/http/request.ts) instead of through
 * the Request's body stream.
 */
function bodyOf(event: HttpEventV2): Uint8Array | undefined {
  const method = event.requestContext.http.method
  if (event.body === undefined || method === 'GET' || method === 'HEAD') return undefined
  // bytes of their own (a small Buffer is a view into a shared pool), as Request.arrayBuffer() gave
  return event.isBase64Encoded ? new Uint8Array(Buffer.from(event.body, 'base64')) : UTF8.encode(event.body)
}

const UTF8 = new TextEncoder()

/**
 * A light Request (functions/http/light-fetch.ts): the event's method, URL, headers and body
 * bytes, with the checks the real constructor makes (a bad name, value or URL is a TypeError);
 * what only a real Request has builds one from these on first use.
 */
function requestOf(event: HttpEventV2, body: Uint8Array | undefined): Request {
  // set(), not append(): a repeated name replaces the earlier one (cookies first, as before)
  const headers = new LightHeaders()
  if (event.cookies?.length) headers.set('cookie', event.cookies.join('; '))
  for (const [name, value] of Object.entries(event.headers ?? {})) if (value) headers.set(name, headerValue(value))
  const query = event.rawQueryString ? `?${event.rawQueryString}` : ''
  const host = event.requestContext.domainName ?? headers.get('host') ?? 'localhost'
  const method = normalisedMethod(event.requestContext.http.method)
  return new LightRequest(`https://${host}${event.rawPath}${query}`, method, headers, body) as unknown as Request
}

// as the Request constructor takes a method: a token, the six standard ones upper-cased
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const NORMALISED = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'])
function normalisedMethod(method: string): string {
  if (!METHOD.test(method)) throw new TypeError(`invalid method ${JSON.stringify(method)}`)
  const upper = method.toUpperCase()
  if (upper === 'CONNECT' || upper === 'TRACE' || upper === 'TRACK') throw new TypeError(`forbidden method ${method}`)
  return NORMALISED.has(upper) ? upper : method
}

// Header values are byte strings; Lambda hands over decoded text, so anything beyond ASCII is
// percent-encoded rather than refused (hono/aws-lambda's choice too).
const headerValue = (value: string) => (/[^\x00-\x7f]/.test(value) ? encodeURIComponent(value) : value)

async function writeResponse(runtime: AwsLambdaRuntime, responseStream: LambdaResponseStream, response: Response): Promise<void> {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value
  })
  const stream = runtime.HttpResponseStream.from(responseStream, {
    statusCode: response.status,
    headers,
    cookies: response.headers.getSetCookie(),
  })
  const ended = new Promise<void>((resolve, reject) => {
    stream.once('finish', resolve)
    stream.once('error', reject)
  })
  // awaited below; marked handled now, as a body that breaks first leaves it unawaited
  ended.catch(() => {})
  // The first write sends the prelude, so there is one even for an empty body; end() takes no chunk in the runtime.
  stream.write('')
  // a light answer (functions/http/light-fetch.ts) is written as its bytes, without a web stream
  const whole = LightResponse.wholeBody(response)
  if (whole) {
    if (whole.bytes?.length) stream.write(whole.bytes)
  } else if (response.body) {
    // A body that fails halfway rejects here, and the runtime ends the stream with the error:
    // the client sees a broken response, never a truncated one that looks complete.
    const reader = response.body.getReader()
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      if (!stream.write(chunk.value)) await new Promise((resolve) => stream.once('drain', resolve))
    }
  }
  stream.end()
  await ended
}
