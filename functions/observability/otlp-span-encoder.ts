/**
 * OTLP protobuf (opentelemetry/proto/trace/v1) written one span at a time, as each span ends, into
 * a byte buffer that a batch reuses: the span object can die young instead of waiting in a queue
 * for its batch, and a batch is bytes, not objects (see encoded-batch-processor.ts for why).
 *
 * One pass per span, no intermediate objects: ids go from hex straight to bytes, ASCII strings
 * byte by byte, a nested message's length is written after its body (one byte reserved, the body
 * moved in the rare case the length needs more). Fields at their proto3 default (zero counts, an
 * unset status) are left out, as the encoding allows; the decoded message equals the one the
 * SDK's own serializer writes for the same span (test/integration/otlp-protocol.test.ts).
 */
import type { Attributes, AttributeValue, HrTime, Link } from '@opentelemetry/api'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base'

export interface Scope {
  name: string
  version?: string
  schemaUrl?: string
  attributes?: Attributes
}

const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200

/** Hex digit → value; anything else reads as 0 (the SDK only hands out lowercase hex ids). */
const HEX = new Uint8Array(128)
for (let i = 0; i < 10; i++) HEX[48 + i] = i
for (let i = 0; i < 6; i++) {
  HEX[97 + i] = 10 + i
  HEX[65 + i] = 10 + i
}

export class ProtobufBytes {
  buf: Buffer
  pos = 0

  constructor(size = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(size)
  }

  reserve(n: number) {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const grown = Buffer.allocUnsafe(size)
    this.buf.copy(grown, 0, 0, this.pos)
    this.buf = grown
  }

  tag(field: number, wireType: number) {
    this.varint((field << 3) | wireType)
  }

  /** A non-negative integer below 2^53. */
  varint(v: number) {
    this.reserve(10)
    const buf = this.buf
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128
      v = Math.floor(v / 128)
    }
    buf[this.pos++] = v
  }

  /** An int64 (a negative one in two's complement, ten bytes). */
  int64(v: number) {
    if (v >= 0 && v < 2 ** 53) return this.varint(v)
    const high = Math.floor(v / 2 ** 32)
    let lo = (v - high * 2 ** 32) >>> 0
    let hi = high >>> 0
    this.reserve(10)
    while (hi > 0 || lo > 127) {
      this.buf[this.pos++] = (lo & 127) | 128
      lo = ((lo >>> 7) | (hi << 25)) >>> 0
      hi >>>= 7
    }
    this.buf[this.pos++] = lo
  }

  fixed32(v: number) {
    this.reserve(4)
    this.buf.writeUInt32LE(v >>> 0, this.pos)
    this.pos += 4
  }

  double(v: number) {
    this.reserve(8)
    this.buf.writeDoubleLE(v, this.pos)
    this.pos += 8
  }

  /** HrTime [seconds, nanoseconds] as fixed64 nanoseconds, every product below 2^53. */
  time(t: HrTime) {
    const [seconds, nanos] = t
    const low16 = seconds % 65536
    const high = Math.floor(seconds / 65536) * 1e9 // × 2^16 below
    const a = low16 * 1e9 + nanos
    const highLow = high % 65536
    const sumLow = highLow * 65536 + (a % 2 ** 32)
    const lo = sumLow % 2 ** 32
    const hi = Math.floor(high / 65536) + Math.floor(a / 2 ** 32) + Math.floor(sumLow / 2 ** 32)
    this.reserve(8)
    this.buf.writeUInt32LE(lo >>> 0, this.pos)
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4)
    this.pos += 8
  }

  /** A length-delimited field of the bytes a hex id stands for. */
  hexBytes(field: number, hex: string) {
    const n = hex.length >> 1
    this.tag(field, 2)
    this.reserve(n + 1)
    const buf = this.buf
    buf[this.pos++] = n
    for (let i = 0; i < n; i++) buf[this.pos++] = (HEX[hex.charCodeAt(2 * i) & 127] << 4) | HEX[hex.charCodeAt(2 * i + 1) & 127]
  }

  string(field: number, s: string) {
    this.tag(field, 2)
    const n = s.length
    if (n < 128) {
      this.reserve(n + 1)
      const buf = this.buf
      const start = this.pos + 1
      let i = 0
      for (; i < n; i++) {
        const c = s.charCodeAt(i)
        if (c > 127) break
        buf[start + i] = c
      }
      if (i === n) {
        buf[this.pos] = n
        this.pos = start + n
        return
      }
    }
    const bytes = Buffer.byteLength(s, 'utf8')
    this.varint(bytes)
    this.reserve(bytes)
    this.pos += this.buf.write(s, this.pos, bytes, 'utf8')
  }

  /**
   * Starts a nested message: returns where its length goes, `reserved` bytes (1 or 2) kept for it.
   * Two for a message that is usually 128 bytes to 16 KiB long (a span): its body then stays where
   * it was written, instead of moving one byte along when it ends.
   */
  begin(field: number, reserved: 1 | 2 = 1): number {
    this.tag(field, 2)
    this.reserve(reserved)
    const at = this.pos
    this.pos += reserved
    return at
  }

  /** Ends the nested message `begin` started, moving its body when its length takes other than the bytes reserved. */
  end(at: number, reserved: 1 | 2 = 1) {
    const length = this.pos - at - reserved
    if (reserved === 1 && length < 128) {
      this.buf[at] = length
      return
    }
    if (reserved === 2 && length >= 128 && length < 16384) {
      this.buf[at] = (length & 127) | 128
      this.buf[at + 1] = length >>> 7
      return
    }
    const size = varintSize(length)
    if (size > reserved) this.reserve(size - reserved)
    this.buf.copy(this.buf, at + size, at + reserved, this.pos)
    this.pos += size - reserved
    let v = length
    let p = at
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128
      v = Math.floor(v / 128)
    }
    this.buf[p] = v
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos)
  }
}

