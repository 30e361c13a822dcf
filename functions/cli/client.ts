/** The CLI's view of the HTTP API: one tenant URL (`…/brain/{tenant}`), one bearer token. */
import { serverToolNameOf } from '../../lib/layers/layer'
import type { RemoteDocument } from '../../lib/layers/plan'

/** An answer the CLI cannot go on with: its status, the problem's detail and field errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problem: { code?: string; errors?: { pointer?: string; line?: number; column?: number; message: string }[] } = {},
  ) {
    super(message)
  }
  get conflict() {
    return this.status === 412 || this.status === 409
  }
}

export interface ListedDocument extends RemoteDocument {
  bytes: number
  updatedAt: string
  updatedBy: string
}

export class ServerToolsClient {
  private readonly base: string

  constructor(
    url: string,
    private readonly token: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.base = url.replace(/\/+$/, '')
    if (!/\/brain\/[^/]+$/.test(new URL(this.base).pathname))
      throw new Error(`the URL must end in /brain/<tenant> (as npm start prints it in ST_URL), got '${url}'`)
  }

  private async send(
    method: string,
    path: string,
    init: { body?: string; contentType?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    // the audit log names the client of each write (functions/http/observe.ts)
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, 'x-server-tools-client': 'cli', ...init.headers }
    if (init.body !== undefined) headers['content-type'] = init.contentType ?? 'application/json'
    let res: Response
    try {
      res = await this.fetchImpl(`${this.base}${path}`, { method, headers, body: init.body })
    } catch (e) {
      throw new ApiError(
        0,
        `cannot reach ${this.base}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`,
      )
    }
    if (res.ok) return res
    const text = await res.text()
    let problem: { detail?: string; title?: string; code?: string; errors?: [] } = {}
    try {
      problem = JSON.parse(text)
    } catch {
      problem = { detail: text.slice(0, 500) }
    }
    throw new ApiError(res.status, `${method} ${path} → ${res.status}: ${problem.detail ?? problem.title ?? res.statusText}`, problem)
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body === undefined ? {} : { body: JSON.stringify(body) })
    return (await res.json()) as T
  }

  /** One page of the tenant's audit log (GET /audit): `query` holds the filters, limit and cursor. */
  async auditPage(query: Record<string, string>): Promise<{ entries: Record<string, unknown>[]; next?: string }> {
    const qs = new URLSearchParams(query).toString()
    return this.json('GET', `/audit${qs ? `?${qs}` : ''}`)
  }

  /** The quota rules that apply to a project (or `_tenant`), their use and time to reset. */
  async quotas(project: string): Promise<{ project: string; rules: Record<string, unknown>[] }> {
    return this.json('GET', `/quotas?project=${encodeURIComponent(project)}`)
  }

  /** Tool usage per role of a project over the last `days` days (GET …/admin/projects/{p}/insights/tool-usage). */
  async usage(project: string, days: number): Promise<Record<string, unknown>[]> {
    return this.json('GET', `/admin/projects/${enc(project)}/insights/tool-usage?days=${days}`)
  }

  /** One snapshot of a layer: every document with its version and content hash (and body, for exports). */
  async listLayer(project: string, opts: { bodies?: boolean } = {}): Promise<ListedDocument[]> {
    const { documents } = await this.json<{ documents: (ListedDocument & { bodyOmitted?: boolean })[] }>(
      'GET',
      `/projects/${enc(project)}/documents${opts.bodies ? '?bodies=true' : ''}`,
    )
    // One answer carries bodies up to the service's documentBodies budget; the rest, one by one.
    for (const d of documents) {
      if (!d.bodyOmitted) continue
      const res = await this.send('GET', `/projects/${enc(project)}/documents/${d.path.split('/').map(enc).join('/')}`)
      const body = await res.text()
      if (res.headers.get('etag') !== `"${d.version}"`)
        throw new ApiError(409, `${d.path} in ${project} changed while the layer was read (listed at version ${d.version}); run again`)
      d.body = body
      delete d.bodyOmitted
    }
    return documents
  }

  /**
   * Writes one document of the layer, guarded by the version it was planned against: `If-Match`
   * for an update, `If-None-Match: *` for a create. Server tools go through their own route (its
   * validation), everything else through the raw documents route.
   */
  async putDocument(project: string, path: string, body: string, expectedVersion: number | undefined): Promise<{ version: number }> {
    const headers: Record<string, string> =
      expectedVersion === undefined ? { 'if-none-match': '*' } : { 'if-match': `"${expectedVersion}"` }
    const res = await this.send('PUT', documentRoute(project, path), { body, contentType: contentTypeOf(path), headers })
    return { version: Number((res.headers.get('etag') ?? '').replace(/"/g, '')) }
  }

  async deleteDocument(project: string, path: string, expectedVersion: number): Promise<void> {
    await this.send('DELETE', documentRoute(project, path), { headers: { 'if-match': `"${expectedVersion}"` } })
  }

  preview(project: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    return this.json('POST', `/projects/${enc(project)}/surface/preview`, body)
  }

  invoke(project: string, tool: string, params: unknown): Promise<{ isError: boolean; content: unknown }> {
    return this.json('POST', `/projects/${enc(project)}/tools/${enc(tool)}/invoke`, { params })
  }
}

const enc = encodeURIComponent

function documentRoute(project: string, path: string): string {
  const tool = serverToolNameOf(path)
  if (tool !== undefined) return `/projects/${enc(project)}/server-tools/${enc(tool)}`
  return `/projects/${enc(project)}/documents/${path.split('/').map(enc).join('/')}`
}

function contentTypeOf(path: string): string {
  if (/\.ya?ml$/.test(path)) return 'application/yaml'
  if (path.endsWith('.json')) return 'application/json'
  if (path.endsWith('.md')) return 'text/markdown'
  if (path.endsWith('.js')) return 'text/javascript'
  return 'text/plain'
}
