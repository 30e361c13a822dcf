import { describe, expect, it } from 'vitest'
import { scopeOf } from '../../../lib/documents/ports'
import { parseAddress } from '../../../lib/egress/address'
import { AllowList, deploymentAllowList, parseAllowListSetting } from '../../../lib/egress/allow-list'
import { documentTenantAllowList, parseTenantAllowList, TENANT_ALLOW_LIST_PATH } from '../../../lib/egress/tenant-allow-list'
import { isServerToolsError } from '../../../lib/errors'
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
    expect(list.allowsHost('127.0.0.1', 443)).toBe(true)
    expect(list.allowsHost('localhost', 443)).toBe(false)
    expect(list.allowsAddress(parseAddress('10.1.2.3')!, 443)).toBe(true)
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
    expect(list.allowsHost('127.0.0.1', 443)).toBe(true)
    expect(list.allowsHost('api.example.com', 443)).toBe(true)
    expect(list.allowsHost('::1', 443)).toBe(true)
    expect(list.allowsHost('0:0:0:0:0:0:0:1', 443)).toBe(true)
    expect(list.allowsHost('example.com', 443)).toBe(false)
    expect(list.toJSON()).toEqual({ hosts: ['127.0.0.1', 'api.example.com', '::1'], cidrs: [] })
  })
})

describe('allow-list entries with a port', () => {
  const list = AllowList.of({
    hosts: ['127.0.0.1:8443', 'api.internal:9000', '*.corp.test:443', '[::1]:8080', 'open.internal', '::2'],
    cidrs: ['10.0.0.0/8:8443', 'fd00::/8:443', '[fd01::]/16:80', '192.168.1.5:25', '[fd02::1]:53', '172.16.0.0/12'],
  })
  const at = (a: string) => parseAddress(a)!

  it('allows a host entry only at its port, and an entry without a port at every port', () => {
    expect(list.allowsHost('127.0.0.1', 8443)).toBe(true)
    expect(list.allowsHost('127.0.0.1', 8444)).toBe(false)
    expect(list.allowsHost('API.internal', 9000)).toBe(true)
    expect(list.allowsHost('api.internal', 80)).toBe(false)
    expect(list.allowsHost('x.corp.test', 443)).toBe(true)
    expect(list.allowsHost('x.corp.test', 80)).toBe(false)
    expect(list.allowsHost('0:0:0:0:0:0:0:1', 8080)).toBe(true)
    expect(list.allowsHost('::1', 8081)).toBe(false)
    expect(list.allowsHost('open.internal', 1)).toBe(true)
    expect(list.allowsHost('open.internal', 65535)).toBe(true)
    expect(list.allowsHost('::2', 22)).toBe(true)
  })

  it('allows a CIDR entry only at its port, the port written after the prefix length or after a bracketed address', () => {
    expect(list.allowsAddress(at('10.9.9.9'), 8443)).toBe(true)
    expect(list.allowsAddress(at('10.9.9.9'), 443)).toBe(false)
    expect(list.allowsAddress(at('fd12::1'), 443)).toBe(true)
    expect(list.allowsAddress(at('fd12::1'), 80)).toBe(false)
    expect(list.allowsAddress(at('fd01:1::1'), 80)).toBe(true)
    expect(list.allowsAddress(at('192.168.1.5'), 25)).toBe(true)
    expect(list.allowsAddress(at('192.168.1.5'), 26)).toBe(false)
    expect(list.allowsAddress(at('fd02::1'), 53)).toBe(true)
    expect(list.allowsAddress(at('172.20.0.1'), 5432)).toBe(true)
    expect(list.allows('elsewhere', at('10.1.1.1'), 8443)).toBe(true)
  })

  it('writes entries back in the same syntax', () => {
    expect(list.toJSON()).toEqual({
      hosts: ['127.0.0.1:8443', 'api.internal:9000', '[::1]:8080', 'open.internal', '::2', '*.corp.test:443'],
      cidrs: ['10.0.0.0/8:8443', 'fd00::/8:443', 'fd01::/16:80', '192.168.1.5/32:25', 'fd02::1/128:53', '172.16.0.0/12'],
    })
  })

  it('names entries whose port is missing, zero, too large or not a number', () => {
    const { issues } = AllowList.parse({
      hosts: ['a.test:', 'a.test:0', 'a.test:65536', 'a.test:http', '[::1]:x', '[::1'],
      cidrs: ['10.0.0.0/8:', '10.0.0.0/8:70000', 'fd00::1:443x', '1.2.3.4:0'],
    })
    expect(issues.map((i) => i.pointer)).toEqual([
      '/hosts/0',
      '/hosts/1',
      '/hosts/2',
      '/hosts/3',
      '/hosts/4',
      '/hosts/5',
      '/cidrs/0',
      '/cidrs/1',
      '/cidrs/2',
      '/cidrs/3',
    ])
    expect(issues[1].message).toBe("'a.test:0' has a port that is not a number from 1 to 65535")
  })

  it('reads ports in EGRESS_ALLOW_HOSTS and in a tenant document', () => {
    expect(deploymentAllowList({ EGRESS_ALLOW_HOSTS: '127.0.0.1:4000, [::1]:4000' }).toJSON().hosts).toEqual([
      '127.0.0.1:4000',
      '[::1]:4000',
    ])
    const { list: tenant, issues } = parseTenantAllowList('hosts: ["intranet.acme:8443"]\ncidrs: ["10.20.0.0/16:5432"]\n')
    expect(issues).toEqual([])
    expect(tenant.allowsHost('intranet.acme', 8443)).toBe(true)
    expect(tenant.allowsHost('intranet.acme', 443)).toBe(false)
    expect(tenant.allowsAddress(at('10.20.1.1'), 5432)).toBe(true)
  })
})

describe('the tenant allow-list document', () => {
  it('parses hosts and cidrs from YAML', () => {
    const { list, issues } = parseTenantAllowList('hosts: [intranet.acme, "*.corp.acme"]\ncidrs: [10.20.0.0/16]\n')
    expect(issues).toEqual([])
    expect(list.toJSON()).toEqual({ hosts: ['intranet.acme', '*.corp.acme'], cidrs: ['10.20.0.0/16'] })
  })

  it('allows nothing when the document is invalid, and says where', () => {
    expect(parseTenantAllowList('hosts: [ok.acme]\nports: [80]\n').issues).toEqual([
      { path: 'egress/allow.yaml', pointer: '/ports', line: 2, column: 8, message: 'ports is not allowed here' },
    ])
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

    await store.put({
      key: { scope: scopeOf('acme', '_tenant'), path: TENANT_ALLOW_LIST_PATH },
      body: 'hosts: [intranet.acme]',
      actor: 'u',
    })
    const first = await source('acme')
    expect(first.allowsHost('intranet.acme', 443)).toBe(true)
    expect(await source('acme')).toBe(first)
    expect((await source('other')).isEmpty).toBe(true)

    await store.put({ key: { scope: scopeOf('acme', '_tenant'), path: TENANT_ALLOW_LIST_PATH }, body: 'cidrs: [bogus]', actor: 'u' })
    expect((await source('acme')).isEmpty).toBe(true)
    expect(log.find('egress.tenant_allow_list_invalid')[0].fields).toMatchObject({ tenant: 'acme', version: 2 })
  })
})
