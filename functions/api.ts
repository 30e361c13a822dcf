/** Lambda entry (API Gateway v2 HTTP API or Function URL): handle(createApp(createAwsDeps(...))). */
import { handle } from 'hono/aws-lambda'
import { Resource } from 'sst/resource' // not 'sst': its index adds a log polyfill and loads node:util
import { createAwsDeps } from './deps'
import { createApp } from './http/app'
import { authSettingsFromEnv, sandboxSettingsFromEnv, envLogger, optionalEnv, ownEndpointsFromEnv, requiredEnv, surfaceSettingsFromEnv } from './settings'
import { deploymentAllowList } from '../lib/egress/allow-list'
import { CachedSecretStore } from '../lib/secrets/cached'
import { createSsmSecretStore } from '../lib/stores/aws/secret-store'

// SecureString parameters under /server-tools/<tenant>/<name>; cached per container for a minute.
// SSM_ENDPOINT exists only so tests can point the client at loopback; AWS uses its default.
const ssm = createSsmSecretStore({ region: optionalEnv('AWS_REGION'), endpoint: optionalEnv('SSM_ENDPOINT') })

const deps = createAwsDeps({
  documentsTable: Resource.Documents.name,
  toolUsageTable: Resource.ToolUsage.name,
  processesTable: Resource.Processes.name,
  observedLimitsTable: Resource.ObservedLimits.name,
  surface: surfaceSettingsFromEnv(),
  bucket: Resource.Blobs.name,
  jwtSecret: requiredEnv('AUTH_JWT_SECRET'),
  auth: authSettingsFromEnv(),
  // Set only when pointing the function at emulators (integration tests); AWS uses its defaults.
  dynamoEndpoint: optionalEnv('DYNAMODB_ENDPOINT'),
  s3Endpoint: optionalEnv('S3_ENDPOINT'),
  secrets: new CachedSecretStore(ssm.store, { ttlMs: 60_000 }),
  egressAllow: deploymentAllowList(process.env),
  // the runtime API and credential endpoints: never reachable by a tool, whatever the allow-list
  ownEndpoints: ownEndpointsFromEnv(process.env),
  // one request per container at a time: the worker watchdog would protect nobody else (README)
  sandbox: sandboxSettingsFromEnv('inline'),
  log: envLogger(),
})

const serve = handle(createApp(deps))

/**
 * Usage counts are buffered per container; they are written before the invocation returns, so
 * nothing is left in memory when Lambda freezes (or discards) the container. The flush never
 * throws: a failed counter write is retried, then logged, and the response stands.
 */
export const handler: typeof serve = async (event, context) => {
  try {
    return await serve(event, context)
  } finally {
    await deps.usage.flush()
  }
}
