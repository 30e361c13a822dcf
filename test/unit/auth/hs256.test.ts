/**
 * The HS256 verifier (functions/http/hs256.ts) against jose's jwtVerify with the options it
 * replaced: the same tokens pass, the same fail, for the same reason.
 */
import { createHmac } from 'node:crypto'
import { jwtVerify } from 'jose'
import { describe, expect, it } from 'vitest'
import { protectedHeader, signHs256, verifyHs256 } from '../../../functions/http/hs256'

const SECRET = 'hs256-test-secret'
const NOW = Math.floor(Date.now() / 1000)
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
const sign = (header: unknown, payload: unknown, secret = SECRET) => {
  const input = `${b64(header)}.${b64(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
const H = { alg: 'HS256', typ: 'JWT' }
const good = { sub: 'alice', tenant: 'acme', exp: NOW + 600 }

/** Verdict of jose for the token: ok, expired, claim:<name>, or format. */
async function joseVerdict(token: string): Promise<string> {
  try {
    await jwtVerify(token, new TextEncoder().encode(SECRET), {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
      currentDate: new Date(NOW * 1000),
    })
    return 'ok'
  } catch (e) {
    const err = e as { code?: string; claim?: string }
    if (err.code === 'ERR_JWT_EXPIRED') return 'expired'
    if (err.code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') return `claim:${err.claim}`
    return 'format'
  }
}

function ourVerdict(token: string): string {
  const r = verifyHs256(token, Buffer.from(SECRET), NOW)
  if (r.ok) return 'ok'
  return r.failure.kind === 'claim' ? `claim:${r.failure.claim}` : r.failure.kind
}

const valid = sign(H, good)
const cases: [string, string][] = [
  ['a valid token', valid],
  ['no typ header', sign({ alg: 'HS256' }, good)],
  ['expired', sign(H, { ...good, exp: NOW - 1 })],
  ['expiring this second', sign(H, { ...good, exp: NOW })],
  ['without exp', sign(H, { sub: 'alice' })],
  ['exp as a string', sign(H, { ...good, exp: String(NOW + 600) })],
  ['nbf in the future', sign(H, { ...good, nbf: NOW + 60 })],
  ['nbf reached', sign(H, { ...good, nbf: NOW })],
  ['nbf as a string', sign(H, { ...good, nbf: 'soon' })],
  ['iat as a string', sign(H, { ...good, iat: 'now' })],
  ['signed with another secret', sign(H, good, 'another-secret')],
  ['a payload changed after signing', `${valid.split('.')[0]}.${b64({ ...good, tenant: 'globex' })}.${valid.split('.')[2]}`],
  ['alg none, unsigned', `${b64({ alg: 'none' })}.${b64(good)}.`],
  ['alg HS512 header over an HS256 signature', sign({ alg: 'HS512' }, good)],
  ['a crit header', sign({ ...H, crit: ['exp'], exp: 1 }, good)],
  ['b64 false', sign({ ...H, b64: false, crit: ['b64'] }, good)],
  ['an array payload', sign(H, [good])],
  ['a payload that is not JSON', sign(H, 'not json')],
  ['a header that is not an object', sign('"HS256"', good)],
  ['two parts', valid.split('.').slice(0, 2).join('.')],
  ['four parts', `${valid}.x`],
  ['junk characters in the signature', `${valid}!!`],
  ['an empty string', ''],
  ['a truncated signature', valid.slice(0, -2)],
]

describe('the HS256 verifier', () => {
  it.each(cases)('decides like jose for %s', async (_name, token) => {
    expect(ourVerdict(token)).toBe(await joseVerdict(token))
  })

  it('is stricter than jose in one way: padding on a part is refused (RFC 7515 base64url has none)', async () => {
    expect(await joseVerdict(`${valid}=`)).toBe('ok')
    expect(ourVerdict(`${valid}=`)).toBe('format')
  })

  it('signs tokens that jose verifies with the same secret', async () => {
    const token = signHs256(good, SECRET)
    expect(await joseVerdict(token)).toBe('ok')
    expect(ourVerdict(token)).toBe('ok')
  })

  it('passes the claims of a valid token through', () => {
    expect(verifyHs256(valid, Buffer.from(SECRET), NOW)).toEqual({ ok: true, payload: good })
  })

  it('reads the protected header of a token, and nothing from a text that is not one', () => {
    expect(protectedHeader(valid)).toEqual(H)
    expect(protectedHeader('not-a-token')).toBeUndefined()
    expect(protectedHeader(`${b64('[1]')}.x.y`)).toBeUndefined()
  })
})
