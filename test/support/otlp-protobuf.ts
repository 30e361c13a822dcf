/**
 * Decodes an OTLP ExportTraceServiceRequest (protobuf) into plain values, every field at its
 * proto3 default when absent, so two encoders that differ only in which defaults they write
 * decode equal. Written from opentelemetry/proto trace/v1 and common/v1; tests only.
 */

type Field = { wire: number; value: bigint | Buffer }

function fields(buf: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>()
  let pos = 0
  const varint = (): bigint => {
    let result = 0n
    let shift = 0n
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint')
      const b = buf[pos++]
      result |= BigInt(b & 127) << shift
      if ((b & 128) === 0) return result
      shift += 7n
    }
  }
  while (pos < buf.length) {
    const tag = Number(varint())
    const wire = tag & 7
    let value: bigint | Buffer
    if (wire === 0) value = varint()
    else if (wire === 1) {
      value = buf.readBigUInt64LE(pos)
      pos += 8
    } else if (wire === 5) {
      value = BigInt(buf.readUInt32LE(pos))
      pos += 4
    } else if (wire === 2) {
      const n = Number(varint())
      if (pos + n > buf.length) throw new Error('truncated field')
      value = buf.subarray(pos, pos + n)
      pos += n
    } else throw new Error(`wire type ${wire}`)
    const list = out.get(tag >>> 3) ?? []
    list.push({ wire, value })
    out.set(tag >>> 3, list)
  }
  return out
}

const all = (f: Map<number, Field[]>, n: number) => f.get(n) ?? []
const last = (f: Map<number, Field[]>, n: number) => all(f, n).at(-1)?.value
const str = (f: Map<number, Field[]>, n: number) => ((last(f, n) as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8')
const hex = (f: Map<number, Field[]>, n: number) => ((last(f, n) as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex')
const int = (f: Map<number, Field[]>, n: number) => (last(f, n) as bigint | undefined) ?? 0n

export type DecodedValue = string | boolean | bigint | number | DecodedValue[] | Record<string, unknown> | Buffer | null

function anyValue(buf: Buffer): DecodedValue {
  const f = fields(buf)
  if (f.has(1)) return str(f, 1)
  if (f.has(2)) return int(f, 2) !== 0n
  if (f.has(3)) return BigInt.asIntN(64, int(f, 3))
  if (f.has(4)) {
    const b = Buffer.alloc(8)
    b.writeBigUInt64LE(int(f, 4))
    return b.readDoubleLE(0)
  }
  if (f.has(5)) return all(fields(last(f, 5) as Buffer), 1).map((v) => anyValue(v.value as Buffer))
  if (f.has(6)) return attributes(fields(last(f, 6) as Buffer), 1)
  if (f.has(7)) return last(f, 7) as Buffer
  return null
}

function attributes(f: Map<number, Field[]>, n: number): Record<string, DecodedValue> {
  const out: Record<string, DecodedValue> = {}
  for (const kv of all(f, n)) {
    const k = fields(kv.value as Buffer)
    out[str(k, 1)] = k.has(2) ? anyValue(last(k, 2) as Buffer) : null
  }
  return out
}

export function decodeTraceRequest(body: Buffer) {
  return all(fields(body), 1).map((rs) => {
    const r = fields(rs.value as Buffer)
    const resource = fields((last(r, 1) as Buffer | undefined) ?? Buffer.alloc(0))
    return {
      resource: { attributes: attributes(resource, 1), droppedAttributesCount: int(resource, 2) },
      schemaUrl: str(r, 3),
      scopeSpans: all(r, 2).map((ss) => {
        const s = fields(ss.value as Buffer)
        const scope = fields((last(s, 1) as Buffer | undefined) ?? Buffer.alloc(0))
        return {
          scope: { name: str(scope, 1), version: str(scope, 2), attributes: attributes(scope, 3), droppedAttributesCount: int(scope, 4) },
          schemaUrl: str(s, 3),
          spans: all(s, 2).map((sp) => decodeSpan(sp.value as Buffer)),
        }
      }),
    }
  })
}

function decodeSpan(buf: Buffer) {
  const f = fields(buf)
  const status = fields((last(f, 15) as Buffer | undefined) ?? Buffer.alloc(0))
  return {
    traceId: hex(f, 1),
    spanId: hex(f, 2),
    traceState: str(f, 3),
    parentSpanId: hex(f, 4),
    name: str(f, 5),
    kind: int(f, 6),
    startTimeUnixNano: int(f, 7),
    endTimeUnixNano: int(f, 8),
    attributes: attributes(f, 9),
    droppedAttributesCount: int(f, 10),
    events: all(f, 11).map((e) => {
      const ev = fields(e.value as Buffer)
      return { timeUnixNano: int(ev, 1), name: str(ev, 2), attributes: attributes(ev, 3), droppedAttributesCount: int(ev, 4) }
    }),
    droppedEventsCount: int(f, 12),
    links: all(f, 13).map((l) => {
      const li = fields(l.value as Buffer)
      return {
        traceId: hex(li, 1),
        spanId: hex(li, 2),
        traceState: str(li, 3),
        attributes: attributes(li, 4),
        droppedAttributesCount: int(li, 5),
        flags: int(li, 6),
      }
    }),
    droppedLinksCount: int(f, 14),
    status: { message: str(status, 2), code: int(status, 3) },
    flags: int(f, 16),
  }
}
