import { describe, expect, it } from 'vitest'
import { AllowList, deploymentAllowList, parseAllowListSetting } from '../../../lib/egress/allow-list'
import { parseAddress } from '../../../lib/egress/address'
import { documentTenantAllowList, parseTenantAllowList, TENANT_ALLOW_LIST_PATH } from '../../../lib/egress/tenant-allow-list'
import { isServerToolsError } from '../../../lib/errors'
import { scopeOf } from '../../../lib/documents/ports'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemoryDocumentStore } from '../../../lib/stores/memory/document-store'

describe('the deployment allow-list setting', () => {
  it('splits EGRESS_ALLOW_HOSTS and EGRESS_ALLOW_CIDRS on commas and whitespace', () => {
    expect(parseAllowListSetting(' 127.0.0.1, api.internal ,,*.corp.test ', '10.0.0.0/8,fd00::/8')).toEqual({
      hosts: ['127.0.0.1', 'api.internal', '*.corp.test'],
      cidrs: ['10.0.0.0/8', 'fd00::/8'],
    })
    expect(parseAllowListSetting(undefined, '')).toEqual({ hosts: [], cidrs: [] })
  })

  it('builds an allow-list from the two variables', () => {
    const list = deploymentAllowList({ EGRESS_ALLOW_HOSTS: '127.0.0.1', EGRESS_ALLOW_CIDRS: '10.1.0.0/16' })
    expect(list.allowsHost('127.0.0.1')).toBe(true)
    expect(list.allowsHost('localhost')).toBe(false)
    expect(list.allowsAddress(parseAddress('10.1.2.3')!)).toBe(true)
    expect(deploymentAllowList({}).isEmpty).toBe(true)
  })

  it('rejects a setting with invalid entries, naming each one', () => {
    let error: unknown
    try {
      deploymentAllowList({ EGRESS_ALLOW_HOSTS: 'ok.example,bad!host,http://x', EGRESS_ALLOW_CIDRS: '10.0.0.0/99' })
    } catch (e) {
      error = e
    }
    expect(isServerToolsError(error, 'INVALID_CONFIG')).toBe(true)
    const issues = (error as { details: { errors: { pointer: string }[] } }).details.errors
    expect(issues.map((i) => i.pointer)).toEqual(['/hosts/1', '/hosts/2', '/cidrs/0'])
  })

  it('matches IP literal entries in any spelling and host names case-insensitively', () => {
    const list = AllowList.of({ hosts: ['0x7f.1', 'API.Example.COM.', '[::1]'] })
    expect(list.allowsHost('127.0.0.1')).toBe(true)
    expect(list.allowsHost('api.example.com')).toBe(true)
    expect(list.allowsHost('::1')).toBe(true)
    expect(list.allowsHost('0:0:0:0:0:0:0:1')).toBe(true)
    expect(list.allowsHost('example.com')).toBe(false)
    expect(list.toJSON()).toEqual({ hosts: ['127.0.0.1', 'api.example.com', '::1'], cidrs: [] })
  })
})

describe('the tenant allow-list document', () => {
  it('parses hosts and cidrs from YAML', () => {
    const { list, issues } = parseTenantAllowList('hosts: [intranet.acme, "*.corp.acme"]\ncidrs: [10.20.0.0/16]\n')
    expect(issues).toEqual([])
    expect(list.toJSON()).toEqual({ hosts: ['intranet.acme', '*.corp.acme'], cidrs: ['10.20.0.0/16'] })
  })

  it('allows nothing when the document is invalid, and says where', () => {
    expect(parseTenantAllowList('hosts: [ok.acme]\nports: [80]\n').issues).toEqual([{ path: 'egress/allow.yaml', pointer: '/ports', line: 2, column: 8, message: 'ports is not allowed here (line 2)' }])
    const bad = parseTenantAllowList('hosts: [ok.acme]\ncidrs: [nonsense]\n')
    expect(bad.list.isEmpty).toBe(true)
    expect(bad.issues[0].pointer).toBe('/cidrs/0')
    expect(parseTenantAllowList('hosts: [unclosed').list.isEmpty).toBe(true)
    expect(parseTenantAllowList('').issues).toEqual([])
  })

  it('reads the tenant layer only, re-parsing only when the version changes', async () => {
    const store = new MemoryDocumentStore()
    const log = new MemoryLogger()
    const source = documentTenantAllowList(store, { log })
    expect((await source('acme')).isEmpty).toBe(true)

    await store.put({ key: { scope: scopeOf('acme', 'p1'), path: TENANT_ALLOW_LIST_PATH }, body: 'hosts: [project.acme]', actor: 'u' })
    expect((await source('acme')).isEmpty).toBe(true)

    await store.put({ key: { scope: scopeOf('acme', '_tenant'), path: TENANT_ALLOW_LIST_PATH }, body: 'hosts: [intranet.acme]', actor: 'u' })
    const first = await source('acme')
    expect(first.allowsHost('intranet.acme')).toBe(true)
    expect(await source('acme')).toBe(first)
    expect((await source('other')).isEmpty).toBe(true)

    await store.put({ key: { scope: scopeOf('acme', '_tenant'), path: TENANT_ALLOW_LIST_PATH }, body: 'cidrs: [bogus]', actor: 'u' })
    expect((await source('acme')).isEmpty).toBe(true)
    expect(log.find('egress.tenant_allow_list_invalid')[0].fields).toMatchObject({ tenant: 'acme', version: 2 })
  })
})
