/**
 * Where the DynamoDB client's credentials come from. Lambda puts the function's role credentials
 * in its environment, and functions/ passes them in as static credentials, so the common path
 * loads nothing. Anything else (a profile, SSO, a container or instance role) goes through the
 * SDK's default provider chain, imported on the first request that needs it, never at cold start.
 */
import { type Clock, systemClock } from '../../../runtime/clock'
import type { AwsCredentials } from './sigv4'

export type CredentialSource = AwsCredentials | (() => Promise<AwsCredentials>)

/** Refresh temporary credentials this long before they expire (the SDK's own margin). */
const REFRESH_MARGIN_MS = 5 * 60_000

/** The SDK's chain (env, SSO, ini, process, web identity, ECS, IMDS), loaded on first use. */
export function sdkDefaultCredentials(): () => Promise<AwsCredentials> {
  let provider: Promise<() => Promise<AwsCredentials>> | undefined
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then((m) => m.defaultProvider())
    return (await provider)()
  }
}

/** A getter that caches what the source returns until shortly before it expires. */
export function cachedCredentials(source: CredentialSource, clock: Clock = systemClock): () => Promise<AwsCredentials> {
  if (typeof source !== 'function') {
    const fixed = Promise.resolve(source)
    return () => fixed
  }
  let value: AwsCredentials | undefined
  // one fetch at a time, shared by every request that finds the credentials missing or stale
  let pending: Promise<AwsCredentials> | undefined
  return () => {
    if (value && (!value.expiration || value.expiration.getTime() - clock.now() > REFRESH_MARGIN_MS)) return Promise.resolve(value)
    pending ??= source()
      .then((c) => (value = c))
      .finally(() => {
        pending = undefined
      })
    return pending
  }
}
