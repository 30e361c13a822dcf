/**
 * Who is calling: a bearer JWT verified either with the deployment's HS256 secret (tokens the
 * operator issues, like the one `npm start` prints) or with the tenant identity provider's
 * published keys (a JWKS URL). Each kind of key verifies only its own algorithms: the token's
 * `alg` header picks which verifier to ask, and that verifier pins its algorithms, so an HS256
 * token signed with a public key, or an `alg: none` token, can never pass.
 */
import { hash } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { ServerToolsError } from '../../lib/errors'
import { BoundedCache } from '../../lib/runtime/bounded-cache'
import { type Logger, silentLogger } from '../../lib/runtime/logger'
import { type Hs256Failure, protectedHeader, verifyHs256 } from './hs256'

export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const
export type AsymmetricAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number]

export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600

/** The tenant's identity provider (AUTH_JWKS_URL and friends, functions/settings.ts). */
export interface IdentityProviderSettings {
  jwksUrl: string
  issuer: string
  /** A token passes when its `aud` names any of these. */
  audience: string[]
  algorithms: AsymmetricAlgorithm[]
  /** Claim carrying the tenant id, e.g. `custom:tenant`. */
  tenantClaim: string
  /** Claim carrying the scopes: a space-separated string (`scope`) or an array of strings (`scp`). */
  scopeClaim: string
  /** Least time between two key-set fetches that an unknown `kid` causes. */
  refreshCooldownMs: number
  /** Named in the RFC 9728 metadata; the issuer when not set. */
  authorizationServers: string[]
}

export interface AuthSettings {
  /** HS256 key (AUTH_JWT_SECRET); without it only identity-provider tokens are accepted. */
  jwtSecret?: string
  /** exp − iat (or exp − now when iat is later or missing) may not exceed this. */
  maxTokenLifetimeSeconds?: number
  identityProvider?: IdentityProviderSettings
  /** The URL clients use to reach the service (PUBLIC_BASE_URL); the request's origin when unset. */
  publicBaseUrl?: string
}

export interface VerifiedToken {
  tenant: string
  subject: string
  scopes: Set<string>
  /** The token's `iss`; HS256 tokens this deployment signed without one are `server-tools`. */
  issuer: string
}

/** A verdict and how long it may be reused without verifying the token again (ms since the epoch). */
export type Verdict = VerifiedToken & { until: number }

export type TokenVerifier = (token: string) => Promise<Verdict>

/** Longer than any real JWT; refused before hashing or parsing. */
const MAX_TOKEN_CHARS = 16 * 1024
/** A remembered token is re-verified after this, so a rotated secret or key takes effect within a minute. */
const VERIFIED_TTL_MS = 60_000

const unauthenticated = (why: string) => new ServerToolsError('UNAUTHENTICATED', `the bearer token is not valid: ${why}`)

export function createTokenVerifier(settings: AuthSettings, log: Logger = silentLogger): TokenVerifier {
  const maxLifetime = settings.maxTokenLifetimeSeconds ?? DEFAULT_MAX_TOKEN_LIFETIME_SECONDS
  const service = settings.jwtSecret ? serviceTokens(settings.jwtSecret) : undefined
  const idp = settings.identityProvider ? identityProviderTokens(settings.identityProvider, log) : undefined

  // An agent backend sends the same token with every call: a token that verified is remembered
  // until its `exp` (at most VERIFIED_TTL_MS). Verification costs a thread-pool round trip in
  // WebCrypto; the cache makes it a hash (~2 µs) and a Map lookup. Keys are SHA-256 digests of the
  // whole token (never of a part: a cached signature must not vouch for another payload), so the
  // cache holds no usable credential and its memory does not grow with what callers send.
  const verified = new BoundedCache<string, Verdict>(10_000)

  return async (token) => {
    if (token.length > MAX_TOKEN_CHARS) throw unauthenticated(`it is longer than ${MAX_TOKEN_CHARS} characters`)
    const key = hash('sha256', token, 'base64url') // one-shot: a third of createHash's cost
    const now = Date.now()
    const known = verified.get(key)
    if (known && known.until > now) return known
    const header = protectedHeader(token)
    if (!header) throw unauthenticated('bad signature or format')
    const alg = header.alg
    let payload: JWTPayload
    let identity: VerifiedToken
    if (alg === 'HS256' && service) {
      payload = await service.verify(token)
      identity = claimsOf(payload, 'tenant', 'scope', 'server-tools')
    } else if (idp?.accepts(alg)) {
      payload = await idp.verify(token)
      identity = claimsOf(payload, idp.settings.tenantClaim, idp.settings.scopeClaim)
    } else {
      throw unauthenticated(
        `its algorithm '${String(alg).slice(0, 20)}' is not accepted here (${[...(service ? ['HS256'] : []), ...(idp?.settings.algorithms ?? [])].join(', ')})`,
      )
    }
    checkLifetime(payload, now, maxLifetime)
    const until = Math.min((payload.exp as number) * 1000, now + VERIFIED_TTL_MS)
    return verified.set(key, { ...identity, until })
  }
}

/** HS256 with the deployment secret (./hs256.ts: node:crypto, no jose or WebCrypto on this path). */
function serviceTokens(secret: string) {
  const key = Buffer.from(secret, 'utf8')
  return {
    verify: async (token: string): Promise<JWTPayload> => {
      const result = verifyHs256(token, key, Math.floor(Date.now() / 1000))
      if (!result.ok) throw fromHs256Failure(result.failure)
      return result.payload as JWTPayload
    },
  }
}

