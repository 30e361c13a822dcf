/**
 * Issue 11, F4 as it was found: `npm start` with EGRESS_ALLOW_HOSTS=127.0.0.1 (as one sets it for
 * a local MCP server). Every port the service process listens on — its HTTP port, the embedded
 * dynalite and s3rver — is read from /proc (the service prints only the first), and a tenant's
 * `rest` tool aimed at each of them is refused; a loopback server of the test on another port
 * stays reachable. Every address here is 127.0.0.1.
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalService, startLocalService, stopLocalService } from '../support/npm-start'

const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-egress-'))
let service: LocalService
let neighbour: http.Server
let neighbourPort: number

/** TCP ports a process listens on: its socket inodes matched against /proc/net/tcp{,6} in state LISTEN. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m) inodes.add(m[1])
    } catch {
      // the descriptor closed while we looked
    }
  }
  const ports = new Set<number>()
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      if (cols.length > 9 && cols[3] === '0A' && inodes.has(cols[9])) ports.add(parseInt(cols[1].split(':')[1], 16))
    }
  }
  return [...ports].sort((a, b) => a - b)
}

beforeAll(async () => {
  neighbour = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"neighbour":true}'))
  await new Promise<void>((r) => neighbour.listen(0, '127.0.0.1', r))
  neighbourPort = (neighbour.address() as AddressInfo).port
  service = await startLocalService(dataDir, { EGRESS_ALLOW_HOSTS: '127.0.0.1' })
})

afterAll(async () => {
  if (service) await stopLocalService(service.child)
  neighbour?.closeAllConnections()
  await new Promise((r) => neighbour?.close(r))
  rmSync(dataDir, { recursive: true, force: true })
})

async function callRestTool(name: string, url: string) {
  const auth = { authorization: `Bearer ${service.token}` }
  const yaml = `type: rest\ndescription: Calls ${url}.\nparameters:\n  url: ${url}\n`
  const put = await fetch(`${service.url}/projects/p1/server-tools/${name}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/yaml' },
    body: yaml,
  })
  expect(put.status).toBe(201)
  const res = await fetch(`${service.url}/projects/p1/tools/${name}/invoke`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{"params":{}}',
  })
  return (await res.json()) as { isError: boolean; content: { message?: string; reason?: string } }
}

describe('npm start with EGRESS_ALLOW_HOSTS=127.0.0.1', () => {
  it("refuses a tenant's rest tool on every port the service listens on, and still reaches another loopback port", async () => {
    const ports = listeningPorts(service.child.pid!)
    const httpPort = Number(new URL(service.origin).port)
    expect(ports).toContain(httpPort)
    expect(ports.length).toBeGreaterThanOrEqual(3) // HTTP, dynalite, s3rver
    for (const port of ports) {
      const out = await callRestTool(`own_${port}`, `http://127.0.0.1:${port}/`)
      expect(out.isError, String(port)).toBe(true)
      // the same sentence for every port: a tenant cannot tell the service's own listeners from others
      expect(out.content.message, String(port)).toBe(
        `GET http://127.0.0.1:${port}/ was not called: outbound calls to a loopback address are not allowed (127.0.0.1); ask an administrator to allow-list it.`,
      )
    }
    const reached = await callRestTool('neighbour', `http://127.0.0.1:${neighbourPort}/`)
    expect(reached).toEqual({ isError: false, content: { status: 200, body: { neighbour: true } } })
  })
})
