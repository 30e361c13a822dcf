/**
 * AWS Signature Version 4 for a request with a body in hand (DynamoDB's JSON protocol), after
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html.
 * test/unit/stores/dynamo-sdk-conformance.test.ts signs the same requests with the SDK's signer
 * (@smithy/signature-v4) and expects the same Authorization header, byte for byte.
 */
import { createHash, createHmac } from 'node:crypto'

export interface AwsCredentials {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  /** When temporary credentials stop working; absent for long-lived keys. */
  expiration?: Date
}

export interface SignInput {
  method: string
  /** `host[:port]`, exactly as sent in the Host header. */
  host: string
  path: string
  /** Lower-case names. Every header given is signed; Host, X-Amz-Date and the token are added. */
  headers: Record<string, string>
  body: string
  region: string
  service: string
  credentials: AwsCredentials
  /** The signing time (the client corrects it for clock skew). */
  at: Date
}

const ALGORITHM = 'AWS4-HMAC-SHA256'

/** The headers to send: the given ones plus host, x-amz-date, the session token and authorization. */
export function signRequest(input: SignInput): Record<string, string> {
  const amzDate = input.at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
  const day = amzDate.slice(0, 8)
  const headers: Record<string, string> = { ...input.headers, host: input.host, 'x-amz-date': amzDate }
  if (input.credentials.sessionToken) headers['x-amz-security-token'] = input.credentials.sessionToken

  const names = Object.keys(headers).sort()
  const signedHeaders = names.join(';')
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]!.trim().replace(/\s+/g, ' ')}\n`).join('')
  const canonicalRequest = [input.method, input.path, '', canonicalHeaders, signedHeaders, hex(input.body)].join('\n')
  const scope = `${day}/${input.region}/${input.service}/aws4_request`
  const stringToSign = [ALGORITHM, amzDate, scope, hex(canonicalRequest)].join('\n')
  const signature = createHmac('sha256', signingKey(input.credentials.secretAccessKey, day, input.region, input.service))
    .update(stringToSign)
    .digest('hex')
  headers.authorization = `${ALGORITHM} Credential=${input.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`
  return headers
}

const hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex')

/** The derived key changes once a day per secret, region and service; four HMACs saved per request. */
const keys = new Map<string, Buffer>()
function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const id = `${day}\n${region}\n${service}\n${secret}`
  let key = keys.get(id)
  if (!key) {
    const hmac = (k: string | Buffer, data: string) => createHmac('sha256', k).update(data, 'utf8').digest()
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request')
    if (keys.size >= 16) keys.clear() // a new day or rotated credentials: the old keys are dead
    keys.set(id, key)
  }
  return key
}
