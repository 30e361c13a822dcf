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

export class ServerToolsError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: { errors?: Issue[]; [key: string]: unknown },
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'ServerToolsError'
  }
}

export const invalidConfig = (message: string, errors: Issue[]) => new ServerToolsError('INVALID_CONFIG', message, { errors })
export const notFound = (message: string) => new ServerToolsError('NOT_FOUND', message)
export const conflict = (message: string, cause?: unknown) => new ServerToolsError('CONFLICT', message, undefined, { cause })
export const invalidInput = (message: string, errors?: Issue[]) =>
  new ServerToolsError('INVALID_INPUT', message, errors ? { errors } : undefined)

export const isServerToolsError = (e: unknown, code?: ErrorCode): e is ServerToolsError =>
  e instanceof ServerToolsError && (code === undefined || e.code === code)
