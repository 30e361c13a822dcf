/**
 * Our DynamoDB client (lib/stores/aws/dynamo/) held to the AWS SDK it replaces: the SigV4
 * Authorization header of @smithy/signature-v4, byte for byte, and the AttributeValue marshalling
 * of @aws-sdk/util-dynamodb with `removeUndefinedValues` (what the stores had from the
 * DocumentClient). Our wire form is the JSON protocol's, so bytes are base64 strings where the SDK
 * holds Uint8Arrays; the comparisons convert between the two and nothing else.
 * (test/architecture/dependencies.test.ts lets this file, and only this one, import @aws-sdk/*.)
 */
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb'
import { HttpRequest } from '@smithy/core/protocols'
import { Hash } from '@smithy/core/serde'
import { SignatureV4 } from '@smithy/signature-v4'
import { describe, expect, it } from 'vitest'
import { type AttributeValue, marshallItem, unmarshallItem, type WireItem } from '../../../lib/stores/aws/dynamo/attribute-values'
import { type AwsCredentials, signRequest } from '../../../lib/stores/aws/dynamo/sigv4'

// ────────── signing ──────────

class Sha256 extends Hash {
  constructor(secret?: ConstructorParameters<typeof Hash>[1]) {
    super('sha256', secret)
  }
}

const LONG_LIVED: AwsCredentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }
const TEMPORARY: AwsCredentials = {
  accessKeyId: 'ASIAEXAMPLE',
  secretAccessKey: 'c2VjcmV0L3dpdGgrc2xhc2hlcz0=',
  sessionToken: 'IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+token/with+slashes==',
}

const AT = new Date('2026-03-04T05:06:07.890Z')

/** The headers the client gives signRequest (lib/stores/aws/dynamo/client.ts, `attempt`). */
function clientHeaders(operation: string, body: string): Record<string, string> {
  return {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `DynamoDB_20120810.${operation}`,
    'content-length': String(Buffer.byteLength(body)),
  }
}

/**
 * The SDK's signer on the same request. `applyChecksum: false`: left at its default (true) the
 * signer adds and signs an `x-amz-content-sha256` header, which the SDK's DynamoDB client does send
 * but DynamoDB does not need and our client does not send; with it off the SDK signs exactly the
 * headers we send (checked below).
 */
async function sdkSign(opts: {
  host: string
  headers: Record<string, string>
  body: string
  region: string
  credentials: AwsCredentials
  at: Date
}) {
  const signer = new SignatureV4({
    service: 'dynamodb',
    region: opts.region,
    credentials: opts.credentials,
    sha256: Sha256,
    applyChecksum: false,
  })
  const [hostname, port] = opts.host.split(':')
  const request = new HttpRequest({
    method: 'POST',
    protocol: 'https:',
    hostname,
    port: port ? Number(port) : undefined,
    path: '/',
    headers: { ...opts.headers, host: opts.host },
    body: opts.body,
  })
  return (await signer.sign(request, { signingDate: opts.at })) as HttpRequest
}

const signedHeaderList = (authorization: string) => /SignedHeaders=([^,]+),/.exec(authorization)![1].split(';')

const BODIES = {
  ascii: JSON.stringify({ TableName: 'documents', Key: { scope: { S: 'acme#shop' }, path: { S: 'docs/readme.md' } } }),
  'non-ASCII': JSON.stringify({ TableName: 'documents', Key: { scope: { S: 'café#ünïcødé' }, path: { S: '日本語/ファイル 🚀.md' } } }),
}

const SIGNING_CASES = ['us-east-1', 'eu-west-3', 'ap-southeast-2'].flatMap((region) =>
  [`dynamodb.${region}.amazonaws.com`, '127.0.0.1:8000'].flatMap((host) =>
    (['long-lived', 'temporary'] as const).flatMap((kind) =>
      (Object.keys(BODIES) as (keyof typeof BODIES)[]).map((bodyKind) => ({
        region,
        host,
        kind,
        bodyKind,
        credentials: kind === 'temporary' ? TEMPORARY : LONG_LIVED,
        body: BODIES[bodyKind],
      })),
    ),
  ),
)

