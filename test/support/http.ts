/** Helpers for driving the app through `app.request`, as a client would. */
import { issueToken } from '../../functions/http/auth'

export const TEST_SECRET = 'test-secret-please-change'
export const ALL = 'tools:read tools:write tools:invoke insights:read secrets:write audit:read tenant:admin limits:report'

export async function tokenFor(tenant: string, scope = ALL, sub = 'alice@example.test', secret = TEST_SECRET, expiresInSeconds = 3600) {
  return issueToken(secret, { tenant, sub, scope, expiresInSeconds }, Math.floor(Date.now() / 1000))
}

/** A Response whose json() is typed loosely, as test assertions want it. */
export type TestResponse = Omit<Response, 'json'> & { json(): Promise<any> }

export function client(app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> }, token?: string) {
  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const h: Record<string, string> = { ...headers }
    if (token) h.authorization = `Bearer ${token}`
    let payload: string | undefined
    if (typeof body === 'string') {
      payload = body
      h['content-type'] ??= 'application/yaml'
    } else if (body !== undefined) {
      payload = JSON.stringify(body)
      h['content-type'] ??= 'application/json'
    }
    return Promise.resolve(app.request(path, { method, headers: h, body: payload })) as Promise<TestResponse>
  }
  return {
    get: (path: string, headers?: Record<string, string>) => send('GET', path, undefined, headers),
    put: (path: string, body: unknown, headers?: Record<string, string>) => send('PUT', path, body, headers),
    post: (path: string, body: unknown, headers?: Record<string, string>) => send('POST', path, body, headers),
    delete: (path: string, headers?: Record<string, string>) => send('DELETE', path, undefined, headers),
  }
}
