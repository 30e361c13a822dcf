/** Lambda entry (API Gateway v2 HTTP API or Function URL): handle(createApp(createAwsDeps(...))). */
import { handle } from 'hono/aws-lambda'
import { Resource } from 'sst'
import { createAwsDeps } from './deps'
import { createApp } from './http/app'
import { envLogger, optionalEnv, requiredEnv } from './settings'

const deps = createAwsDeps({
  documentsTable: Resource.Documents.name,
  bucket: Resource.Blobs.name,
  jwtSecret: requiredEnv('AUTH_JWT_SECRET'),
  // Set only when pointing the function at emulators (integration tests); AWS uses its defaults.
  dynamoEndpoint: optionalEnv('DYNAMODB_ENDPOINT'),
  s3Endpoint: optionalEnv('S3_ENDPOINT'),
  log: envLogger(),
})

export const handler = handle(createApp(deps))