describe('signRequest against the SDK signer (@smithy/signature-v4)', () => {
  it.each(SIGNING_CASES)(
    'signs a GetItem in $region to $host with $kind credentials and an $bodyKind body as the SDK does',
    async ({ region, host, credentials, body }) => {
      const headers = clientHeaders('GetItem', body)
      const ours = signRequest({ method: 'POST', host, path: '/', headers, body, region, service: 'dynamodb', credentials, at: AT })
      const sdk = await sdkSign({ host, headers, body, region, credentials, at: AT })

      expect(ours.authorization).toBe(sdk.headers.authorization)
      expect(ours['x-amz-date']).toBe(sdk.headers['x-amz-date'])
      expect(ours['x-amz-security-token']).toBe(sdk.headers['x-amz-security-token'])
    },
  )

  it.each(SIGNING_CASES.filter((c) => c.bodyKind === 'ascii'))(
    'sends exactly the headers the SDK signs for $kind credentials to $host',
    async ({ region, host, credentials, body }) => {
      const headers = clientHeaders('GetItem', body)
      const ours = signRequest({ method: 'POST', host, path: '/', headers, body, region, service: 'dynamodb', credentials, at: AT })
      const sdk = await sdkSign({ host, headers, body, region, credentials, at: AT })

      const sent = Object.keys(ours)
        .filter((h) => h !== 'authorization')
        .sort()
      expect(signedHeaderList(sdk.headers.authorization)).toEqual(sent)
      expect(Object.keys(sdk.headers).sort()).toEqual(Object.keys(ours).sort())
      expect(sent).toEqual([
        'content-length',
        'content-type',
        'host',
        'x-amz-date',
        ...(credentials.sessionToken ? ['x-amz-security-token'] : []),
        'x-amz-target',
      ])
    },
  )

  it('signs other operations and other signing days as the SDK does', async () => {
    for (const [operation, at] of [
      ['PutItem', new Date('2025-12-31T23:59:59.999Z')],
      ['Query', new Date('2026-01-01T00:00:00.000Z')],
      ['BatchGetItem', new Date('2028-02-29T12:00:00.000Z')],
    ] as const) {
      const body = JSON.stringify({ TableName: 't', op: operation })
      const headers = clientHeaders(operation, body)
      const ours = signRequest({
        method: 'POST',
        host: 'dynamodb.us-west-2.amazonaws.com',
        path: '/',
        headers,
        body,
        region: 'us-west-2',
        service: 'dynamodb',
        credentials: TEMPORARY,
        at,
      })
      const sdk = await sdkSign({
        host: 'dynamodb.us-west-2.amazonaws.com',
        headers,
        body,
        region: 'us-west-2',
        credentials: TEMPORARY,
        at,
      })
      expect(ours.authorization, operation).toBe(sdk.headers.authorization)
    }
  })

  it('signs the same request with rotated credentials as the SDK does (the signing-key cache is keyed by the secret)', async () => {
    const body = BODIES.ascii
    const headers = clientHeaders('GetItem', body)
    for (const credentials of [LONG_LIVED, { ...LONG_LIVED, secretAccessKey: 'rotated-secret' }, LONG_LIVED]) {
      const ours = signRequest({
        method: 'POST',
        host: 'dynamodb.us-east-1.amazonaws.com',
        path: '/',
        headers,
        body,
        region: 'us-east-1',
        service: 'dynamodb',
        credentials,
        at: AT,
      })
      const sdk = await sdkSign({ host: 'dynamodb.us-east-1.amazonaws.com', headers, body, region: 'us-east-1', credentials, at: AT })
      expect(ours.authorization).toBe(sdk.headers.authorization)
    }
  })
})

// ────────── marshalling ──────────

const SDK_OPTIONS = { removeUndefinedValues: true }

/** The SDK's AttributeValues as JSON-protocol wire values: bytes as base64. */
function sdkToWire(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
  if (Array.isArray(v)) return v.map(sdkToWire)
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sdkToWire(x)]))
  return v
}

