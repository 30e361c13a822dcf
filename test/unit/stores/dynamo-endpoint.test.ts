/**
 * Where the DynamoDB client sends its requests, held to the pinned SDK's own endpoint provider
 * (@aws-sdk/client-dynamodb's rules, with @aws-sdk/util-endpoints' partitions) region by region,
 * FIPS and dual-stack, and to the configured-endpoint settings the SDK reads. Nothing is sent.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { partition as sdkPartition } from '@aws-sdk/util-endpoints'
import { describe, expect, it } from 'vitest'
import { storeSettingsFromEnv } from '../../../functions/settings'
import { DynamoClient } from '../../../lib/stores/aws/dynamo/client'
import { dynamoEndpoint, partitionOf } from '../../../lib/stores/aws/dynamo/endpoint'

const sdk = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })
type Params = { Region: string; UseFIPS?: boolean; UseDualStack?: boolean; Endpoint?: string }
const sdkEndpoint = (p: Params) => (sdk.config.endpointProvider as (p: Params) => { url: URL })(p).url

/** What a resolver says: the URL (without the trailing slash URL adds) or the refusal. */
function outcome(resolve: () => string | URL): string {
  try {
    return String(resolve()).replace(/\/$/, '')
  } catch (e) {
    return `refused: ${(e as Error).message}`
  }
}

// every region the SDK's partition file names, and invented ones each partition's pattern takes
const REGIONS = [
  ...['af-south-1', 'ap-east-2', 'ap-northeast-3', 'ap-south-2', 'ap-southeast-7', 'ca-central-1', 'ca-west-1', 'eu-central-2'],
  ...['eu-north-1', 'eu-south-2', 'eu-west-3', 'il-central-1', 'me-central-1', 'me-west-1', 'mx-central-1', 'sa-east-1', 'sa-west-1'],
  ...['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'aws-global', 'us-north-9', 'eu-far-7'],
  ...['cn-north-1', 'cn-northwest-1', 'aws-cn-global', 'cn-south-4'],
  ...['eusc-de-east-1', 'eusc-de-west-2'],
  ...['us-iso-east-1', 'us-iso-west-1', 'aws-iso-global', 'us-iso-north-3'],
  ...['us-isob-east-1', 'us-isob-west-1', 'aws-iso-b-global', 'us-isob-south-2'],
  ...['eu-isoe-west-1', 'aws-iso-e-global', 'eu-isoe-north-2'],
  ...['us-isof-south-1', 'us-isof-east-1', 'aws-iso-f-global', 'us-isof-west-5'],
  ...['us-gov-west-1', 'us-gov-east-1', 'aws-us-gov-global', 'us-gov-north-3'],
  // what no pattern takes: the SDK falls back to the aws partition
  ...['local', 'eusc-fr-east-1', 'moon-base-1', 'us-east-1a'],
]

describe('the DynamoDB endpoint against the SDK endpoint provider', () => {
  it.each(REGIONS)('is the SDK endpoint for %s, plain, FIPS, dual-stack and both', (region) => {
    for (const useFips of [false, true])
      for (const useDualStack of [false, true]) {
        const mine = outcome(() => dynamoEndpoint({ region, useFips, useDualStack }))
        const theirs = outcome(() => sdkEndpoint({ Region: region, UseFIPS: useFips, UseDualStack: useDualStack }))
        expect(mine, `${region} fips=${useFips} dualstack=${useDualStack}`).toBe(theirs)
      }
  })

  it.each(REGIONS.filter((r) => r !== 'local'))('puts %s in the partition the SDK does', (region) => {
    const p = sdkPartition(region)
    const mine = partitionOf(region)
    expect([mine.name, mine.dnsSuffix, mine.dualStackDnsSuffix]).toEqual([p.name, p.dnsSuffix, p.dualStackDnsSuffix])
  })

  it('takes a configured endpoint as it is, and refuses it with FIPS or dual-stack, as the SDK does', () => {
    for (const endpoint of ['http://127.0.0.1:8000', 'https://proxy.internal:4443/ddb'])
      for (const useFips of [false, true])
        for (const useDualStack of [false, true])
          expect(outcome(() => dynamoEndpoint({ region: 'eu-west-1', endpoint, useFips, useDualStack }))).toBe(
            outcome(() => sdkEndpoint({ Region: 'eu-west-1', Endpoint: endpoint, UseFIPS: useFips, UseDualStack: useDualStack })),
          )
  })

  it('refuses an endpoint that is not http or https when the client is built', () => {
    expect(
      () =>
        new DynamoClient({ region: 'us-east-1', endpoint: 'file:///etc/passwd', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }),
    ).toThrow(/must be http\(s\)/)
  })
})

describe('store settings from the environment', () => {
  it('prefers DYNAMODB_ENDPOINT, then AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL (and the same for S3)', () => {
    const all = {
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:2',
      S3_ENDPOINT: 'http://127.0.0.1:4',
      AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:5',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:3',
    }
    expect(storeSettingsFromEnv(all)).toEqual({ dynamoEndpoint: 'http://127.0.0.1:1', s3Endpoint: 'http://127.0.0.1:4' })
    expect(storeSettingsFromEnv({ ...all, DYNAMODB_ENDPOINT: '', S3_ENDPOINT: ' ' })).toEqual({
      dynamoEndpoint: 'http://127.0.0.1:2',
      s3Endpoint: 'http://127.0.0.1:5',
    })
    expect(storeSettingsFromEnv({ AWS_ENDPOINT_URL: 'http://127.0.0.1:3' })).toEqual({
      dynamoEndpoint: 'http://127.0.0.1:3',
      s3Endpoint: 'http://127.0.0.1:3',
    })
    expect(storeSettingsFromEnv({})).toEqual({})
  })

  it('reads AWS_USE_FIPS_ENDPOINT and AWS_USE_DUALSTACK_ENDPOINT as the SDK does, and refuses other words', () => {
    expect(storeSettingsFromEnv({ AWS_USE_FIPS_ENDPOINT: 'true', AWS_USE_DUALSTACK_ENDPOINT: 'FALSE' })).toEqual({
      useFips: true,
      useDualStack: false,
    })
    expect(() => storeSettingsFromEnv({ AWS_USE_FIPS_ENDPOINT: 'yes' })).toThrow(/AWS_USE_FIPS_ENDPOINT must be true or false/)
    expect(() => storeSettingsFromEnv({ DYNAMODB_ENDPOINT: 'ftp://x' })).toThrow(/DYNAMODB_ENDPOINT must be an http\(s\) URL/)
  })

  it('builds a client on the FIPS dual-stack endpoint of a sovereign-cloud region', () => {
    const client = new DynamoClient({
      region: 'eusc-de-east-1',
      useFips: true,
      useDualStack: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    })
    expect((client as unknown as { url: URL }).url.href).toBe('https://dynamodb-fips.eusc-de-east-1.api.amazonwebservices.eu/')
  })
})
