import { assertSecretName, assertSecretValue, assertTenant, type SecretStore, secretNotFound } from './ports'

/** In-process SecretStore (tests, and a fallback for `npm start` without a data directory). */
export class MemorySecretStore implements SecretStore {
  private readonly byTenant = new Map<string, Map<string, string>>()
  /** Backend reads served, so tests can prove batching and caching. */
  reads = 0

  async put(tenant: string, name: string, value: string) {
    assertTenant(tenant)
    assertSecretName(name)
    assertSecretValue(value)
    let secrets = this.byTenant.get(tenant)
    if (!secrets) this.byTenant.set(tenant, (secrets = new Map()))
    const existed = secrets.has(name)
    secrets.set(name, value)
    return existed ? ('updated' as const) : ('created' as const)
  }

  async delete(tenant: string, name: string) {
    assertTenant(tenant)
    assertSecretName(name)
    if (!this.byTenant.get(tenant)?.delete(name)) throw secretNotFound(name)
  }

  async list(tenant: string) {
    return [...(this.byTenant.get(tenant)?.keys() ?? [])].sort()
  }

  async get(tenant: string, name: string) {
    this.reads++
    return this.byTenant.get(tenant)?.get(name)
  }

  async getMany(tenant: string, names: string[]) {
    this.reads++
    const out = new Map<string, string>()
    const secrets = this.byTenant.get(tenant)
    for (const n of names) {
      const v = secrets?.get(n)
      if (v !== undefined) out.set(n, v)
    }
    return out
  }
}
