/**
 * The egress client with a client span per outbound request and the trace context carried on
 * (`traceparent`), so the called service joins the agent's trace. Every REST, OpenAPI, MCP and
 * LLM request goes through here (lib/mcp/fetch.ts and lib/llm use the same Egress).
 *
 * Span attributes are the HTTP semantic conventions' (method, server address and port, status):
 * never the path or query (either may carry a credential), never a header or body. A refusal by
 * the guard is reported to `onRefusal` (the audit log's egress denials).
 */
import { isServerToolsError } from '../errors'
import type { Tracer } from '../runtime/tracer'
import { isEgressError } from './errors'
import type { Egress } from './lazy'

export interface EgressRefusal {
  tenant: string
  host: string
  reason: string
}

const REFUSALS = new Set(['denied', 'scheme', 'unsafe-redirect'])

export function tracedEgress(egress: Egress, tracer: Tracer, onRefusal?: (refusal: EgressRefusal) => void): Egress {
  return {
    check: async (tenant, url) => {
      try {
        return await egress.check(tenant, url)
      } catch (e) {
        if (isEgressError(e) && REFUSALS.has(e.reason)) onRefusal?.({ tenant, host: hostOf(url), reason: e.reason })
        throw e
      }
    },
    request: (req) => {
      const method = (req.method ?? 'GET').toUpperCase()
      const target = addressOf(req.url)
      return tracer.span(
        method,
        {
          kind: 'client',
          attributes: {
            'http.request.method': method,
            'server.address': target.host,
            'server.port': target.port,
            'url.scheme': target.scheme,
          },
        },
        async (span) => {
          const headers = { ...(req.headers ?? {}) }
          tracer.inject(headers)
          try {
            const res = await egress.request({ ...req, headers })
            span.setAttributes({ 'http.response.status_code': res.status })
            if (res.status >= 500) span.fail(String(res.status))
            return res
          } catch (e) {
            if (isEgressError(e)) {
              if (REFUSALS.has(e.reason)) onRefusal?.({ tenant: req.tenant, host: target.host, reason: e.reason })
              span.fail(e.reason)
            } else span.fail(isServerToolsError(e) ? e.code : ((e as Error)?.name ?? 'Error'))
            throw e
          }
        },
      )
    },
  }
}

function addressOf(url: string | URL): { host: string; port?: number; scheme?: string } {
  try {
    const u = new URL(String(url))
    return { host: u.hostname, port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80, scheme: u.protocol.replace(':', '') }
  } catch {
    return { host: 'invalid' }
  }
}

const hostOf = (url: string | URL) => addressOf(url).host
