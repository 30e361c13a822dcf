/**
 * Plain values ↔ DynamoDB AttributeValues (the JSON protocol's wire form), with the rules the
 * stores relied on from the SDK's DocumentClient (`removeUndefinedValues`, numbers as JS numbers):
 * undefined members are dropped, a Set becomes SS/NS/BS, bytes travel as base64. An integer beyond
 * 2^53 travels as a bigint both ways (written from one, read back as one, as the SDK reads it); a
 * number that neither a JS number nor a bigint holds exactly (a fraction beyond 2^53, more than 17
 * significant digits) is refused when read rather than rounded. Anything else (a class instance, a
 * function, NaN, an empty set) is a programming error and throws.
 * test/unit/stores/dynamo-sdk-conformance.test.ts compares both directions with @aws-sdk/util-dynamodb.
 */
export type AttributeValue =
  | { S: string }
  | { N: string }
  | { B: string }
  | { BOOL: boolean }
  | { NULL: true }
  | { L: AttributeValue[] }
  | { M: Record<string, AttributeValue> }
  | { SS: string[] }
  | { NS: string[] }
  | { BS: string[] }

export type Item = Record<string, unknown>
export type WireItem = Record<string, AttributeValue>

export function marshallItem(item: object): WireItem {
  const out: WireItem = {}
  for (const [k, v] of Object.entries(item)) if (v !== undefined) out[k] = marshallValue(v)
  return out
}

export function unmarshallItem(item: WireItem): Item {
  const out: Item = {}
  for (const [k, v] of Object.entries(item)) out[k] = unmarshallValue(v)
  return out
}

export function marshallValue(v: unknown): AttributeValue {
  if (v === null) return { NULL: true }
  switch (typeof v) {
    case 'string':
      return { S: v }
    case 'number':
      return { N: numberText(v) }
    case 'bigint':
      return { N: v.toString() }
    case 'boolean':
      return { BOOL: v }
    case 'object':
      break
    default:
      throw new TypeError(`cannot store a ${typeof v} in DynamoDB`)
  }
  if (v instanceof Uint8Array) return { B: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') }
  if (Array.isArray(v)) return { L: v.filter((x) => x !== undefined).map(marshallValue) }
  if (v instanceof Set) return marshallSet(v)
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null)
    throw new TypeError(`cannot store a ${proto?.constructor?.name ?? 'class'} instance in DynamoDB`)
  return { M: marshallItem(v as Item) }
}

export function unmarshallValue(v: AttributeValue): unknown {
  if ('S' in v) return v.S
  if ('N' in v) return numberValue(v.N)
  if ('BOOL' in v) return v.BOOL
  if ('NULL' in v) return null
  if ('M' in v) return unmarshallItem(v.M)
  if ('L' in v) return v.L.map(unmarshallValue)
  if ('SS' in v) return new Set(v.SS)
  if ('NS' in v) return new Set(v.NS.map(numberValue))
  if ('B' in v) return new Uint8Array(Buffer.from(v.B, 'base64'))
  if ('BS' in v) return new Set(v.BS.map((b) => new Uint8Array(Buffer.from(b, 'base64'))))
  throw new TypeError(`unknown DynamoDB attribute type ${Object.keys(v).join(',')}`)
}

function marshallSet(set: Set<unknown>): AttributeValue {
  const members = [...set].filter((x) => x !== undefined)
  if (members.length === 0) throw new TypeError('cannot store an empty set in DynamoDB')
  if (members.every((m) => typeof m === 'string')) return { SS: members as string[] }
  if (members.every((m) => typeof m === 'number' || typeof m === 'bigint'))
    return { NS: members.map((m) => (typeof m === 'bigint' ? m.toString() : numberText(m as number))) }
  if (members.every((m) => m instanceof Uint8Array)) return { BS: members.map((m) => Buffer.from(m as Uint8Array).toString('base64')) }
  throw new TypeError('a set stored in DynamoDB holds only strings, only numbers or only bytes')
}

function numberText(n: number): string {
  if (!Number.isFinite(n)) throw new TypeError(`cannot store ${n} in DynamoDB`)
  if (Number.isInteger(n) && !Number.isSafeInteger(n))
    throw new RangeError(`${n} is beyond the integers a JS number holds exactly; store it as a bigint`)
  return String(n)
}

/** The most significant digits a double holds so that its text reads back as the same value. */
const MAX_SIGNIFICANT_DIGITS = 17

function numberValue(text: string): number | bigint {
  const n = Number(text)
  if (!Number.isFinite(n)) throw new RangeError(`the stored number ${text} does not fit a JS number`)
  if (Math.abs(n) > Number.MAX_SAFE_INTEGER) {
    // an integer written as one comes back as a bigint, as the SDK reads it; anything else would be rounded
    if (/^-?\d+$/.test(text)) return BigInt(text)
    throw new RangeError(`the stored number ${text} does not fit a JS number exactly`)
  }
  if (significantDigits(text) > MAX_SIGNIFICANT_DIGITS)
    throw new RangeError(`the stored number ${text} has more significant digits than a JS number holds`)
  return n
}

function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').split(/e/i)[0].replace('.', '')
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length
}
