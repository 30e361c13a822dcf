/**
 * The SDK's trace and span ids, cut from a pool of random bytes (functions/observability/id-generator.ts):
 * W3C-valid (lowercase hex of 32 and 16 characters, never all zeros) and distinct across pool refills.
 */
import { isValidSpanId, isValidTraceId } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { PooledIdGenerator } from '../../../functions/observability/id-generator'

describe('pooled trace and span ids', () => {
  it('are valid W3C ids, and none repeats across several refills of the pool', () => {
    const ids = new PooledIdGenerator()
    const seen = new Set<string>()
    // 4,096 bytes a pool: 3,000 of each kind refill it 35 times, mixed
    for (let i = 0; i < 3000; i++) {
      const traceId = ids.generateTraceId()
      const spanId = ids.generateSpanId()
      expect(isValidTraceId(traceId) && isValidSpanId(spanId)).toBe(true)
      seen.add(traceId).add(spanId)
    }
    expect(seen.size).toBe(6000)
  })
})
