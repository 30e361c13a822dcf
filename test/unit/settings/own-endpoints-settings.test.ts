/** The platform listeners a deployment announces in its environment, which no tool may call. */
import { describe, expect, it } from 'vitest'
import { ownEndpointsFromEnv } from '../../../functions/settings'
import { classifyAddress } from '../../../lib/egress/address'

const covers = (own: ReturnType<typeof ownEndpointsFromEnv>, address: string, port: number) =>
  own.covers(address, classifyAddress(address)!, port)

describe('own endpoints from the environment', () => {
  it('reads the Lambda runtime API, container credential and metadata endpoints and the emulator endpoints', () => {
    const own = ownEndpointsFromEnv({
      AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
      AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://169.254.170.23/v1/credentials',
      ECS_CONTAINER_METADATA_URI_V4: 'http://169.254.170.2/v4/abc',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:4566',
      S3_ENDPOINT: 'http://[::1]:4569',
      SSM_ENDPOINT: ' ',
    })
    expect(covers(own, '127.0.0.1', 9001)).toBe(true)
    expect(covers(own, '127.0.0.9', 9001)).toBe(true)
    expect(covers(own, '169.254.170.23', 80)).toBe(true)
    expect(covers(own, '169.254.170.2', 80)).toBe(true)
    expect(covers(own, '127.0.0.1', 4566)).toBe(true)
    expect(covers(own, '127.0.0.1', 4569)).toBe(true)
    expect(covers(own, '127.0.0.1', 9002)).toBe(false)
  })

  it('reads a relative credentials URI as the container agent at 169.254.170.2', () => {
    expect(covers(ownEndpointsFromEnv({ AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '/v2/credentials/x' }), '169.254.170.2', 80)).toBe(true)
    expect(covers(ownEndpointsFromEnv({}), '169.254.170.2', 80)).toBe(false)
  })

  it('fails the cold start on an endpoint it cannot read', () => {
    expect(() => ownEndpointsFromEnv({ AWS_LAMBDA_RUNTIME_API: 'no-port-here' })).toThrow(
      /'no-port-here' is not an endpoint of this service/,
    )
  })
})
