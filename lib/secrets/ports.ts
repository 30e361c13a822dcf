/**
 * Secrets by reference: a tenant stores a value once (`PUT /brain/{t}/secrets/{name}`) and tool
 * configurations name it as `${secret:NAME}`. Values are write-only through the API: listing
 * returns names, and only tool invocations read values (then scrub them from what they return).
 * Every adapter (memory, local encrypted file, SSM) keeps the promises below.
 */
import { invalidInput, ServerToolsError } from '../errors'

export interface SecretStore {
  /** Creates or replaces a secret; says which. INVALID_INPUT for a bad name or value. */
  put(tenant: string, name: string, value: string): Promise<'created' | 'updated'>
  /** NOT_FOUND when the tenant has no secret of that name. */
  delete(tenant: string, name: string): Promise<void>
  /** The tenant's secret names, sorted. Never values. */
  list(tenant: string): Promise<string[]>
  get(tenant: string, name: string): Promise<string | undefined>
  /** Several values in as few round trips as the backend allows; absent names are left out. */
  getMany(tenant: string, names: string[]): Promise<Map<string, string>>
}

/** Letters, digits, `_` and `-`, starting with a letter; what `${secret:NAME}` accepts. */
export const SECRET_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,127}$/
/** SSM standard parameters hold 4 KB; every adapter keeps the same limit. */
export const MAX_SECRET_BYTES = 4096

export function assertSecretName(name: string): void {
  if (!SECRET_NAME_PATTERN.test(name)) {
    throw invalidInput(
      `secret name '${name.slice(0, 140)}' must start with a letter and contain only letters, digits, '_' and '-' (at most 128)`,
      [{ pointer: '/name', message: 'invalid secret name' }],
    )
  }
}

/** Tenant ids become SSM path segments and file keys: letters, digits, `_`, `.`, `-`. */
export const SECRET_TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/

export function assertTenant(tenant: string): void {
  if (!SECRET_TENANT_PATTERN.test(tenant)) throw invalidInput(`tenant id '${tenant.slice(0, 140)}' cannot hold secrets`)
}

export function assertSecretValue(value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidInput('a secret value must be a non-empty string', [{ pointer: '/value', message: 'value must be a non-empty string' }])
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_BYTES) {
    throw new ServerToolsError('TOO_LARGE', `a secret value may be at most ${MAX_SECRET_BYTES} bytes`, {
      errors: [{ pointer: '/value', message: 'too large' }],
    })
  }
}

export const secretNotFound = (name: string) => new ServerToolsError('NOT_FOUND', `there is no secret named '${name}'`)
