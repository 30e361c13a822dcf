/** The EMF writer's lines and the service logger's fields and scrubbing (functions/observability). */
import { describe, expect, it } from 'vitest'
import { requestContext } from '../../../functions/http/request-context'
import { serviceLogger, tracingModeFromEnv } from '../../../functions/observability'
import { EmfMetrics } from '../../../functions/observability/emf'
import { MemoryTracer } from '../../../lib/runtime/tracer'

describe('EMF metrics', () => {
  it('writes one line per metric and dimension values at flush: counts summed, durations as values, CloudWatch metadata', async () => {
    const lines: string[] = []
    const emf = new EmfMetrics(
      (l) => lines.push(l),
      'ServerTools',
      () => 1_700_000_000_000,
    )
    emf.record('ToolCalls', 1, { ToolType: 'rest', Outcome: 'ok' })
    emf.record('ToolCalls', 1, { Outcome: 'ok', ToolType: 'rest' })
    emf.record('ToolCalls', 1, { ToolType: 'rest', Outcome: 'error' })
    emf.record('ToolDuration', 12, { ToolType: 'rest', Outcome: 'ok' })
    emf.record('ToolDuration', 30, { ToolType: 'rest', Outcome: 'ok' })
    expect(lines).toEqual([])
    await emf.flush()
    const parsed = lines.map((l) => JSON.parse(l))
    expect(parsed).toHaveLength(3)
    expect(parsed[0]).toEqual({
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [
          { Namespace: 'ServerTools', Dimensions: [['ToolType', 'Outcome']], Metrics: [{ Name: 'ToolCalls', Unit: 'Count' }] },
        ],
      },
      ToolType: 'rest',
      Outcome: 'ok',
      ToolCalls: 2,
    })
    expect(parsed[2]).toMatchObject({ ToolDuration: [12, 30] })
    await emf.flush()
    expect(lines).toHaveLength(3) // nothing new recorded: nothing written
  })

  it('never holds more than 100 values of one series: the 100th value writes the line at once', () => {
    const lines: string[] = []
    const emf = new EmfMetrics((l) => lines.push(l))
    for (let i = 0; i < 250; i++) emf.record('RequestLatency', i, { Route: '/health' })
    expect(lines.map((l) => JSON.parse(l).RequestLatency.length)).toEqual([100, 100])
  })
})

describe('the service logger', () => {
  it('adds the request context and the active span ids, and an event’s own fields win', async () => {
    const lines: string[] = []
    const tracer = new MemoryTracer()
    const log = serviceLogger({ write: (l) => lines.push(l), level: 'info', tracer })
    await requestContext.run({ requestId: 'r-1', tenant: 'acme', project: 'p1', tool: 'forecast', actor: () => undefined }, () =>
      tracer.span('execute_tool forecast', {}, async () => log.log('warn', 'tool.failed', { tool: 'other', error: 'boom' })),
    )
    log.log('info', 'outside')
    const [inside, outside] = lines.map((l) => JSON.parse(l))
    const span = tracer.named('execute_tool forecast')[0]
    expect(inside).toEqual({
      level: 'warn',
      event: 'tool.failed',
      requestId: 'r-1',
      tenant: 'acme',
      project: 'p1',
      tool: 'other',
      traceId: span.traceId,
      spanId: span.spanId,
      error: 'boom',
    })
    expect(outside).toEqual({ level: 'info', event: 'outside' })
  })

  it('keeps the deployment’s secret out of every line in its encodings, and masks bearer tokens and JWTs', () => {
    const lines: string[] = []
    const secret = 'Sup3r/Secret+Value=='
    const log = serviceLogger({ write: (l) => lines.push(l), level: 'debug', tracer: new MemoryTracer(), secrets: [secret] })
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl'
    log.log('error', 'x', {
      raw: secret,
      url: encodeURIComponent(secret),
      b64: Buffer.from(secret).toString('base64'),
      header: 'Bearer abcdefghijklmnop',
      token: jwt,
    })
    expect(lines[0]).not.toContain(secret)
    expect(lines[0]).not.toContain(encodeURIComponent(secret))
    expect(lines[0]).not.toContain(Buffer.from(secret).toString('base64'))
    expect(lines[0]).not.toContain('abcdefghijklmnop')
    expect(lines[0]).not.toContain(jwt.split('.')[1])
    expect(JSON.parse(lines[0]).header).toBe('Bearer [redacted]')
  })

  it('writes nothing below LOG_LEVEL', () => {
    const lines: string[] = []
    const log = serviceLogger({ write: (l) => lines.push(l), level: 'warn', tracer: new MemoryTracer() })
    log.log('info', 'quiet')
    log.log('error', 'loud')
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(['loud'])
  })
})

describe('the tracing mode', () => {
  it('is off by default, sdk with an OTLP endpoint, api under the ADOT wrapper, and off when the SDK is disabled', () => {
    expect(tracingModeFromEnv({})).toBe('off')
    expect(tracingModeFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe('sdk')
    expect(tracingModeFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe('sdk')
    expect(tracingModeFromEnv({ AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-handler' })).toBe('api')
    expect(tracingModeFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe('off')
    expect(tracingModeFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe('off')
  })
})