/** `repeated KeyValue` at `field`. */
export function writeAttributes(w: ProtobufBytes, field: number, attributes: Attributes) {
  for (const key in attributes) {
    if (!Object.hasOwn(attributes, key)) continue
    const value = attributes[key]
    if (value === undefined) continue
    const kv = w.begin(field)
    w.string(1, key)
    const any = w.begin(2)
    writeAnyValue(w, value)
    w.end(any)
    w.end(kv)
  }
}

/** The body of an AnyValue (nothing for null: an empty AnyValue, as the SDK's serializer writes it). */
function writeAnyValue(w: ProtobufBytes, value: AttributeValue | null | undefined) {
  if (typeof value === 'string') w.string(1, value)
  else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
      w.tag(3, 0)
      w.int64(value)
    } else {
      w.tag(4, 1)
      w.double(value)
    }
  } else if (typeof value === 'boolean') {
    w.tag(2, 0)
    w.varint(value ? 1 : 0)
  } else if (Array.isArray(value)) {
    const array = w.begin(5)
    for (const item of value) {
      const any = w.begin(1)
      writeAnyValue(w, item)
      w.end(any)
    }
    w.end(array)
  }
}

/** One `Span` message as field 2 of ScopeSpans. */
export function writeSpan(w: ProtobufBytes, span: ReadableSpan) {
  const at = w.begin(2, 2)
  const ctx = span.spanContext()
  w.hexBytes(1, ctx.traceId)
  w.hexBytes(2, ctx.spanId)
  const traceState = ctx.traceState?.serialize()
  if (traceState) w.string(3, traceState)
  const parent = span.parentSpanContext
  if (parent?.spanId) w.hexBytes(4, parent.spanId)
  w.string(5, span.name)
  // the API's kinds start at INTERNAL = 0, the protocol's at UNSPECIFIED = 0
  w.tag(6, 0)
  w.varint(span.kind + 1)
  w.tag(7, 1)
  w.time(span.startTime)
  w.tag(8, 1)
  w.time(span.endTime)
  writeAttributes(w, 9, span.attributes)
  if (span.droppedAttributesCount) {
    w.tag(10, 0)
    w.varint(span.droppedAttributesCount)
  }
  for (const event of span.events) writeEvent(w, event)
  if (span.droppedEventsCount) {
    w.tag(12, 0)
    w.varint(span.droppedEventsCount)
  }
  for (const link of span.links) writeLink(w, link)
  if (span.droppedLinksCount) {
    w.tag(14, 0)
    w.varint(span.droppedLinksCount)
  }
  if (span.status.code || span.status.message) {
    const status = w.begin(15)
    if (span.status.message) w.string(2, span.status.message)
    if (span.status.code) {
      w.tag(3, 0)
      w.varint(span.status.code)
    }
    w.end(status)
  }
  w.tag(16, 5)
  w.fixed32((ctx.traceFlags & 0xff) | HAS_IS_REMOTE | (parent?.isRemote ? IS_REMOTE : 0))
  w.end(at, 2)
}

