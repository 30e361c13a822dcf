/**
 * A stand-in for what the AWS Lambda Node.js runtime gives a response-streaming handler, so tests
 * and benches can run functions/api.ts outside Lambda. Plain JavaScript: fresh `node` processes
 * (bench/coldstart.ts, test/deploy/cold-start.test.ts) import it before the bundle.
 *
 * It follows aws-lambda-nodejs-runtime-interface-client (src/HttpResponseStream.js,
 * src/ResponseStream.js, Runtime.handleOnceStreaming):
 * - `awslambda.streamifyResponse` marks the handler as streaming;
 * - `awslambda.HttpResponseStream.from` sets the stream's content type and, on the first write,
 *   writes the JSON prelude and 8 NUL bytes before the chunk;
 * - `end()` takes no chunk; the response is complete when the stream finishes, the invocation
 *   when the handler's promise settles, and a handler that settles with the stream still open
 *   fails the invocation.
 */
import { Writable } from 'node:stream'

const PRELUDE_TYPE = 'application/vnd.awslambda.http-integration-response'
const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming')
const DELIMITER = Buffer.alloc(8)

/**
 * Defines the `awslambda` global's streaming members, as the runtime does before loading a handler.
 * Added to an existing object: the AWS SDK's @aws/lambda-invoke-store creates the global too.
 */
export function installLambdaRuntime() {
  globalThis.awslambda ??= {}
  Object.assign(globalThis.awslambda, {
    streamifyResponse(handler) {
      handler[STREAMING] = 'response'
      return handler
    },
    HttpResponseStream: {
      from(stream, prelude) {
        stream.setContentType(PRELUDE_TYPE)
        const json = JSON.stringify(prelude)
        stream._onBeforeFirstWrite = (write) => {
          write(json)
          write(new Uint8Array(8))
        }
        return stream
      },
    },
  })
}

/**
 * Invokes a streaming handler with one event. `response` settles when the stream ends (what a
 * Function URL client waits for), with the status, headers, cookies and body the prelude and the
 * bytes after it describe; `done` settles when the invocation ends.
 */
export function invokeStreaming(handler, event, context = {}) {
  if (handler?.[STREAMING] !== 'response') throw new Error('not a response-streaming handler (awslambda.streamifyResponse)')
  const chunks = []
  let contentType = 'application/octet-stream'
  let written = false
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(Buffer.from(chunk))
      callback()
    },
  })
  stream.setContentType = (type) => {
    if (written) throw new Error('Cannot set content-type, too late.')
    contentType = type
  }
  const write = stream.write.bind(stream)
  stream.write = (chunk, encoding, callback) => {
    if (!written && typeof stream._onBeforeFirstWrite === 'function') stream._onBeforeFirstWrite((c) => write(c))
    written = true
    return write(chunk, encoding, callback)
  }
  const end = stream.end.bind(stream)
  stream.end = (callback) => end(typeof callback === 'function' ? callback : undefined)
  const response = new Promise((resolve, reject) => {
    stream.once('finish', () => resolve(parseResponse(contentType, Buffer.concat(chunks))))
    stream.once('error', reject)
  })
  const done = (async () => {
    const result = handler(event, stream, context)
    if (!(result instanceof Promise)) throw new Error('Streaming does not support non-async handlers.')
    await result
    if (!stream.writableFinished) throw new Error('Response stream is not finished.')
  })()
  // a failed invocation also fails a response that never finished
  done.catch((e) => stream.destroy(e))
  return { response, done }
}

function parseResponse(contentType, bytes) {
  if (contentType !== PRELUDE_TYPE) return { statusCode: 200, headers: { 'content-type': contentType }, cookies: [], body: bytes }
  const at = bytes.indexOf(DELIMITER)
  if (at < 0) throw new Error('http-integration-response without the 8-byte delimiter after its prelude')
  const prelude = JSON.parse(bytes.subarray(0, at).toString('utf8'))
  return {
    statusCode: prelude.statusCode ?? 200,
    headers: prelude.headers ?? {},
    cookies: prelude.cookies ?? [],
    body: bytes.subarray(at + DELIMITER.length),
  }
}
