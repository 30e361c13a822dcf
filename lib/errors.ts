/** One error model for the whole domain; functions/http/errors.ts maps each code to a status. */
export type ErrorCode =
  | 'INVALID_INPUT' // a request body or parameter that is malformed (not JSON/YAML, bad id)
  | 'INVALID_CONFIG' // a document that parses but breaks its schema
  | 'NOT_FOUND'
  | 'CONFLICT' // a version precondition failed
  | 'ALREADY_EXISTS'
  | 'PRECONDITION_REQUIRED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BUDGET_TOO_SMALL'
  | 'EGRESS_DENIED'
  | 'UPSTREAM_FAILURE'
  | 'THROTTLED'
  | 'OVERLOADED' // refused for capacity (e.g. the sandbox queue is full); details.retryAfterSeconds
  | 'RATE_LIMITED' // this caller asked too often (e.g. process spawns per tenant); details.retryAfterSeconds
  | 'QUOTA_EXCEEDED' // a tenant's quota rule refused the call; details.retryAfterSeconds

/** One problem inside a document or body: where (pointer and/or line/column) and what. */
export interface Issue {
  message: string
  pointer?: string
  line?: number
  column?: number
  path?: string
}

/**
 * One issue as a sentence for a message that joins several: its line, when it has one, goes in
 * brackets. An Issue's own message never carries it — a reader shows `line` beside it.
 */
export const issueText = (i: Issue) => (i.line !== undefined ? `${i.message} (line ${i.line})` : i.message)

/** An answer lists at most this many issues; one more issue says how many were left out. */
export const MAX_LISTED_ISSUES = 20

/**
 * `issues` as an answer lists them: the first MAX_LISTED_ISSUES and, past those, one issue saying
 * how many more there were. A body with 100,000 unknown keys is 100,000 problems, but the answer
 * (and every message joined from it) stays the size of twenty.
 */
export function capIssues(issues: Issue[]): Issue[] {
  if (issues.length <= MAX_LISTED_ISSUES) return issues
  const more = issues.length - MAX_LISTED_ISSUES
  return [
    ...issues.slice(0, MAX_LISTED_ISSUES),
    { message: `and ${more} more problem${more > 1 ? 's' : ''} (only the first ${MAX_LISTED_ISSUES} are listed)` },
  ]
}

export class ServerToolsError extends Error {
  readonly details?: { errors?: Issue[]; [key: string]: unknown }
  constructor(
    readonly code: ErrorCode,
    message: string,
    details?: { errors?: Issue[]; [key: string]: unknown },
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'ServerToolsError'
    this.details =
      details?.errors && details.errors.length > MAX_LISTED_ISSUES ? { ...details, errors: capIssues(details.errors) } : details
  }
}

export const invalidConfig = (message: string, errors: Issue[]) => new ServerToolsError('INVALID_CONFIG', message, { errors })
export const notFound = (message: string) => new ServerToolsError('NOT_FOUND', message)
export const conflict = (message: string, cause?: unknown) => new ServerToolsError('CONFLICT', message, undefined, { cause })
export const invalidInput = (message: string, errors?: Issue[]) =>
  new ServerToolsError('INVALID_INPUT', message, errors ? { errors } : undefined)

export const isServerToolsError = (e: unknown, code?: ErrorCode): e is ServerToolsError =>
  e instanceof ServerToolsError && (code === undefined || e.code === code)
