/**
 * Lambda entry (Function URL, invoke mode RESPONSE_STREAM; payload format 2.0): createApp(createAwsDeps(...))
 * behind the response-streaming adapter.
 */
import { deploymentAllowList } from '../lib/egress/allow-list'
import { CachedSecretStore } from '../lib/secrets/cached'
import { createSsmSecretStore } from '../lib/stores/aws/secret-store'
import { createAwsDeps } from './deps'
import { createApp } from './http/app'
import { lambdaRuntime, streamingLambdaHandler } from './http/lambda-streaming'
import { installLightFetch } from './http/light-fetch'
import {
  auditSettingsFromEnv,
  authSettingsFromEnv,
  awsCredentialsFromEnv,
  awsRegionFromEnv,
  envLogger,
  observabilityFromEnv,
  optionalEnv,
  ownEndpointsFromEnv,
  requiredEnv,
  STORE_CALL_DEADLINE_MS,
  sandboxSettingsFromEnv,
  storeSettingsFromEnv,
  surfaceSettingsFromEnv,
} from './settings'
// sst/resource's links without its ES module imports of Node built-ins (nor 'sst', whose index loads node:util)
import { Resource } from './sst-resource'

// Headers and Response that load undici only for what needs it (a stream body, fetch): Node's
// would load it with the first request's answer, the largest step of a cold start
installLightFetch()

// SecureString parameters under /server-tools/<tenant>/<name>; cached per container for a minute.
// SSM_ENDPOINT exists only so tests can point the client at loopback; AWS uses its default.
const ssm = createSsmSecretStore({ region: optionalEnv('AWS_REGION'), endpoint: optionalEnv('SSM_ENDPOINT') })

// Tracing off unless OTEL_* (or the ADOT layer) asks; metrics as CloudWatch EMF lines on stdout.
const observability = observabilityFromEnv({ emf: true })
const jwtSecret = requiredEnv('AUTH_JWT_SECRET')
const log = envLogger(observability.tracer, [jwtSecret])
observability.useLog(log)
const audit = auditSettingsFromEnv(log)

const deps = createAwsDeps({
  documentsTable: Resource.Documents.name,
  toolUsageTable: Resource.ToolUsage.name,
  processesTable: Resource.Processes.name,
  observedLimitsTable: Resource.ObservedLimits.name,
  quotasTable: Resource.QuotaCounters.name,
  surface: surfaceSettingsFromEnv(),
  bucket: Resource.Blobs.name,
  // not linked (a link grants every DynamoDB action): sst.config.ts passes the name and grants PutItem and Query only
  auditTable: audit.table,
  auditRetentionDays: audit.retentionDays,
  auditRefusals: audit.refusals,
  // written after the response, by the handler below
  auditFlushDelayMs: 0,
  observability,
  jwtSecret,
  auth: authSettingsFromEnv(),
  region: awsRegionFromEnv(),
  // the role's credentials, as Lambda puts them in the environment
  credentials: awsCredentialsFromEnv(),
  // endpoints set only for emulators (integration tests); FIPS / dual-stack as the SDK reads them
  ...storeSettingsFromEnv(),
  storeCallDeadlineMs: STORE_CALL_DEADLINE_MS,
  secrets: new CachedSecretStore(ssm.store, { ttlMs: 60_000 }),
  egressAllow: deploymentAllowList(process.env),
  // the runtime API and credential endpoints: never reachable by a tool, whatever the allow-list
  ownEndpoints: ownEndpointsFromEnv(process.env),
  // one request per container at a time: the worker watchdog would protect nobody else (docs/operations/security.md)
  sandbox: sandboxSettingsFromEnv('inline'),
  // one request per container at a time: no other tenant to share the thread with
  fairShare: false,
  log,
})

/**
 * Usage counts, audit entries, metrics (EMF lines) and buffered spans are kept per container and
 * written after the response has gone (the stream has ended) but before the invocation ends, so
 * nothing is left in memory when Lambda freezes (or discards) the container, and no caller waits
 * for the write. The flushes never throw: a failed write is retried, then logged (and, for the
 * audit log, counted).
 */
export const handler = streamingLambdaHandler(createApp(deps), lambdaRuntime(), () =>
  Promise.all([deps.usage.flush(), deps.audit.recorder.flush()]).then(() => observability.flush()),
)
