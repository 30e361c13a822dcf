/** Where the DynamoDB client sends its requests (checked without sending any). */
import { describe, expect, it } from 'vitest'
import { DynamoClient, defaultEndpoint } from '../../../lib/stores/aws/dynamo/client'

describe('the DynamoDB endpoint', () => {
  it('is the regional HTTPS endpoint when none is given, in the China partition for cn- regions', () => {
    expect(defaultEndpoint('eu-west-1')).toBe('https://dynamodb.eu-west-1.amazonaws.com')
    expect(defaultEndpoint('cn-north-1')).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn')
  })

  it('refuses an endpoint that is not http or https when the client is built', () => {
    expect(
      () =>
        new DynamoClient({ region: 'us-east-1', endpoint: 'file:///etc/passwd', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
    ).toThrow(/must be http\(s\)/)
  })
})
