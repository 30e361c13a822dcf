/**
 * Where DynamoDB answers for a region: the SDK's endpoint rules for the service, without the
 * rules engine and its ~20 KiB partition file. Held region by region, FIPS and dual-stack, to
 * `@aws-sdk/client-dynamodb`'s own endpoint provider by test/unit/stores/dynamo-endpoint.test.ts.
 * Account-id endpoints (`<account>.ddb.<region>…`, used by the SDK only when the credentials
 * carry an account id) are not derived: the regional endpoint serves every account.
 */

interface Partition {
  name: string
  regionRegex: RegExp
  /** Regions named in the SDK's partition file that its pattern does not match (`aws-global`, …). */
  regions: readonly string[]
  dnsSuffix: string
  dualStackDnsSuffix: string
}

// The SDK's partitions.json (via @aws-sdk/util-endpoints), in its order: the first whose name
// list, then the first whose pattern, holds the region decides; anything else is `aws`.
const PARTITIONS: readonly Partition[] = [
  {
    name: 'aws',
    regionRegex: /^(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+$/,
    regions: ['aws-global'],
    dnsSuffix: 'amazonaws.com',
    dualStackDnsSuffix: 'api.aws',
  },
  {
    name: 'aws-cn',
    regionRegex: /^cn-\w+-\d+$/,
    regions: ['aws-cn-global'],
    dnsSuffix: 'amazonaws.com.cn',
    dualStackDnsSuffix: 'api.amazonwebservices.com.cn',
  },
  {
    name: 'aws-eusc',
    regionRegex: /^eusc-(de)-\w+-\d+$/,
    regions: [],
    dnsSuffix: 'amazonaws.eu',
    dualStackDnsSuffix: 'api.amazonwebservices.eu',
  },
  {
    name: 'aws-iso',
    regionRegex: /^us-iso-\w+-\d+$/,
    regions: ['aws-iso-global'],
    dnsSuffix: 'c2s.ic.gov',
    dualStackDnsSuffix: 'api.aws.ic.gov',
  },
  {
    name: 'aws-iso-b',
    regionRegex: /^us-isob-\w+-\d+$/,
    regions: ['aws-iso-b-global'],
    dnsSuffix: 'sc2s.sgov.gov',
    dualStackDnsSuffix: 'api.aws.scloud',
  },
  {
    name: 'aws-iso-e',
    regionRegex: /^eu-isoe-\w+-\d+$/,
    regions: ['aws-iso-e-global'],
    dnsSuffix: 'cloud.adc-e.uk',
    dualStackDnsSuffix: 'api.cloud-aws.adc-e.uk',
  },
  {
    name: 'aws-iso-f',
    regionRegex: /^us-isof-\w+-\d+$/,
    regions: ['aws-iso-f-global'],
    dnsSuffix: 'csp.hci.ic.gov',
    dualStackDnsSuffix: 'api.aws.hci.ic.gov',
  },
  {
    name: 'aws-us-gov',
    regionRegex: /^us-gov-\w+-\d+$/,
    regions: ['aws-us-gov-global'],
    dnsSuffix: 'amazonaws.com',
    dualStackDnsSuffix: 'api.aws',
  },
]

export function partitionOf(region: string): Partition {
  return PARTITIONS.find((p) => p.regions.includes(region)) ?? PARTITIONS.find((p) => p.regionRegex.test(region)) ?? PARTITIONS[0]
}

export interface EndpointSettings {
  region: string
  /** A configured endpoint (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL`, an emulator's URL). */
  endpoint?: string
  /** `AWS_USE_FIPS_ENDPOINT=true` */
  useFips?: boolean
  /** `AWS_USE_DUALSTACK_ENDPOINT=true` */
  useDualStack?: boolean
}

/** The URL the SDK would send DynamoDB requests to; throws where the SDK refuses the settings. */
export function dynamoEndpoint(s: EndpointSettings): string {
  if (s.endpoint !== undefined) {
    if (s.useFips) throw new TypeError('Invalid Configuration: FIPS and custom endpoint are not supported')
    if (s.useDualStack) throw new TypeError('Invalid Configuration: Dualstack and custom endpoint are not supported')
    return s.endpoint
  }
  if (!s.region) throw new TypeError('Invalid Configuration: Missing Region')
  if (s.region === 'local') {
    if (s.useFips) throw new TypeError('Invalid Configuration: FIPS and local endpoint are not supported')
    if (s.useDualStack) throw new TypeError('Invalid Configuration: Dualstack and local endpoint are not supported')
    return 'http://localhost:8000'
  }
  const p = partitionOf(s.region)
  // every partition supports both today; the rules still say which host each combination takes
  if (s.useFips && s.useDualStack) return `https://dynamodb-fips.${s.region}.${p.dualStackDnsSuffix}`
  // GovCloud's regional endpoint is its FIPS endpoint
  if (s.useFips)
    return p.name === 'aws-us-gov' ? `https://dynamodb.${s.region}.${p.dnsSuffix}` : `https://dynamodb-fips.${s.region}.${p.dnsSuffix}`
  if (s.useDualStack) return `https://dynamodb.${s.region}.${p.dualStackDnsSuffix}`
  return `https://dynamodb.${s.region}.${p.dnsSuffix}`
}

/** `local` signs for us-east-1, as the SDK's rules say; every other region signs for itself. */
export const signingRegion = (region: string) => (region === 'local' ? 'us-east-1' : region)