/** Wire AttributeValues as the SDK holds them: B and BS members as bytes. */
function wireToSdk(v: AttributeValue): unknown {
  const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'))
  if ('B' in v) return { B: bytes(v.B) }
  if ('BS' in v) return { BS: v.BS.map(bytes) }
  if ('L' in v) return { L: v.L.map(wireToSdk) }
  if ('M' in v) return { M: wireItemToSdk(v.M) }
  return v
}
const wireItemToSdk = (item: WireItem) =>
  Object.fromEntries(Object.entries(item).map(([k, v]) => [k, wireToSdk(v)])) as Parameters<typeof unmarshall>[0]

const sdkMarshall = (item: Record<string, unknown>) => sdkToWire(marshall(item, SDK_OPTIONS))

/** One item per row: what the stores put in DynamoDB. */
const ITEMS: Record<string, Record<string, unknown>> = {
  'a string': { v: 'hello' },
  'an empty string': { v: '' },
  'unicode strings': { a: 'café', b: '日本語', c: '🚀 emoji', d: 'line\nbreak\ttab', e: '\u0000nul' },
  integers: { a: 0, b: 1, c: 42, d: -7, e: Number.MAX_SAFE_INTEGER, f: Number.MIN_SAFE_INTEGER },
  floats: { a: 1.5, b: -12.25, c: 0.1 + 0.2, d: 1e-7, e: 5e-324, f: 123456.789 },
  'negative zero': { v: -0 },
  booleans: { t: true, f: false },
  null: { v: null },
  'a nested map': { m: { a: 1, b: { c: 'deep', d: [1, 'two', { e: false }] } } },
  'an empty map and an empty list': { m: {}, l: [] },
  'a list of mixed values': { l: ['a', 1, 2.5, true, null, { k: 'v' }, ['x', ['y']]] },
  'a list with undefined members': { l: [1, undefined, 'x', undefined] },
  'a map with undefined members': { m: { kept: 1, dropped: undefined, nested: { gone: undefined, here: 'yes' } } },
  'an undefined top-level attribute': { kept: 'k', dropped: undefined },
  'a Set<string>': { s: new Set(['a', 'b', 'ç']) },
  'a Set<number>': { s: new Set([1, 2.5, -3, 0]) },
  'a Set<bigint>': { s: new Set([1n, 12345678901234567890n]) },
  'a Uint8Array': { b: new Uint8Array([0, 1, 2, 253, 254, 255]) },
  'a Buffer': { b: Buffer.from('bytes ✓', 'utf8') },
  'a Uint8Array view into a larger buffer': { b: new Uint8Array(Buffer.from('0123456789').buffer, 2, 4) },
  'an empty Uint8Array': { b: new Uint8Array(0) },
  'a set of byte arrays': { bs: new Set([new Uint8Array([1, 2]), Buffer.from('xyz')]) },
  'a bigint': { n: 12345678901234567890n, m: -5n },
  'a document-store-like item': {
    scope: 'acme#shop',
    path: 'docs/readme.md',
    version: 3,
    body: 'text',
    meta: { contentType: 'text/markdown', size: 4, tags: ['a', 'b'], owner: undefined },
    labels: new Set(['x']),
    deleted: false,
    blob: null,
  },
}

describe('marshallItem against @aws-sdk/util-dynamodb marshall (removeUndefinedValues)', () => {
  it.each(Object.entries(ITEMS))('marshalls %s as the SDK does', (_, item) => {
    expect(marshallItem(item)).toEqual(sdkMarshall(item))
  })
})

