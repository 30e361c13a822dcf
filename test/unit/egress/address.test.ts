import { describe, expect, it } from 'vitest'
import {
  type AddressClass,
  cidrContains,
  classifyAddress,
  formatAddress,
  parseAddress,
  parseCidr,
  parseIPv4,
  socketAddress,
} from '../../../lib/egress/address'

const cls = (text: string) => classifyAddress(text)?.class

describe('classifyAddress over IPv4', () => {
  const cases: [string, AddressClass][] = [
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.0.0.2', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.51.100.1', 'reserved'],
    ['203.0.113.5', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.192', 'reserved'],
  ]
  it.each(cases)('classifies %s as %s', (address, expected) => {
    expect(cls(address)).toBe(expected)
  })

  it('flags the cloud metadata addresses as metadata', () => {
    expect(classifyAddress('169.254.169.254')?.metadata).toBe(true)
    expect(classifyAddress('169.254.170.2')?.metadata).toBe(true)
    expect(classifyAddress('100.100.100.200')).toMatchObject({ class: 'cgnat', metadata: true })
    expect(classifyAddress('169.254.1.1')?.metadata).toBeUndefined()
  })
})

describe('classifyAddress over unusual IPv4 spellings', () => {
  const cases: [string, string, AddressClass][] = [
    ['2130706433', '127.0.0.1', 'loopback'], // decimal
    ['0x7f000001', '127.0.0.1', 'loopback'], // hex
    ['017700000001', '127.0.0.1', 'loopback'], // octal
    ['0177.0.0.1', '127.0.0.1', 'loopback'], // octal first part
    ['0x7f.1', '127.0.0.1', 'loopback'], // two parts, hex
    ['127.1', '127.0.0.1', 'loopback'], // two parts
    ['127.0.1', '127.0.0.1', 'loopback'], // three parts
    ['0xA9.0xFE.0xA9.0xFE', '169.254.169.254', 'link-local'],
    ['2852039166', '169.254.169.254', 'link-local'],
    ['0251.0376.0251.0376', '169.254.169.254', 'link-local'],
    ['012.0.0.1', '10.0.0.1', 'private'],
    ['0', '0.0.0.0', 'unspecified'],
    ['0x0', '0.0.0.0', 'unspecified'],
    ['3232235777', '192.168.1.1', 'private'],
  ]
  it.each(cases)('reads %s as %s (%s)', (spelling, canonical, expected) => {
    expect(classifyAddress(spelling)).toMatchObject({ address: canonical, family: 4, class: expected })
  })

  it('rejects spellings that are not addresses', () => {
    for (const text of [
      '',
      '1.2.3.4.5',
      '256.1.1.1',
      '1.2.3.256',
      '4294967296',
      '08.1.1.1',
      '1..2.3',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '+1.2.3.4',
      'example.com',
      '0x1g',
      '1.2.3.0x100',
    ]) {
      expect(parseIPv4(text), text).toBeUndefined()
      expect(classifyAddress(text), text).toBeUndefined()
    }
  })
})

describe('classifyAddress over IPv6', () => {
  const cases: [string, AddressClass][] = [
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'], // Teredo
    ['100::1', 'reserved'],
    ['4000::1', 'reserved'], // outside 2000::/3
  ]
  it.each(cases)('classifies %s as %s', (address, expected) => {
    expect(cls(address)).toBe(expected)
  })

  it('flags the AWS IPv6 metadata address as metadata', () => {
    expect(classifyAddress('fd00:ec2::254')?.metadata).toBe(true)
  })

  it('rejects malformed IPv6 text', () => {
    for (const text of ['1:2:3:4:5:6:7:8:9', '1::2::3', '12345::1', 'g::1', '::1.2.3', '1:2:3:4:5:6:7::8:9', ':::']) {
      expect(classifyAddress(text), text).toBeUndefined()
    }
  })
})

