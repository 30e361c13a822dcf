/** The secrets API through a Hono app built like createApp: authenticate, the routes, one onError. */
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AuthEnv } from '../../../functions/http/auth'
import { authenticate } from '../../../functions/http/auth'
import { toProblem } from '../../../functions/http/errors'
import { secretRoutes } from '../../../functions/http/routes/secrets'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemorySecretStore } from '../../../lib/secrets/memory'
import { client, TEST_SECRET, tokenFor } from '../../support/http'

function app() {
  const secrets = new MemorySecretStore()
  const log = new MemoryLogger()
  const a = new Hono<AuthEnv>()
    .use('/brain/:tenant/*', authenticate({ jwtSecret: TEST_SECRET }))
    .route('/brain/:tenant', secretRoutes({ secrets }))
  a.onError(toProblem(log))
  return { app: a, secrets, log }
}

const CANARY = 'sk-live-canary-0123456789'

describe('secret routes', () => {
  it('creates with 201, replaces with 200, and never answers with the value', async () => {
    const { app: a, secrets } = app()
    const http = client(a, await tokenFor('acme'))
    const created = await http.put('/brain/acme/secrets/API_TOKEN', { value: CANARY })
    expect(created.status).toBe(201)
    const createdText = await created.text()
    expect(createdText).not.toContain(CANARY)
    expect(JSON.parse(createdText)).toEqual({ name: 'API_TOKEN', updatedBy: 'alice@example.test' })
    const replaced = await http.put('/brain/acme/secrets/API_TOKEN', { value: `${CANARY}2` })
    expect(replaced.status).toBe(200)
    expect(await secrets.get('acme', 'API_TOKEN')).toBe(`${CANARY}2`)
  })

  it('lists names only', async () => {
    const { app: a } = app()
    const http = client(a, await tokenFor('acme'))
    await http.put('/brain/acme/secrets/B', { value: CANARY })
    await http.put('/brain/acme/secrets/A', { value: CANARY })
    const res = await http.get('/brain/acme/secrets')
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(JSON.parse(text)).toEqual({ secrets: [{ name: 'A' }, { name: 'B' }] })
    expect(text).not.toContain(CANARY)
  })

  it('deletes with 204 and answers 404 problem+json for a secret that is not there', async () => {
    const { app: a } = app()
    const http = client(a, await tokenFor('acme'))
    await http.put('/brain/acme/secrets/GONE', { value: 'x' })
    expect((await http.delete('/brain/acme/secrets/GONE')).status).toBe(204)
    const again = await http.delete('/brain/acme/secrets/GONE')
    expect(again.status).toBe(404)
    expect(again.headers.get('content-type')).toBe('application/problem+json')
    expect((await again.json()).detail).toBe("there is no secret named 'GONE'")
  })

  it('requires secrets:write to change secrets and tools:read to list them', async () => {
    const { app: a } = app()
    const reader = client(a, await tokenFor('acme', 'tools:read'))
    const put = await reader.put('/brain/acme/secrets/X', { value: 'x' })
    expect(put.status).toBe(403)
    expect((await put.json()).detail).toContain("'secrets:write'")
    expect((await reader.delete('/brain/acme/secrets/X')).status).toBe(403)
    expect((await reader.get('/brain/acme/secrets')).status).toBe(200)
    const writer = client(a, await tokenFor('acme', 'secrets:write'))
    expect((await writer.put('/brain/acme/secrets/X', { value: 'x' })).status).toBe(201)
    expect((await writer.get('/brain/acme/secrets')).status).toBe(403)
  })

  it('keeps tenants apart: a token for one tenant cannot touch another', async () => {
    const { app: a, secrets } = app()
    const http = client(a, await tokenFor('acme'))
    expect((await http.put('/brain/globex/secrets/X', { value: 'x' })).status).toBe(403)
    expect(await secrets.list('globex')).toEqual([])
  })

  it('rejects bad names, bodies and values with problem details that never echo the value', async () => {
    const { app: a, log } = app()
    const http = client(a, await tokenFor('acme'))
    const cases: [string, string | object, number][] = [
      ['/brain/acme/secrets/1bad', { value: CANARY }, 400],
      ['/brain/acme/secrets/OK', `{"value": "${CANARY}"`, 400],
      ['/brain/acme/secrets/OK', `value: ${CANARY}`, 400],
      ['/brain/acme/secrets/OK', [CANARY], 400],
      ['/brain/acme/secrets/OK', { value: 42 }, 400],
      ['/brain/acme/secrets/OK', { value: '' }, 400],
      ['/brain/acme/secrets/OK', { value: CANARY, note: CANARY }, 400],
      ['/brain/acme/secrets/OK', { value: CANARY + 'x'.repeat(5000) }, 413],
    ]
    for (const [path, body, status] of cases) {
      const res = await http.put(path, body, typeof body === 'string' ? { 'content-type': 'application/json' } : {})
      const text = await res.text()
      expect(res.status, `${path} ${JSON.stringify(body).slice(0, 40)}`).toBe(status)
      expect(res.headers.get('content-type')).toBe('application/problem+json')
      expect(text).not.toContain(CANARY)
    }
    expect(JSON.stringify(log.lines)).not.toContain(CANARY)
  })
})
