/** Without credentials from functions/, the DynamoDB client falls back to the SDK's chain, loaded on first use. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { sdkDefaultCredentials } from '../../../lib/stores/aws/dynamo/credentials'

describe('the SDK default credential chain', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it('resolves the environment credentials through the SDK chain when none are passed in', async () => {
    // the chain's first provider reads the environment, so nothing here touches a network
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE')
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY')
    vi.stubEnv('AWS_SESSION_TOKEN', 'session')
    const credentials = await sdkDefaultCredentials()()
    expect(credentials).toMatchObject({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken: 'session',
    })
  })
})
