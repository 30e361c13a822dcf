/**
 * HS256 JWTs signed with the deployment secret, verified with node:crypto: the HMAC is one
 * synchronous call, where jose + WebCrypto cost ~4 ms of the first request of every cold start
 * (the modules, the WebCrypto set-up, a thread-pool round trip). jose still verifies identity
 * provider tokens (functions/http/token-verifier.ts), loaded when the first such token arrives.
 *
 * The checks are jose's for `jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['exp'] })`:
 * a compact JWS of three base64url parts, a JSON-object header with `alg: HS256` and no `crit`
 * (no extension this verifier understands) nor `b64: false`, a signature compared in constant
 * time, a JSON-object payload, `exp` present and in the future, `nbf` (when present) reached,
 * and `exp`, `nbf`, `iat` numbers when present.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export type Hs256Failure =
  | { kind: 'format' }
  | { kind: 'expired' }
  | { kind: 'claim'; claim: string; reason: 'missing' | 'invalid' | 'check_failed'; message: string }

export type Hs256Result = { ok: true; payload: Record<string, unknown> } | { ok: false; failure: Hs256Failure }

const BASE64URL = /^[A-Za-z0-9_-]*$/
const FORMAT: Hs256Result = { ok: false, failure: { kind: 'format' } }

/** The decoded JSON object of a base64url part, or undefined. */
function jsonObject(part: string): Record<string, unknown> | undefined {
  if (!BASE64URL.test(part)) return undefined
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** The protected header of a compact JWS/JWT (for picking a verifier), or undefined when it is not one. */
export function protectedHeader(token: string): Record<string, unknown> | undefined {
  const dot = token.indexOf('.')
  return dot > 0 ? jsonObject(token.slice(0, dot)) : undefined
}

/** A compact HS256 JWT of these claims. */
export function signHs256(claims: Record<string, unknown>, key: Buffer | string): string {
  const input = `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
  return `${input}.${createHmac('sha256', key).update(input, 'ascii').digest('base64url')}`
}

export function verifyHs256(token: string, key: Buffer, nowSeconds: number): Hs256Result {
  const parts = token.split('.')
  if (parts.length !== 3) return FORMAT
  const [h, p, s] = parts
  const header = jsonObject(h)
  if (header?.alg !== 'HS256' || header.crit !== undefined || header.b64 === false) return FORMAT
  if (!BASE64URL.test(s)) return FORMAT
  const expected = createHmac('sha256', key).update(`${h}.${p}`, 'ascii').digest()
  const given = Buffer.from(s, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return FORMAT
  const payload = jsonObject(p)
  if (!payload) return FORMAT

  const claim = (name: string, reason: 'missing' | 'invalid' | 'check_failed', message: string): Hs256Result => ({
    ok: false,
    failure: { kind: 'claim', claim: name, reason, message },
  })
  for (const name of ['iat', 'nbf', 'exp']) {
    if (payload[name] !== undefined && typeof payload[name] !== 'number') return claim(name, 'invalid', `"${name}" claim must be a number`)
  }
  if (typeof payload.nbf === 'number' && payload.nbf > nowSeconds) return claim('nbf', 'check_failed', '"nbf" claim timestamp check failed')
  if (payload.exp === undefined) return claim('exp', 'missing', 'missing required "exp" claim')
  if ((payload.exp as number) <= nowSeconds) return { ok: false, failure: { kind: 'expired' } }
  return { ok: true, payload }
}
