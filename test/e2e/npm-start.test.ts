/**
 * `npm start` as a person uses it: start the local service on a fresh DATA_DIR, follow the
 * printed instructions with real HTTP, stop it with SIGTERM (as a supervisor does), start it again,
 * find the data, stop it with SIGINT (Ctrl-C). The stores run on a thread of their own (functions/emulator-thread.ts).
 */

import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { issueToken } from '../../functions/http/auth'
import { startLocalService, stopLocalService as stop } from '../support/npm-start'

const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-local-'))
const children: ChildProcess[] = []

async function start() {
  const service = await startLocalService(dataDir)
  children.push(service.child)
  return service
}

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

describe('npm start', () => {
  it('serves the printed URL with the printed token and keeps the data across a restart', async () => {
    const first = await start()
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/brain\/demo$/)
    const auth = { authorization: `Bearer ${first.token}` }
    const yaml = 'type: doc_lookup\ndescription: Hello\nparameters:\n  path: documents/getting-started.md\n'

    const created = await fetch(`${first.url}/projects/p1/server-tools/hello`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/yaml' },
      body: yaml,
    })
    expect([created.status, created.headers.get('etag')]).toEqual([201, '"1"'])
    const got: any = await (await fetch(`${first.url}/projects/p1/server-tools/hello`, { headers: auth })).json()
    expect(got).toMatchObject({ name: 'hello', source: 'project', version: 1 })
    const stale = await fetch(`${first.url}/projects/p1/server-tools/hello`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/yaml', 'if-match': '"9"' },
      body: yaml,
    })
    expect(stale.status).toBe(412)
    const invalid = await fetch(`${first.url}/projects/p1/server-tools/bad`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/yaml' },
      body: `${yaml}enabled: "yes"\n`,
    })
    expect(invalid.status).toBe(422)
    expect(((await invalid.json()) as any).errors[0].line).toBe(5)
    expect((await fetch(`${first.url}/projects/p1/server-tools/hello`)).status).toBe(401)
    // the printed token lives 30 days (the default cap) and may write the tenant layer
    const claims = JSON.parse(Buffer.from(first.token.split('.')[1], 'base64url').toString())
    expect([claims.exp - claims.iat, claims.scope.split(' ')]).toEqual([30 * 24 * 3600, expect.arrayContaining(['tenant:admin'])])
    const tenantWide = await fetch(`${first.url}/projects/_tenant/documents/egress/allow.yaml`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/yaml' },
      body: 'hosts: [intranet.example.test]\n',
    })
    expect(tenantWide.status).toBe(201)
    const secret = readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim()
    const otherTenant = await issueToken(
      secret,
      { tenant: 'other', sub: 'x', scope: 'tools:read', expiresInSeconds: 600 },
      Math.floor(Date.now() / 1000),
    )
    expect(
      (await fetch(`${first.url}/projects/p1/server-tools/hello`, { headers: { authorization: `Bearer ${otherTenant}` } })).status,
    ).toBe(403)

    expect(await stop(first.child, 'SIGTERM')).toBe(0)

    const second = await start()
    expect(second.token).toBeTruthy()
    const again = await fetch(`${second.url}/projects/p1/server-tools/hello`, { headers: { authorization: `Bearer ${first.token}` } })
    expect(again.status).toBe(200)
    expect(((await again.json()) as any).description).toBe('Hello')
    expect(await stop(second.child)).toBe(0)
  }, 60_000)
})
