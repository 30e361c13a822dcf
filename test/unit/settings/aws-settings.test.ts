/** The region and credentials the DynamoDB client gets from the environment Lambda sets up. */
import { describe, expect, it } from 'vitest'
import { awsCredentialsFromEnv, awsRegionFromEnv } from '../../../functions/settings'

describe('AWS settings from the environment', () => {
  it('takes the region from AWS_REGION, then AWS_DEFAULT_REGION', () => {
    expect(awsRegionFromEnv({ AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-east-2' })).toBe('eu-west-1')
    expect(awsRegionFromEnv({ AWS_DEFAULT_REGION: ' us-east-2 ' })).toBe('us-east-2')
  })

  it('refuses to start without a region, naming the variable to set', () => {
    expect(() => awsRegionFromEnv({ AWS_REGION: ' ' })).toThrow(/AWS_REGION must be set/)
  })

  it('reads the role credentials Lambda puts in the environment, with the session token', () => {
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' })).toEqual({
      accessKeyId: 'AKIA',
      secretAccessKey: 'secret',
      sessionToken: 'token',
    })
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'secret' })).toEqual({
      accessKeyId: 'AKIA',
      secretAccessKey: 'secret',
    })
  })

  it('leaves the credentials to the SDK chain when the environment holds only half a key pair or none', () => {
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKIA' })).toBeUndefined()
    expect(awsCredentialsFromEnv({})).toBeUndefined()
  })
})