describe('unmarshallItem against @aws-sdk/util-dynamodb unmarshall', () => {
  it.each(Object.entries(ITEMS).filter(([name]) => !/bigint/i.test(name)))('unmarshalls the wire form of %s as the SDK does', (_, item) => {
    const wire = marshallItem(item)
    expect(unmarshallItem(wire)).toEqual(unmarshall(wireItemToSdk(wire)))
  })

  it('unmarshalls every wire type, written as DynamoDB sends it, as the SDK does', () => {
    const wire: WireItem = {
      s: { S: 'x' },
      n: { N: '-12.50' },
      i: { N: '100' },
      b: { B: Buffer.from('hello').toString('base64') },
      t: { BOOL: true },
      z: { NULL: true },
      l: { L: [{ S: 'a' }, { N: '1' }, { L: [] }, { M: {} }] },
      m: { M: { inner: { SS: ['p', 'q'] } } },
      ss: { SS: ['a', 'b'] },
      ns: { NS: ['1', '2.5', '-3'] },
      bs: { BS: [Buffer.from([1]).toString('base64'), Buffer.from([2, 3]).toString('base64')] },
    }
    expect(unmarshallItem(wire)).toEqual(unmarshall(wireItemToSdk(wire)))
  })

  it('unmarshalls bigints (which come back as numbers when they fit) as the SDK does', () => {
    const wire = marshallItem({ n: 42n, s: new Set([1n, 2n]) })
    expect(unmarshallItem(wire)).toEqual({ n: 42, s: new Set([1, 2]) })
    expect(unmarshallItem(wire)).toEqual(unmarshall(wireItemToSdk(wire)))
  })
})

describe('values neither side stores', () => {
  const refusals: Record<string, Record<string, unknown>> = {
    'an unsafe integer number': { v: 2 ** 53 },
    'a negative unsafe integer number': { v: -(2 ** 53) - 2 },
    'a huge number': { v: 1e21 },
    NaN: { v: NaN },
    Infinity: { v: Infinity },
    '-Infinity': { v: -Infinity },
    'an unsafe integer inside a list': { l: [1, 2 ** 60] },
    'NaN inside a set': { s: new Set([1, NaN]) },
    'an empty set': { s: new Set() },
  }
  it.each(Object.entries(refusals))('both refuse %s', (_, item) => {
    expect(() => marshallItem(item)).toThrow()
    // the SDK throws too: "… greater than Number.MAX_SAFE_INTEGER", "Special numeric value NaN is
    // not allowed", "Pass a non-empty set, or options.convertEmptyValues=true."
    expect(() => marshall(item, SDK_OPTIONS)).toThrow()
  })

  it('reads a wire integer beyond 2^53 back as the bigint it was written from, as the SDK does', () => {
    for (const n of [9007199254740993n, -(2n ** 70n) - 1n, 10n ** 37n]) {
      const wire = marshallItem({ n, s: new Set([n, 1n]) })
      expect(wire).toEqual(sdkMarshall({ n, s: new Set([n, 1n]) }))
      expect(unmarshallItem(wire)).toEqual({ n, s: new Set([n, 1]) })
      expect(unmarshallItem(wire)).toEqual(unmarshall(wireItemToSdk(wire)))
    }
  })

  it('refuses a wire decimal with more significant digits than a double holds, where the SDK rounds it', () => {
    // A deliberate difference: the SDK reads 0.1234567890123456789 as 0.12345678901234568.
    for (const text of ['0.1234567890123456789', '1.000000000000000001', '-12345.678901234567891']) {
      const wire: WireItem = { n: { N: text } }
      expect(() => unmarshallItem(wire), text).toThrow(RangeError)
      expect(typeof unmarshall(wireItemToSdk(wire)).n, text).toBe('number')
    }
    // 17 significant digits, and trailing or leading zeros, are held exactly
    for (const text of ['0.12345678901234567', '100000000000000000000000', '0.000000000000000000001', '12.50000000000000000000'])
      expect(unmarshallItem({ n: { N: text } }), text).toEqual(unmarshall(wireItemToSdk({ n: { N: text } })))
  })

  it('refuses a wire number beyond 2^53 written with a decimal point or an exponent, as the SDK does, rather than rounding it', () => {
    // The SDK refuses any number beyond the safe range whatever its spelling ("… can't be
    // converted to BigInt"); attribute-values.ts promises "refused both ways rather than rounded".
    for (const text of ['9007199254740993.0', '123456789012345678.5', '1e300']) {
      const wire: WireItem = { n: { N: text } }
      expect(() => unmarshall(wireItemToSdk(wire)), text).toThrow()
      expect(() => unmarshallItem(wire), text).toThrow(RangeError)
    }
  })
})
