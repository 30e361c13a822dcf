/**
 * MCP server documents: `mcp-servers/<name>.yaml`, read through the cascade (project → _tenant →
 * bundled) like every other document, validated with positions.
 *
 *   # mcp-servers/jira.yaml
 *   url: https://mcp.example.com/mcp        # Streamable HTTP endpoint (http or https)
 *   transport: streamable-http              # or `sse` for a legacy HTTP+SSE server
 *   headers:
 *     Authorization: "Bearer ${secret:JIRA_TOKEN}"
 *   timeoutMs: 10000                        # connect, list and each call (default 10000, max 120000)
 *   catalogTtlMs: 60000                     # how long a tools/list answer is reused (default 60000)
 *
 * Unknown fields are errors: a misspelt `header:` would otherwise silently drop credentials.
 */
import { validateAgainst } from '../config/json-schema'
import { ownPattern } from '../config/patterns'
import { locate, notAMapping, parseYaml, type YamlSource, yamlSourceOf } from '../config/yaml'
import type { CascadeDocument, CascadeReader } from '../documents/cascade'
import { scopeOf, TENANT_LAYER } from '../documents/ports'
import { type Issue, issueText } from '../errors'
import { BoundedCache, PARSED_DOCUMENT_BYTES, parsedWeight } from '../runtime/bounded-cache'
import { malformedSecretReferences, secretNamesIn } from '../secrets/references'

export const MCP_SERVERS_PREFIX = 'mcp-servers/'
export const MCP_SERVER_NAME_PATTERN = ownPattern('^[a-z0-9][a-z0-9_-]{0,63}$')
export const mcpServerPath = (name: string) => `${MCP_SERVERS_PREFIX}${name}.yaml`

export const DEFAULT_MCP_TIMEOUT_MS = 10_000
export const MAX_MCP_TIMEOUT_MS = 120_000
export const DEFAULT_CATALOG_TTL_MS = 60_000

export type McpTransportKind = 'streamable-http' | 'sse'

export interface McpServerConfig {
  url: string
  transport: McpTransportKind
  /** Header templates; values may hold `${secret:NAME}`. */
  headers: Record<string, string>
  timeoutMs: number
  catalogTtlMs: number
  description?: string
}

export const mcpServerSchema = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, pattern: ownPattern('^https?://'), description: 'Streamable HTTP (or legacy SSE) endpoint' },
    transport: { enum: ['streamable-http', 'sse'] },
    headers: {
      type: 'object',
      propertyNames: { pattern: ownPattern("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$") },
      additionalProperties: { type: 'string' },
    },
    timeoutMs: { type: 'integer', minimum: 100, maximum: MAX_MCP_TIMEOUT_MS },
    catalogTtlMs: { type: 'integer', minimum: 0, maximum: 3_600_000 },
    description: { type: 'string' },
  },
}

/** Headers the transport owns; a document must not set them. */
const RESERVED_HEADERS = [
  'host',
  'content-length',
  'content-type',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'connection',
  'transfer-encoding',
]

export type McpServerParse = { ok: true; config: McpServerConfig } | { ok: false; issues: Issue[] }

export function parseMcpServer(text: YamlSource, path: string): McpServerParse {
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return { ok: false, issues: [notAMapping(data, path, 'an MCP server document', '`url`')] }
  }
  const raw = data as Record<string, unknown>
  const issues: Issue[] = validateAgainst(mcpServerSchema, raw)
  if (!issues.length) {
    try {
      const u = new URL(raw.url as string)
      if (u.username || u.password)
        issues.push({ pointer: '/url', message: 'url must not carry credentials; put them in a header with ${secret:NAME}' })
    } catch {
      issues.push({ pointer: '/url', message: 'url is not a valid absolute URL' })
    }
    if (secretNamesIn(raw.url).size) issues.push({ pointer: '/url', message: 'secrets are only substituted in headers, not in the url' })
    for (const name of Object.keys((raw.headers as Record<string, string> | undefined) ?? {})) {
      if (RESERVED_HEADERS.includes(name.toLowerCase()))
        issues.push({ pointer: `/headers/${name}`, message: `header '${name}' is set by the MCP transport and cannot be configured` })
    }
    issues.push(...malformedSecretReferences(raw.headers ?? {}, '/headers'))
  }
  if (issues.length) return { ok: false, issues: locate(parsed.value, issues, path) }
  return {
    ok: true,
    config: {
      url: raw.url as string,
      transport: (raw.transport as McpTransportKind | undefined) ?? 'streamable-http',
      headers: (raw.headers as Record<string, string> | undefined) ?? {},
      timeoutMs: (raw.timeoutMs as number | undefined) ?? DEFAULT_MCP_TIMEOUT_MS,
      catalogTtlMs: (raw.catalogTtlMs as number | undefined) ?? DEFAULT_CATALOG_TTL_MS,
      ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    },
  }
}

/** Write-time check for the raw documents API: problems of an `mcp-servers/<name>.yaml`, with positions; [] for other paths. */
export function checkMcpServerDocument(path: string, body: YamlSource): Issue[] {
  if (!path.startsWith(MCP_SERVERS_PREFIX) || !/\.ya?ml$/.test(path)) return [] // notes beside the documents are fine
  const name = /^mcp-servers\/([^/]+)\.yaml$/.exec(path)?.[1]
  if (!name || !new RegExp(MCP_SERVER_NAME_PATTERN).test(name)) {
    return [
      {
        path,
        pointer: '/path',
        message: `an MCP server document is mcp-servers/<name>.yaml with a name of lower-case letters, digits, '_' and '-' (a tool's server: names it)`,
      },
    ]
  }
  const r = parseMcpServer(body, path)
  return r.ok ? [] : r.issues
}

/** One resolved server document: which tenant asked, which stored document (scope, path, version) answered. */
export interface McpServerRef {
  tenant: string
  name: string
  /** `<tenant>#<project>`, `<tenant>#_tenant` or `bundled`. */
  scope: string
  path: string
  version: number
  config: McpServerConfig
}

export type McpServerLookup = { ok: true; server: McpServerRef } | { ok: false; message: string; issues?: Issue[] }

/** Reads and parses server documents; parses are cached by (scope, path, version). */
export class McpServerDocuments {
  private readonly parses = new BoundedCache<string, McpServerParse>(2_000, { maxBytes: PARSED_DOCUMENT_BYTES })

  async resolve(tenant: string, project: string, documents: CascadeReader, name: string): Promise<McpServerLookup> {
    const path = mcpServerPath(name)
    const doc = await documents.read(path)
    if (!doc)
      return {
        ok: false,
        message: `there is no MCP server document ${path} in project '${project}', the tenant layer or the bundled defaults`,
      }
    const scope = scopeOfDocument(tenant, project, doc)
    const key = `${scope}\u0000${path}\u0000${doc.version}`
    let parsed = this.parses.get(key)
    if (!parsed) parsed = this.parses.set(key, parseMcpServer(yamlSourceOf(doc), path), parsedWeight(doc.body))
    if (!parsed.ok) {
      const detail = parsed.issues.map(issueText).join('; ')
      return { ok: false, message: `MCP server document ${path} (${doc.source} layer) is invalid: ${detail}`, issues: parsed.issues }
    }
    return { ok: true, server: { tenant, name, scope, path, version: doc.version, config: parsed.config } }
  }
}

function scopeOfDocument(tenant: string, project: string, doc: CascadeDocument): string {
  if (doc.source === 'bundled') return 'bundled'
  return doc.source === 'tenant' ? scopeOf(tenant, TENANT_LAYER) : scopeOf(tenant, project)
}
