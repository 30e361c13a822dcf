/**
 * The per-tenant egress allow-list: the document `egress/allow.yaml` in the tenant layer
 * (project `_tenant`), read directly from the DocumentStore — deliberately not through the
 * project cascade (a project must not widen its tenant's egress) and not from bundled defaults.
 *
 *   # egress/allow.yaml
 *   hosts: [intranet.example.com, "*.corp.example.com"]
 *   cidrs: [10.20.0.0/16]
 *
 * Parsed lists are cached by (tenant, version); every lookup costs one `get`, and the client only
 * asks for it when a destination is not public. Writes are checked (checkTenantAllowListDocument);
 * a document stored before that check that does not parse or validate allows nothing (fail
 * closed) and is logged.
 */
import { validateAgainst } from '../config/json-schema'
import { locate, parseYaml, textOf, type YamlSource, yamlSourceOf } from '../config/yaml'
import type { DocumentStore } from '../documents/ports'
import { scopeOf, TENANT_LAYER } from '../documents/ports'
import type { Issue } from '../errors'
import type { Logger } from '../runtime/logger'
import { silentLogger } from '../runtime/logger'
import { AllowList } from './allow-list'

export const TENANT_ALLOW_LIST_PATH = 'egress/allow.yaml'

/** Where the egress client gets a tenant's own allow-list from. */
export type TenantAllowListSource = (tenant: string) => Promise<AllowList>

export const tenantAllowListSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    hosts: { type: 'array', items: { type: 'string' }, maxItems: 500 },
    cidrs: { type: 'array', items: { type: 'string' }, maxItems: 500 },
  },
}

/** Parses and validates the document body; issues carry JSON pointers and, where they point at something, line and column. */
export function parseTenantAllowList(body: YamlSource): { list: AllowList; issues: Issue[] } {
  if (textOf(body).trim() === '') return { list: AllowList.empty, issues: [] }
  const parsed = parseYaml(body, TENANT_ALLOW_LIST_PATH)
  if (!parsed.ok) return { list: AllowList.empty, issues: parsed.issues }
  const data = parsed.value.data ?? {}
  const schemaIssues = validateAgainst(tenantAllowListSchema, data)
  const { list, issues } = schemaIssues.length
    ? { list: AllowList.empty, issues: schemaIssues }
    : AllowList.parse(data as { hosts?: string[]; cidrs?: string[] })
  if (!issues.length) return { list, issues: [] }
  return { list: AllowList.empty, issues: locate(parsed.value, issues, TENANT_ALLOW_LIST_PATH) }
}

/** The write-time check (DocumentService): a bad entry is a 422 naming its line, not a list that silently allows nothing. */
export function checkTenantAllowListDocument(path: string, body: YamlSource): Issue[] {
  return path === TENANT_ALLOW_LIST_PATH ? parseTenantAllowList(body).issues : []
}

export function documentTenantAllowList(
  store: DocumentStore,
  opts: { path?: string; log?: Logger; maxEntries?: number } = {},
): TenantAllowListSource {
  const path = opts.path ?? TENANT_ALLOW_LIST_PATH
  const log = opts.log ?? silentLogger
  const max = opts.maxEntries ?? 1000
  const cache = new Map<string, { version: number; list: AllowList }>()
  return async (tenant) => {
    const doc = await store.get({ scope: scopeOf(tenant, TENANT_LAYER), path })
    if (!doc) return AllowList.empty
    const hit = cache.get(tenant)
    if (hit && hit.version === doc.version) return hit.list
    const { list, issues } = parseTenantAllowList(yamlSourceOf(doc))
    if (issues.length) log.log('warn', 'egress.tenant_allow_list_invalid', { tenant, path, version: doc.version, issues })
    if (cache.size >= max && !cache.has(tenant)) cache.delete(cache.keys().next().value as string)
    cache.set(tenant, { version: doc.version, list })
    return list
  }
}
