/**
 * A small in-memory stand-in for the SSM API calls SsmSecretStore makes (there is no SSM
 * emulator among the test services). It keeps the behaviours the adapter relies on: versions
 * that restart at 1 after a delete, ParameterNotFound, 10-name batches, 10-item pages with
 * NextToken, and non-recursive path listing. Commands are recognised by class name, so the
 * tests do not import the AWS SDK.
 */
type Command = { constructor: { name: string }; input: Record<string, any> }

export class FakeSsm {
  readonly params = new Map<string, { value: string; version: number; type: string; keyId?: string }>()
  readonly calls: string[] = []
  throttleNext = false

  async send(command: Command): Promise<any> {
    const kind = command.constructor.name
    const input = command.input
    this.calls.push(kind)
    if (this.throttleNext) {
      this.throttleNext = false
      throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })
    }
    switch (kind) {
      case 'PutParameterCommand': {
        const current = this.params.get(input.Name)
        if (current && !input.Overwrite) throw Object.assign(new Error('exists'), { name: 'ParameterAlreadyExists' })
        const version = (current?.version ?? 0) + 1
        this.params.set(input.Name, { value: input.Value, version, type: input.Type, keyId: input.KeyId })
        return { Version: version, Tier: 'Standard' }
      }
      case 'DeleteParameterCommand': {
        if (!this.params.delete(input.Name)) throw Object.assign(new Error('not found'), { name: 'ParameterNotFound' })
        return {}
      }
      case 'GetParametersCommand': {
        if (input.Names.length > 10) throw Object.assign(new Error('too many names'), { name: 'ValidationException' })
        const found = input.Names.filter((n: string) => this.params.has(n))
        return {
          Parameters: found.map((n: string) => ({
            Name: n,
            Value: this.params.get(n)!.value,
            Type: 'SecureString',
            Version: this.params.get(n)!.version,
          })),
          InvalidParameters: input.Names.filter((n: string) => !this.params.has(n)),
        }
      }
      case 'GetParametersByPathCommand': {
        const base = `${input.Path}/`
        const all = [...this.params.keys()]
          .filter((n) => n.startsWith(base) && !n.slice(base.length).includes('/'))
          .sort()
          .reverse()
        const start = input.NextToken ? Number(input.NextToken) : 0
        const max = Math.min(input.MaxResults ?? 10, 10)
        const page = all.slice(start, start + max)
        return {
          Parameters: page.map((n) => ({
            Name: n,
            Type: 'SecureString',
            ...(input.WithDecryption ? { Value: this.params.get(n)!.value } : {}),
          })),
          ...(start + max < all.length ? { NextToken: String(start + max) } : {}),
        }
      }
      default:
        throw new Error(`FakeSsm does not know ${kind}`)
    }
  }
}
