/**
 * The one place errors become HTTP: RFC 9457 problem+json. A Record over every ErrorCode, so a
 * new code does not compile until someone decides its status.
 */
import type { Context } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { ErrorCode, Issue } from '../../lib/errors'
import { ServerToolsError } from '../../lib/errors'
import type { Logger } from '../../lib/runtime/logger'

export const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  INVALID_INPUT: 400,
  INVALID_CONFIG: 422,
  NOT_FOUND: 404,
  CONFLICT: 412,
  ALREADY_EXISTS: 412,
  PRECONDITION_REQUIRED: 428,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BUDGET_TOO_SMALL: 422,
  EGRESS_DENIED: 403,
  UPSTREAM_FAILURE: 502,
  THROTTLED: 503,
  OVERLOADED: 503,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
}

const TITLES: Partial<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

export function problem(
  c: Context,
  status: ContentfulStatusCode,
  detail: string,
  extra: { code?: string; errors?: Issue[]; [k: string]: unknown } = {},
) {
  return c.newResponse(JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra }), status, {
    'content-type': 'application/problem+json',
  })
}

export const toProblem = (log: Logger) => (err: Error, c: Context) => {
  if (err instanceof ServerToolsError) {
    const status = STATUS[err.code]
    if (status === 503 || status === 429) c.header('retry-after', String(retryAfterSeconds(err.details?.retryAfterSeconds)))
    const { errors, ...rest } = err.details ?? {}
    return problem(c, status, err.message, { code: err.code, ...(errors ? { errors } : {}), ...pick(rest) })
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode
    return problem(c, status, err.message || TITLES[status] || 'Error')
  }
  log.log('error', 'http.unhandled', { method: c.req.method, path: c.req.path, error: err.message, stack: err.stack })
  return problem(c, 500, 'Something went wrong on our side; it has been logged.')
}

/** A whole number of seconds (RFC 9110 §10.2.3), 1 when the error names none. */
const retryAfterSeconds = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 1 ? Math.ceil(v) : 1)

/** Only plain, JSON-safe detail fields travel to the client. */
function pick(rest: Record<string, unknown>) {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(rest))
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v) || Array.isArray(v)) out[k] = v
  return out
}
