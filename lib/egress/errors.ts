import { type ErrorCode, ServerToolsError } from '../errors'

/** Why an outbound call did not produce a response. */
export type EgressFailure =
  | 'invalid-url'
  | 'scheme'
  | 'dns'
  | 'denied'
  | 'redirects'
  | 'unsafe-redirect'
  | 'timeout'
  | 'aborted'
  | 'too-large'
  | 'network'

const CODE: Record<EgressFailure, ErrorCode> = {
  'invalid-url': 'INVALID_INPUT',
  scheme: 'EGRESS_DENIED',
  dns: 'UPSTREAM_FAILURE',
  denied: 'EGRESS_DENIED',
  redirects: 'UPSTREAM_FAILURE',
  'unsafe-redirect': 'EGRESS_DENIED',
  timeout: 'UPSTREAM_FAILURE',
  aborted: 'UPSTREAM_FAILURE',
  'too-large': 'TOO_LARGE',
  network: 'UPSTREAM_FAILURE',
}

/**
 * An outbound call that was refused or failed. `reason` says which; messages name the host,
 * never the full URL (it may carry credentials in its query).
 */
export class EgressError extends ServerToolsError {
  constructor(
    readonly reason: EgressFailure,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(CODE[reason], message, { reason, ...details }, options)
    this.name = 'EgressError'
  }
}

export const isEgressError = (e: unknown, reason?: EgressFailure): e is EgressError =>
  e instanceof EgressError && (reason === undefined || e.reason === reason)