describe('classifyAddress over IPv6 forms that carry IPv4', () => {
  const cases: [string, string, AddressClass][] = [
    ['::ffff:127.0.0.1', '127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', '127.0.0.1', 'loopback'],
    ['0:0:0:0:0:ffff:7f00:0001', '127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', '169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', '169.254.169.254', 'link-local'],
    ['::ffff:10.0.0.1', '10.0.0.1', 'private'],
    ['::ffff:100.64.1.1', '100.64.1.1', 'cgnat'],
    ['::ffff:8.8.8.8', '8.8.8.8', 'public'],
    ['::127.0.0.1', '127.0.0.1', 'loopback'], // IPv4-compatible (deprecated)
    ['::ffff:0:127.0.0.1', '127.0.0.1', 'loopback'], // SIIT
    ['64:ff9b::10.0.0.1', '10.0.0.1', 'private'], // NAT64
    ['64:ff9b::169.254.169.254', '169.254.169.254', 'link-local'],
    ['2002:7f00:1::', '127.0.0.1', 'loopback'], // 6to4
    ['2002:a9fe:a9fe::1', '169.254.169.254', 'link-local'],
    ['2002:0808:0808::1', '8.8.8.8', 'public'],
  ]
  it.each(cases)('classifies %s by its IPv4 %s as %s', (address, embedded, expected) => {
    expect(classifyAddress(address)).toMatchObject({ family: 6, class: expected, embeddedIPv4: embedded })
  })

  it('connects to the IPv4 socket an IPv4-mapped address names', () => {
    expect(socketAddress(classifyAddress('::ffff:127.0.0.1')!)).toEqual({ address: '127.0.0.1', family: 4 })
    expect(socketAddress(classifyAddress('2606:4700::1')!)).toEqual({ address: '2606:4700::1', family: 6 })
  })
})

describe('address formatting and CIDR blocks', () => {
  it('formats IPv6 canonically, compressing the longest zero run', () => {
    expect(formatAddress(parseAddress('2001:0db8:0000:0000:0001:0000:0000:0001')!)).toBe('2001:db8::1:0:0:1')
    expect(formatAddress(parseAddress('0:0:0:0:0:0:0:1')!)).toBe('::1')
    expect(formatAddress(parseAddress('::ffff:7f00:1')!)).toBe('::ffff:127.0.0.1')
  })

  it('parses CIDR blocks and bare addresses', () => {
    expect(parseCidr('10.0.0.0/8')?.text).toBe('10.0.0.0/8')
    expect(parseCidr('127.0.0.1')?.text).toBe('127.0.0.1/32')
    expect(parseCidr('fd00::/8')?.text).toBe('fd00::/8')
    for (const bad of ['10.0.0.0/33', '10.0.0/8', '0x7f.0.0.1/8', 'fd00::/129', '10.0.0.0/', '10.0.0.0/a', 'host/8'])
      expect(parseCidr(bad), bad).toBeUndefined()
  })

  it('matches addresses against CIDRs, including IPv4-mapped IPv6 against an IPv4 block', () => {
    const loop = parseCidr('127.0.0.1/32')!
    expect(cidrContains(loop, parseAddress('127.0.0.1')!)).toBe(true)
    expect(cidrContains(loop, parseAddress('127.0.0.2')!)).toBe(false)
    expect(cidrContains(loop, parseAddress('::ffff:127.0.0.1')!)).toBe(true)
    expect(cidrContains(parseCidr('10.20.0.0/16')!, parseAddress('10.20.255.1')!)).toBe(true)
    expect(cidrContains(parseCidr('10.20.0.0/16')!, parseAddress('10.21.0.1')!)).toBe(false)
    expect(cidrContains(parseCidr('fd00::/8')!, parseAddress('fd12::1')!)).toBe(true)
    expect(cidrContains(parseCidr('fd00::/8')!, parseAddress('fc12::1')!)).toBe(false)
    expect(cidrContains(parseCidr('0.0.0.0/0')!, parseAddress('::1')!)).toBe(false)
  })
})
