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
 * asks for it when a destination is not public. A document that does not parse or validate
 * allows nothing (fail closed) and is logged.
 */
import { parseYaml } from '../config/yaml'
import { validateAgainst } from '../config/json-schema'
import type { DocumentStore } from '../documents/ports'
import { scopeOf, TENANT_LAYER } from '../documents/ports'
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

/** Parses and validates the document body; issues carry JSON pointers. */
export function parseTenantAllowList(body: string): { list: AllowList; issues: { pointer?: string; message: string }[] } {
  let data: unknown = {}
  if (body.trim() !== '') {
    // the shared reader: shape and size checked before the YAML parser runs (issue 10 F3)
    const parsed = parseYaml(body)
    if (!parsed.ok) return { list: AllowList.empty, issues: parsed.issues.map((i) => ({ message: `not valid YAML: ${i.message}${i.line ? ` (line ${i.line})` : ''}` })) }
    data = parsed.value.data
  }
  if (data == null) data = {}
  const schemaIssues = validateAgainst(tenantAllowListSchema, data)
  if (schemaIssues.length) return { list: AllowList.empty, issues: schemaIssues }
  const { list, issues } = AllowList.parse(data as { hosts?: string[]; cidrs?: string[] })
  return issues.length ? { list: AllowList.empty, issues } : { list, issues: [] }
}

export function documentTenantAllowList(store: DocumentStore, opts: { path?: string; log?: Logger; maxEntries?: number } = {}): TenantAllowListSource {
  const path = opts.path ?? TENANT_ALLOW_LIST_PATH
  const log = opts.log ?? silentLogger
  const max = opts.maxEntries ?? 1000
  const cache = new Map<string, { version: number; list: AllowList }>()
  return async (tenant) => {
    const doc = await store.get({ scope: scopeOf(tenant, TENANT_LAYER), path })
    if (!doc) return AllowList.empty
    const hit = cache.get(tenant)
    if (hit && hit.version === doc.version) return hit.list
    const { list, issues } = parseTenantAllowList(doc.body)
    if (issues.length) log.log('warn', 'egress.tenant_allow_list_invalid', { tenant, path, version: doc.version, issues })
    if (cache.size >= max && !cache.has(tenant)) cache.delete(cache.keys().next().value as string)
    cache.set(tenant, { version: doc.version, list })
    return list
  }
}