/** A claim that failed its check, in the words both verifiers use (a missing `exp` is named as such). */
const claimRejected = (claim: string | undefined, reason: string | undefined, message: string | undefined) =>
  unauthenticated(
    claim === 'exp' && reason === 'missing'
      ? "it has no 'exp' claim (tokens must expire)"
      : `its '${claim}' claim is not accepted (${message})`,
  )

/** The same verdicts as jose's for the same token (fromJoseError). */
function fromHs256Failure(failure: Hs256Failure): ServerToolsError {
  switch (failure.kind) {
    case 'expired':
      return unauthenticated('it has expired')
    case 'claim':
      return claimRejected(failure.claim, failure.reason, failure.message)
    case 'format':
      return unauthenticated('bad signature or format')
  }
}

/**
 * A key set is read up to this many bytes (a provider's set is a few KB: Entra's ~10 KB, Cognito's
 * under 2 KB); a larger answer is cut off and counts as keys that could not be fetched (502).
 */
export const MAX_JWKS_BYTES = 256 * 1024

/** `fetch` whose body is read as a stream and refused past `max` bytes, whatever Content-Length says. */
function boundedFetch(max: number): (url: string, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const res = await fetch(url, init)
    if (!res.body) return res
    const chunks: Uint8Array[] = []
    let size = 0
    const reader = res.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > max) {
        await reader.cancel()
        throw new Error(`the key set is larger than ${max} bytes`)
      }
      chunks.push(value)
    }
    return new Response(Buffer.concat(chunks, size), { status: res.status, headers: res.headers })
  }
}

let joseModule: Promise<typeof import('jose')> | undefined
/** jose, loaded with the first identity-provider token: deployments that use only HS256 never load it. */
const jose = () => (joseModule ??= import('jose'))

/**
 * The identity provider's keys, fetched from its JWKS URL and cached; a token whose `kid` is not
 * in the cached set makes jose fetch the set again, at most once per refreshCooldownMs, so a flood
 * of made-up kids costs the provider one request per cooldown.
 */
function identityProviderTokens(settings: IdentityProviderSettings, log: Logger) {
  let keySet: Promise<ReturnType<typeof import('jose')['createRemoteJWKSet']>> | undefined
  const keys = () =>
    (keySet ??= jose().then((j) =>
      j.createRemoteJWKSet(new URL(settings.jwksUrl), {
        cooldownDuration: settings.refreshCooldownMs,
        timeoutDuration: 5_000,
        [j.customFetch]: boundedFetch(MAX_JWKS_BYTES),
      }),
    ))
  const algorithms = new Set<unknown>(settings.algorithms)
  return {
    settings,
    accepts: (alg: unknown) => algorithms.has(alg),
    verify: async (token: string) => {
      const { jwtVerify } = await jose()
      const jwks = await keys()
      try {
        const { payload } = await jwtVerify(token, jwks, {
          algorithms: settings.algorithms,
          issuer: settings.issuer,
          audience: settings.audience,
          requiredClaims: ['exp'],
        })
        return payload
      } catch (e) {
        const err = fromJoseError(e)
        if (err.code === 'UPSTREAM_FAILURE')
          log.log('warn', 'auth.jwks_unavailable', { jwksUrl: settings.jwksUrl, error: (e as Error).message })
        throw err
      }
    },
  }
}

/**
 * jose's verdicts as this service's errors: a bad token is a 401; keys that cannot be fetched (a
 * refused connection, a timeout, a non-200, a malformed key set) are the provider's fault, a 502 —
 * the URL and the cause go to the log, not to the caller.
 */
function fromJoseError(e: unknown): ServerToolsError {
  const err = e as { code?: string; claim?: string; reason?: string; message?: string }
  switch (err.code) {
    case 'ERR_JWT_EXPIRED':
      return unauthenticated('it has expired')
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return claimRejected(err.claim, err.reason, err.message)
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthenticated("no key of the identity provider matches its 'kid'")
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return unauthenticated('its algorithm is not accepted here')
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return unauthenticated('bad signature or format')
  }
  // no code: fetch itself failed (refused, DNS); these three: timeout, a set that is not a JWKS, a non-200
  const keysUnavailable = err.code === undefined || ['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC'].includes(err.code)
  if (keysUnavailable)
    return new ServerToolsError(
      'UPSTREAM_FAILURE',
      "the identity provider's keys could not be fetched; try again shortly",
      {},
      { cause: e },
    )
  return unauthenticated('bad signature or format')
}

/** Tenant, subject and scopes from the claims this issuer uses. */
function claimsOf(payload: JWTPayload, tenantClaim: string, scopeClaim: string, defaultIssuer = ''): VerifiedToken {
  const tenant = payload[tenantClaim]
  if (typeof tenant !== 'string' || typeof payload.sub !== 'string') {
    throw new ServerToolsError('UNAUTHENTICATED', `the bearer token must carry '${tenantClaim}' and 'sub' claims`)
  }
  const raw = payload[scopeClaim]
  const scopes =
    typeof raw === 'string' ? raw.split(/\s+/) : Array.isArray(raw) ? raw.filter((s): s is string => typeof s === 'string') : []
  const issuer = typeof payload.iss === 'string' ? payload.iss : defaultIssuer
  return { tenant, subject: payload.sub, scopes: new Set(scopes.filter(Boolean)), issuer }
}

/** A stolen token is useful until it expires: the deployment caps how long that may be. */
function checkLifetime(payload: JWTPayload, nowMs: number, maxSeconds: number) {
  const nowSeconds = Math.floor(nowMs / 1000)
  const issued = typeof payload.iat === 'number' ? Math.min(payload.iat, nowSeconds) : nowSeconds
  const lifetime = (payload.exp as number) - issued
  if (lifetime > maxSeconds) throw unauthenticated(`it lives ${lifetime} s, longer than this deployment allows (${maxSeconds} s)`)
}
