/**
 * SecretStore on SSM Parameter Store: one SecureString per secret at `/server-tools/<tenant>/<name>`.
 *
 * Why Parameter Store and not Secrets Manager:
 * - cost: standard parameters are free to store (Secrets Manager bills every secret monthly), and a
 *   multi-tenant service holds many small per-tenant values;
 * - the path hierarchy is the tenancy model: one IAM statement on `parameter/server-tools/*`, and a
 *   tenant's names are one GetParametersByPath query;
 * - GetParameters reads up to 10 values (decrypted) in one call — a tool's references are one round trip;
 * - what Secrets Manager adds (rotation lambdas, cross-region replication, 64 KB values) is not
 *   something `${secret:NAME}` references need. Values are limited to 4 KB (standard tier).
 * The standard throughput quota is modest, so the composition root wraps this store in
 * CachedSecretStore (lib/secrets/cached.ts).
 */
import type { SSMClient } from '@aws-sdk/client-ssm'
import { ServerToolsError } from '../../errors'
import { assertSecretName, assertSecretValue, assertTenant, type SecretStore, secretNotFound } from '../../secrets/ports'

type SsmSender = Pick<SSMClient, 'send'>
type Operation = 'PutParameter' | 'DeleteParameter' | 'GetParametersByPath' | 'GetParameters'

let ssmSdk: Promise<typeof import('@aws-sdk/client-ssm')> | undefined
/**
 * The SSM SDK (~80 KiB) is imported when a secret is first written or read, never at cold start:
 * most requests reference no secret.
 */
const loadSsmSdk = () => (ssmSdk ??= import('@aws-sdk/client-ssm'))

export interface SsmSecretStoreOptions {
  /** The client, or a function building it on first use. */
  ssm: SsmSender | (() => Promise<SsmSender>)
  /** Path prefix, default `/server-tools`. */
  prefix?: string
  /** KMS key for SecureString encryption; default the account's `alias/aws/ssm`. */
  kmsKeyId?: string
}

const BATCH = 10 // GetParameters accepts at most 10 names

export class SsmSecretStore implements SecretStore {
  private readonly prefix: string
  /** SSM requests sent, so tests can prove batching. */
  roundTrips = 0

  constructor(private readonly opts: SsmSecretStoreOptions) {
    this.prefix = (opts.prefix ?? '/server-tools').replace(/\/+$/, '')
    if (!/^\/[A-Za-z0-9_.\-/]*$/.test(this.prefix))
      throw new ServerToolsError('INVALID_CONFIG', `SSM prefix '${this.prefix}' is not a parameter path`)
  }

  /** The parameter name of a tenant's secret. */
  parameterName(tenant: string, name: string) {
    return `${this.prefix}/${tenant}/${name}`
  }

  async put(tenant: string, name: string, value: string) {
    assertTenant(tenant)
    assertSecretName(name)
    assertSecretValue(value)
    const out = await this.send('PutParameter', {
      Name: this.parameterName(tenant, name),
      Value: value,
      Type: 'SecureString',
      Overwrite: true,
      Tier: 'Standard',
      ...(this.opts.kmsKeyId ? { KeyId: this.opts.kmsKeyId } : {}),
    })
    // a parameter's version starts at 1 on creation (deleting it drops the history)
    return out.Version === 1 ? ('created' as const) : ('updated' as const)
  }

  async delete(tenant: string, name: string) {
    assertTenant(tenant)
    assertSecretName(name)
    try {
      await this.send('DeleteParameter', { Name: this.parameterName(tenant, name) })
    } catch (e) {
      if (isNamed(e, 'ParameterNotFound')) throw secretNotFound(name)
      throw e
    }
  }

  async list(tenant: string) {
    assertTenant(tenant)
    const base = `${this.prefix}/${tenant}/`
    const names: string[] = []
    let NextToken: string | undefined
    do {
      const page = await this.send('GetParametersByPath', {
        Path: base.slice(0, -1),
        Recursive: false,
        WithDecryption: false,
        MaxResults: 10,
        ...(NextToken ? { NextToken } : {}),
      })
      for (const p of page.Parameters ?? []) if (p.Name?.startsWith(base)) names.push(p.Name.slice(base.length))
      NextToken = page.NextToken
    } while (NextToken)
    return names.sort()
  }

  async get(tenant: string, name: string) {
    return (await this.getMany(tenant, [name])).get(name)
  }

  async getMany(tenant: string, names: string[]) {
    assertTenant(tenant)
    const wanted = [...new Set(names)].filter((n) => {
      try {
        assertSecretName(n)
        return true
      } catch {
        return false
      }
    })
    const out = new Map<string, string>()
    const base = `${this.prefix}/${tenant}/`
    const batches: string[][] = []
    for (let i = 0; i < wanted.length; i += BATCH) batches.push(wanted.slice(i, i + BATCH))
    const pages = await Promise.all(
      batches.map((batch) => this.send('GetParameters', { Names: batch.map((n) => this.parameterName(tenant, n)), WithDecryption: true })),
    )
    for (const page of pages) {
      for (const p of page.Parameters ?? [])
        if (p.Name?.startsWith(base) && p.Value !== undefined) out.set(p.Name.slice(base.length), p.Value)
    }
    return out
  }

  private async send(operation: Operation, input: Record<string, unknown>): Promise<any> {
    this.roundTrips++
    const sdk = await loadSsmSdk()
    const Command = sdk[`${operation}Command`] as unknown as new (input: Record<string, unknown>) => object
    const command = new Command(input)
    const ssm = typeof this.opts.ssm === 'function' ? await this.opts.ssm() : this.opts.ssm
    try {
      return await ssm.send(command as never)
    } catch (e) {
      if (isNamed(e, 'ThrottlingException') || isNamed(e, 'TooManyUpdates')) {
        throw new ServerToolsError('THROTTLED', 'the secret store is busy; retry shortly', undefined, { cause: e })
      }
      throw e
    }
  }
}

const isNamed = (e: unknown, name: string) => (e as { name?: string } | null)?.name === name

/**
 * For composition roots (which may not import the SDK): an SSM client and the store over it.
 * IAM: ssm:PutParameter, ssm:DeleteParameter, ssm:GetParameters, ssm:GetParametersByPath on
 * `arn:aws:ssm:<region>:<account>:parameter/server-tools/*` (plus kms:Encrypt/Decrypt when
 * `kmsKeyId` names a customer-managed key).
 */
export function createSsmSecretStore(
  opts: {
    region?: string
    endpoint?: string
    credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
    prefix?: string
    kmsKeyId?: string
  } = {},
): { store: SsmSecretStore; destroy(): void } {
  let client: Promise<SSMClient> | undefined
  let built: SSMClient | undefined
  const ssm = () =>
    (client ??= loadSsmSdk().then(
      ({ SSMClient }) =>
        (built = new SSMClient({
          ...(opts.region ? { region: opts.region } : {}),
          ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
          ...(opts.credentials ? { credentials: opts.credentials } : {}),
        })),
    ))
  return { store: new SsmSecretStore({ ssm, prefix: opts.prefix, kmsKeyId: opts.kmsKeyId }), destroy: () => built?.destroy() }
}
