/**
 * SecretStore in one AES-256-GCM encrypted JSON file, for `npm start` (under DATA_DIR).
 *
 * - `<dir>/secrets.enc.json`: `{ format: 1, iv, tag, data }` (base64); the plaintext is
 *   `{ [tenant]: { [name]: value } }`. A fresh 96-bit IV per write; the format tag is bound as
 *   associated data, so a file cannot be swapped for one of another format undetected.
 * - The key: `key` (32 bytes) when given, else `<dir>/secrets.key` (64 hex characters), created
 *   with mode 0600 on first use. Losing the key file loses the secrets; that is the point.
 * - Writes are serialized in-process and atomic on disk (write a temp file, then rename).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ServerToolsError } from '../errors'
import { assertSecretName, assertSecretValue, assertTenant, type SecretStore, secretNotFound } from './ports'

type Plain = Record<string, Record<string, string>>

const FILE = 'secrets.enc.json'
const KEY_FILE = 'secrets.key'
const AAD = Buffer.from('server-tools/secrets/v1')

export interface LocalSecretStoreOptions {
  /** Directory holding the encrypted file (and the generated key file). */
  dir: string
  /** 32-byte key; when absent, `<dir>/secrets.key` is read or created. */
  key?: Buffer
}

export class LocalSecretStore implements SecretStore {
  private key?: Buffer
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly opts: LocalSecretStoreOptions) {
    if (opts.key && opts.key.length !== 32) throw new ServerToolsError('INVALID_CONFIG', 'the local secret store key must be 32 bytes')
    this.key = opts.key
  }

  async put(tenant: string, name: string, value: string) {
    assertTenant(tenant)
    assertSecretName(name)
    assertSecretValue(value)
    return this.mutate((plain) => {
      const secrets = Object.hasOwn(plain, tenant) ? plain[tenant] : (plain[tenant] = {})
      const existed = Object.hasOwn(secrets, name)
      secrets[name] = value
      return existed ? ('updated' as const) : ('created' as const)
    })
  }

  async delete(tenant: string, name: string) {
    assertTenant(tenant)
    assertSecretName(name)
    await this.mutate((plain) => {
      const secrets = Object.hasOwn(plain, tenant) ? plain[tenant] : undefined
      if (!secrets || !Object.hasOwn(secrets, name)) throw secretNotFound(name)
      delete secrets[name]
      if (Object.keys(secrets).length === 0) delete plain[tenant]
    })
  }

  async list(tenant: string) {
    assertTenant(tenant)
    const plain = await this.serialized(() => this.load())
    return Object.hasOwn(plain, tenant) ? Object.keys(plain[tenant]).sort() : []
  }

  async get(tenant: string, name: string) {
    assertTenant(tenant)
    const plain = await this.serialized(() => this.load())
    const secrets = Object.hasOwn(plain, tenant) ? plain[tenant] : undefined
    return secrets && Object.hasOwn(secrets, name) ? secrets[name] : undefined
  }

  async getMany(tenant: string, names: string[]) {
    assertTenant(tenant)
    const plain = await this.serialized(() => this.load())
    const secrets = Object.hasOwn(plain, tenant) ? plain[tenant] : {}
    const out = new Map<string, string>()
    for (const n of names) if (Object.hasOwn(secrets, n)) out.set(n, secrets[n])
    return out
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => undefined)
    return run
  }

  private mutate<T>(change: (plain: Plain) => T): Promise<T> {
    return this.serialized(async () => {
      const plain = await this.load()
      const result = change(plain)
      await this.save(plain)
      return result
    })
  }

  private async keyBytes(): Promise<Buffer> {
    if (this.key) return this.key
    const path = join(this.opts.dir, KEY_FILE)
    try {
      const hex = (await readFile(path, 'utf8')).trim()
      if (!/^[0-9a-f]{64}$/i.test(hex)) throw new ServerToolsError('INVALID_CONFIG', `${path} does not hold a 32-byte hex key`)
      this.key = Buffer.from(hex, 'hex')
    } catch (e) {
      if ((e as { code?: string }).code !== 'ENOENT') throw e
      await mkdir(this.opts.dir, { recursive: true })
      const key = randomBytes(32)
      // 'wx': never overwrite a key another process just created
      try {
        await writeFile(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
        this.key = key
      } catch (err) {
        if ((err as { code?: string }).code !== 'EEXIST') throw err
        return this.keyBytes()
      }
    }
    return this.key!
  }

  private async load(): Promise<Plain> {
    let text: string
    try {
      text = await readFile(join(this.opts.dir, FILE), 'utf8')
    } catch (e) {
      if ((e as { code?: string }).code === 'ENOENT') return {}
      throw e
    }
    const key = await this.keyBytes()
    try {
      const box = JSON.parse(text) as { format: number; iv: string; tag: string; data: string }
      if (box.format !== 1) throw new Error(`unknown format ${box.format}`)
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(box.iv, 'base64'))
      decipher.setAAD(AAD)
      decipher.setAuthTag(Buffer.from(box.tag, 'base64'))
      const plain = Buffer.concat([decipher.update(Buffer.from(box.data, 'base64')), decipher.final()])
      return JSON.parse(plain.toString('utf8')) as Plain
    } catch (e) {
      // never echo file content: it is ciphertext at best and a value at worst
      throw new ServerToolsError(
        'INVALID_CONFIG',
        `the secret file in ${this.opts.dir} cannot be decrypted with this key (wrong key or a damaged file)`,
        undefined,
        { cause: e },
      )
    }
  }

  private async save(plain: Plain) {
    const key = await this.keyBytes()
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, iv)
    cipher.setAAD(AAD)
    const data = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()])
    const box = { format: 1, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') }
    await mkdir(this.opts.dir, { recursive: true })
    const target = join(this.opts.dir, FILE)
    const tmp = `${target}.${randomBytes(8).toString('hex')}.tmp`
    await writeFile(tmp, JSON.stringify(box), { mode: 0o600 })
    await chmod(tmp, 0o600)
    await rename(tmp, target)
  }
}
