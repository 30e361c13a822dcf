import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../../lib/errors'
import { ManualClock } from '../../../lib/runtime/clock'
import { CachedSecretStore } from '../../../lib/secrets/cached'
import { LocalSecretStore } from '../../../lib/secrets/local'
import { MemorySecretStore } from '../../../lib/secrets/memory'
import { createSsmSecretStore, SsmSecretStore } from '../../../lib/stores/aws/secret-store'
import { FakeSsm } from './fake-ssm'
import { secretStoreContract } from './secret-store.contract'

const dirs: string[] = []
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), 'secrets-'))
  dirs.push(d)
  return d
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

secretStoreContract('memory', async () => new MemorySecretStore())
secretStoreContract('local encrypted file', async () => new LocalSecretStore({ dir: await tempDir() }))
secretStoreContract('cached over memory', async () => new CachedSecretStore(new MemorySecretStore(), { clock: new ManualClock() }))
secretStoreContract('SSM Parameter Store (fake SSM API)', async () => new SsmSecretStore({ ssm: new FakeSsm() }))

describe('LocalSecretStore', () => {
  it('never writes a value in clear text and reads it back after a restart', async () => {
    const dir = await tempDir()
    await new LocalSecretStore({ dir }).put('acme', 'API_TOKEN', 'plain-text-canary-123')
    const file = await readFile(join(dir, 'secrets.enc.json'), 'utf8')
    expect(file).not.toContain('plain-text-canary-123')
    expect(file).not.toContain('API_TOKEN')
    expect(file).not.toContain('acme')
    expect(await new LocalSecretStore({ dir }).get('acme', 'API_TOKEN')).toBe('plain-text-canary-123')
  })

  it('creates its key file readable by the owner only', async () => {
    const dir = await tempDir()
    await new LocalSecretStore({ dir }).put('acme', 'K', 'v')
    const mode = (await stat(join(dir, 'secrets.key'))).mode & 0o777
    expect(mode).toBe(0o600)
    expect((await stat(join(dir, 'secrets.enc.json'))).mode & 0o777).toBe(0o600)
  })

  it('uses a key passed in instead of a key file', async () => {
    const dir = await tempDir()
    const key = randomBytes(32)
    await new LocalSecretStore({ dir, key }).put('acme', 'K', 'v')
    expect(await new LocalSecretStore({ dir, key }).get('acme', 'K')).toBe('v')
    await expect(stat(join(dir, 'secrets.key'))).rejects.toThrow()
    expect(() => new LocalSecretStore({ dir, key: randomBytes(16) })).toThrow(/32 bytes/)
  })

  it('refuses to read with the wrong key or a tampered file, without echoing the file', async () => {
    const dir = await tempDir()
    await new LocalSecretStore({ dir }).put('acme', 'K', 'canary-value')
    const wrong = new LocalSecretStore({ dir, key: randomBytes(32) })
    const e1 = await wrong.get('acme', 'K').catch((e) => e)
    expect(isServerToolsError(e1, 'INVALID_CONFIG')).toBe(true)
    expect(e1.message).toMatch(/cannot be decrypted/)

    const box = JSON.parse(await readFile(join(dir, 'secrets.enc.json'), 'utf8'))
    const data = Buffer.from(box.data, 'base64')
    data[0] ^= 1
    await writeFile(join(dir, 'secrets.enc.json'), JSON.stringify({ ...box, data: data.toString('base64') }))
    const e2 = await new LocalSecretStore({ dir }).get('acme', 'K').catch((e) => e)
    expect(isServerToolsError(e2, 'INVALID_CONFIG')).toBe(true)
    expect(e2.message).not.toContain('canary')
  })

  it('keeps every one of many concurrent writes', async () => {
    const store = new LocalSecretStore({ dir: await tempDir() })
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.put('acme', `N${i}`, `v${i}`)))
    expect((await store.list('acme')).length).toBe(20)
  })
})

describe('SsmSecretStore', () => {
  it('stores SecureStrings under /server-tools/<tenant>/<name> with the configured KMS key', async () => {
    const ssm = new FakeSsm()
    await new SsmSecretStore({ ssm, kmsKeyId: 'alias/server-tools' }).put('acme', 'API_TOKEN', 'v')
    expect([...ssm.params.entries()]).toEqual([
      ['/server-tools/acme/API_TOKEN', { value: 'v', version: 1, type: 'SecureString', keyId: 'alias/server-tools' }],
    ])
  })

  it('reads up to ten values per request, in parallel batches', async () => {
    const ssm = new FakeSsm()
    const store = new SsmSecretStore({ ssm })
    for (let i = 0; i < 25; i++) await store.put('acme', `K${i}`, `v${i}`)
    ssm.calls.length = 0
    const got = await store.getMany(
      'acme',
      Array.from({ length: 25 }, (_, i) => `K${i}`),
    )
    expect(got.size).toBe(25)
    expect(ssm.calls).toEqual(['GetParametersCommand', 'GetParametersCommand', 'GetParametersCommand'])
  })

  it('lists only the direct children of the tenant path', async () => {
    const ssm = new FakeSsm()
    const store = new SsmSecretStore({ ssm })
    await store.put('acme', 'A', 'x')
    ssm.params.set('/server-tools/acme/nested/B', { value: 'y', version: 1, type: 'SecureString' })
    ssm.params.set('/server-tools/acme-other/C', { value: 'z', version: 1, type: 'SecureString' })
    expect(await store.list('acme')).toEqual(['A'])
  })

  it('turns SSM throttling into THROTTLED', async () => {
    const ssm = new FakeSsm()
    ssm.throttleNext = true
    const e = await new SsmSecretStore({ ssm }).get('acme', 'A').catch((err) => err)
    expect(isServerToolsError(e, 'THROTTLED')).toBe(true)
  })
})

describe('CachedSecretStore', () => {
  it('serves repeated reads from memory until the TTL passes', async () => {
    const inner = new MemorySecretStore()
    const clock = new ManualClock()
    const store = new CachedSecretStore(inner, { clock, ttlMs: 1000 })
    await inner.put('acme', 'K', 'v1')
    inner.reads = 0
    expect(await store.get('acme', 'K')).toBe('v1')
    expect(await store.get('acme', 'K')).toBe('v1')
    expect(await store.get('acme', 'MISSING')).toBeUndefined()
    expect(await store.get('acme', 'MISSING')).toBeUndefined()
    expect(inner.reads).toBe(2)
    await inner.put('acme', 'K', 'v2') // another container's write
    expect(await store.get('acme', 'K')).toBe('v1')
    clock.advance(1001)
    expect(await store.get('acme', 'K')).toBe('v2')
  })

  it('forgets a value at once when this container writes or deletes it', async () => {
    const store = new CachedSecretStore(new MemorySecretStore(), { clock: new ManualClock() })
    await store.put('acme', 'K', 'v1')
    expect(await store.get('acme', 'K')).toBe('v1')
    await store.put('acme', 'K', 'v2')
    expect(await store.get('acme', 'K')).toBe('v2')
    await store.delete('acme', 'K')
    expect(await store.get('acme', 'K')).toBeUndefined()
  })
})

describe('createSsmSecretStore', () => {
  it('builds an SSM-backed store under the default prefix without contacting AWS', () => {
    const { store, destroy } = createSsmSecretStore({ region: 'eu-central-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } })
    expect(store.parameterName('acme', 'API_TOKEN')).toBe('/server-tools/acme/API_TOKEN')
    destroy()
  })
})
