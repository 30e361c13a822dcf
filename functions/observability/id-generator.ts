/**
 * Trace and span ids for the SDK (its `idGenerator`), cut from a pool of random bytes hex-encoded
 * in one call. The SDK's own generator fills 8 or 16 bytes from Math.random and hex-encodes them
 * on every id: two native calls per id, three ids per tool call. Here one crypto fill and one
 * encoding serve 256 span ids, and an id is a slice of that string (no copy).
 */
import { randomFillSync } from 'node:crypto'
import type { IdGenerator } from '@opentelemetry/sdk-trace-base'

const POOL_BYTES = 4096
const SPAN_ZEROS = '0'.repeat(16)
const TRACE_ZEROS = '0'.repeat(32)

export class PooledIdGenerator implements IdGenerator {
  private readonly bytes = Buffer.allocUnsafe(POOL_BYTES)
  private hex = ''
  private at = 0

  generateTraceId(): string {
    const id = this.take(32)
    // all zeros is the invalid id (one chance in 2^128): draw again
    return id === TRACE_ZEROS ? this.generateTraceId() : id
  }

  generateSpanId(): string {
    const id = this.take(16)
    return id === SPAN_ZEROS ? this.generateSpanId() : id
  }

  private take(chars: number): string {
    if (this.at + chars > this.hex.length) {
      randomFillSync(this.bytes)
      this.hex = this.bytes.toString('hex')
      this.at = 0
    }
    const id = this.hex.slice(this.at, this.at + chars)
    this.at += chars
    return id
  }
}