function writeEvent(w: ProtobufBytes, event: TimedEvent) {
  const at = w.begin(11)
  w.tag(1, 1)
  w.time(event.time)
  w.string(2, event.name)
  if (event.attributes) writeAttributes(w, 3, event.attributes)
  if (event.droppedAttributesCount) {
    w.tag(4, 0)
    w.varint(event.droppedAttributesCount)
  }
  w.end(at)
}

function writeLink(w: ProtobufBytes, link: Link & { droppedAttributesCount?: number }) {
  const at = w.begin(13)
  w.hexBytes(1, link.context.traceId)
  w.hexBytes(2, link.context.spanId)
  const traceState = link.context.traceState?.serialize()
  if (traceState) w.string(3, traceState)
  if (link.attributes) writeAttributes(w, 4, link.attributes)
  if (link.droppedAttributesCount) {
    w.tag(5, 0)
    w.varint(link.droppedAttributesCount)
  }
  w.tag(6, 5)
  w.fixed32((link.context.traceFlags & 0xff) | HAS_IS_REMOTE | (link.context.isRemote ? IS_REMOTE : 0))
  w.end(at)
}

/** A nested message's bytes with its field tag and length in front. */
function field(fieldNumber: number, body: Buffer): Buffer {
  const w = new ProtobufBytes(body.length + 12)
  w.tag(fieldNumber, 2)
  w.varint(body.length)
  body.copy(w.buf, w.pos)
  w.pos += body.length
  return w.bytes()
}

/** `Resource` (field 1 of ResourceSpans), tag and length included: the same for every batch. */
export function resourceField(resource: Resource): Buffer {
  const w = new ProtobufBytes(1024)
  writeAttributes(w, 1, resource.attributes)
  return field(1, w.bytes())
}

/** `InstrumentationScope` (field 1 of ScopeSpans), tag and length included. */
export function scopeField(scope: Scope): Buffer {
  const w = new ProtobufBytes(256)
  w.string(1, scope.name)
  if (scope.version) w.string(2, scope.version)
  if (scope.attributes) writeAttributes(w, 3, scope.attributes)
  return field(1, w.bytes())
}

export interface ScopeBatch {
  /** scopeField(scope) */
  scope: Buffer
  schemaUrl?: string
  /** Spans as writeSpan wrote them. */
  spans: Buffer
}

/**
 * An ExportTraceServiceRequest around spans already written, grouped by resource and scope. Every
 * length is known before the bytes are written, so the spans are copied once.
 */
export function exportRequest(groups: { resource: Buffer; schemaUrl?: string; scopes: ScopeBatch[] }[]): Buffer {
  const url = (fieldNumber: number, s: string | undefined) => {
    if (!s) return undefined
    const w = new ProtobufBytes(s.length * 3 + 12)
    w.string(fieldNumber, s)
    return w.bytes()
  }
  const plan = groups.map((g) => {
    const scopes = g.scopes.map((b) => {
      const schema = url(3, b.schemaUrl)
      return { b, schema, length: b.scope.length + b.spans.length + (schema?.length ?? 0) }
    })
    const schema = url(3, g.schemaUrl)
    const length = g.resource.length + scopes.reduce((n, s) => n + 1 + varintSize(s.length) + s.length, 0) + (schema?.length ?? 0)
    return { g, scopes, schema, length }
  })
  const total = plan.reduce((n, p) => n + 1 + varintSize(p.length) + p.length, 0)
  const w = new ProtobufBytes(total)
  const put = (bytes: Buffer) => {
    bytes.copy(w.buf, w.pos)
    w.pos += bytes.length
  }
  for (const p of plan) {
    w.tag(1, 2)
    w.varint(p.length)
    put(p.g.resource)
    for (const s of p.scopes) {
      w.tag(2, 2)
      w.varint(s.length)
      put(s.b.scope)
      put(s.b.spans)
      if (s.schema) put(s.schema)
    }
    if (p.schema) put(p.schema)
  }
  return w.bytes()
}

function varintSize(v: number): number {
  let size = 1
  for (; v > 127; v = Math.floor(v / 128)) size++
  return size
}
