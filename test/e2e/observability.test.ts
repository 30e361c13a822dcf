/**
 * `npm start` (a child process) with the standard OTEL_* variables aimed at an OTLP/HTTP receiver
 * this file runs on 127.0.0.1, and the `server-tools audit` command (the bin as a child process)
 * against it: the agent's trace reaches the collector, the JSON log lines carry the request's
 * trace id, and the audit log of the writes and refusals is readable from the CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli'
import { type LocalService, startLocalService, stopLocalService } from '../support/npm-start'
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp'

const work = mkdtempSync(join(tmpdir(), 'server-tools-observability-'))
let service: LocalService
let receiver: OtlpReceiver
let logs = ''

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  service = await startLocalService(join(work, 'data'), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'server-tools-e2e',
    LOG_LEVEL: 'info',
  })
  service.child.stdout!.on('data', (d) => (logs += d))
}, 30_000)

afterAll(async () => {
  if (service?.child.exitCode === null) service.child.kill('SIGKILL')
  await receiver?.close()
  rmSync(work, { recursive: true, force: true })
})

const cli = (...args: string[]) => runCli(service, ...args)

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'

describe('npm start with OTEL_EXPORTER_OTLP_ENDPOINT, and server-tools audit', () => {
  it('exports the agent’s trace to the collector and shows the writes and refusals in the audit log', async () => {
    const auth = { authorization: `Bearer ${service.token}` }
    const put = await fetch(`${service.url}/projects/p1/documents/notes.md`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: '# notes\n',
    })
    expect(put.status).toBe(201)
    const call = await fetch(`${service.url}/projects/p1/tools/whoami/invoke`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
      body: '{"params":{}}',
    })
    expect(call.status).toBe(200)
    expect((await fetch(`${service.url}/projects/p1/server-tools`)).status).toBe(401)

    const text = await cli('audit')
    expect(text.code, text.stderr).toBe(0)
    const lines = text.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      /\(no valid token\) {2}auth\.unauthenticated {2}projects\/p1\/server-tools {2}denied 401 \(UNAUTHENTICATED\) {2}\[127\.0\.0\.1\]$/,
    )
    expect(lines[1]).toMatch(/local-admin {2}document\.put {2}projects\/p1\/documents\/notes\.md {2}ok 201 v-→1 {2}\[127\.0\.0\.1\]$/)
    const json = await cli('audit', '--json', '--action', 'document.')
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['document.put'])
    expect(JSON.parse(json.stdout).contentHash).toMatch(/^sha256:[0-9a-f]{64}$/)

    // Ctrl-C flushes the batch exporter: the collector has the caller's trace
    expect(await stopLocalService(service.child)).toBe(0)
    const received = receiver.traces.join('\n')
    expect(received).toContain(TRACE)
    expect(received).toContain('server-tools-e2e')
    expect(received).toContain('execute_tool whoami')
    // and the request's log lines carry its trace id (LOG_LEVEL=info: the tool call logs nothing, the audit read does not either;
    // the write path's lines, if any, must not lack the ids when they name a trace)
    for (const line of logs.split('\n').filter((l) => l.includes(TRACE))) expect(JSON.parse(line)).toMatchObject({ traceId: TRACE })
  })
})
