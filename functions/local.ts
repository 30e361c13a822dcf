/**
 * `npm start`: the service on a laptop, or as a long-lived server. The stores are embedded
 * dynalite (data on disk) and s3rver under DATA_DIR unless told otherwise: `DYNAMODB_ENDPOINT` /
 * `S3_ENDPOINT` (or `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`) name
 * stores that run elsewhere (DynamoDB Local, a proxy, a container), and `STORES=aws` means real
 * AWS (AWS_REGION, credentials from the environment or the SDK's default chain). The same AWS
 * adapters as production either way; tables and bucket are created when missing.
 */

import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { deploymentAllowList } from '../lib/egress/allow-list'
import type { Logger } from '../lib/runtime/logger'
import { LocalSecretStore } from '../lib/secrets/local'
import { auditTableSpec } from '../lib/stores/aws/audit-store'
import { destroyAwsClients } from '../lib/stores/aws/clients'
import { observedLimitsTableSpec } from '../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../lib/stores/aws/provision'
import { quotaCountersTableSpec } from '../lib/stores/aws/quota-store'
import { toolUsageTableSpec } from '../lib/stores/aws/tool-usage-store'
import { createAwsDeps } from './deps'
import { startEmulatorThread } from './emulator-thread'
import { createApp } from './http/app'
import { ALL_SCOPES, issueToken } from './http/auth'
import { serveNode } from './node-server'
import {
  auditRefusalsFromEnv,
  auditRetentionDaysFromEnv,
  authSettingsFromEnv,
  awsCredentialsFromEnv,
  awsRegionFromEnv,
  envLogger,
  fairShareFromEnv,
  observabilityFromEnv,
  ownEndpointsFromEnv,
  STORE_CALL_DEADLINE_MS,
  sandboxSettingsFromEnv,
  storeSettingsFromEnv,
  surfaceSettingsFromEnv,
} from './settings'

const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } // what s3rver accepts; dynalite accepts any
// overridable, for a team running the server against its own tables
const DOCUMENTS_TABLE = process.env.DOCUMENTS_TABLE || 'server-tools-documents'
const TOOL_USAGE_TABLE = process.env.TOOL_USAGE_TABLE || 'server-tools-tool-usage'
const PROCESSES_TABLE = process.env.PROCESSES_TABLE || 'server-tools-processes'
const OBSERVED_LIMITS_TABLE = process.env.OBSERVED_LIMITS_TABLE || 'server-tools-observed-limits'
const QUOTAS_TABLE = process.env.QUOTAS_TABLE || 'server-tools-quota-counters'
const AUDIT_TABLE = process.env.AUDIT_TABLE || 'server-tools-audit'
const BUCKET = process.env.BLOBS_BUCKET || 'server-tools-blobs'

/**
 * Which stores to use, and the emulators to start for those not given — on a thread of their own
 * (functions/emulator-thread.ts), so that no store request is parsed or answered on the event loop
 * that serves tenants.
 */
async function storesFor(dataDir: string, log: Logger) {
  const settings = storeSettingsFromEnv()
  const stores = process.env.STORES?.trim() || 'local'
  if (stores !== 'local' && stores !== 'aws') throw new Error(`STORES must be local or aws, got '${stores}'`)
  const aws = stores === 'aws'
  const needDynamo = !aws && !settings.dynamoEndpoint
  const needS3 = !aws && !settings.s3Endpoint
  if (needDynamo) mkdirSync(join(dataDir, 'dynamodb'), { recursive: true })
  if (needS3) mkdirSync(join(dataDir, 's3'), { recursive: true })
  // the embedded dynalite serves this process alone: it keeps the tenant stamps of those tables in
  // its memory (soleDocumentsWriter), so a write from any other process would go unseen
  const dynamoKey = needDynamo ? { accessKeyId: `local-${randomBytes(12).toString('hex')}`, secretAccessKey: 'embedded' } : undefined
  const emulators =
    needDynamo || needS3
      ? await startEmulatorThread(
          {
            s3Directory: join(dataDir, 's3'),
            dynamoPath: join(dataDir, 'dynamodb'),
            only: { dynamo: needDynamo, s3: needS3 },
            dynamoAccessKeyId: dynamoKey?.accessKeyId,
          },
          {
            // store calls are refused from now on (store errors, never a hung request); say why once
            onCrash: (e) => log.log('error', 'embedded_stores_stopped', { reason: e.message, action: 'restart the service' }),
          },
        )
      : undefined
  const fromEnv = awsCredentialsFromEnv()
  return {
    dynamoEndpoint: settings.dynamoEndpoint ?? emulators?.dynamoEndpoint,
    s3Endpoint: settings.s3Endpoint ?? emulators?.s3Endpoint,
    useFips: settings.useFips,
    useDualStack: settings.useDualStack,
    // real AWS: the region the shell names; emulators and stores elsewhere: any region signs
    region: aws ? awsRegionFromEnv() : process.env.AWS_REGION?.trim() || 'us-east-1',
    // the environment's keys, else the emulators' for stores beside us, else (AWS) the SDK's chain
    credentials: fromEnv ?? (aws ? undefined : LOCAL_CREDENTIALS),
    dynamoCredentials: dynamoKey,
    describe: aws ? 'AWS' : emulators ? 'embedded emulators' : 'the configured endpoints',
    soleDocumentsWriter: needDynamo,
    // no IAM on the embedded store, and its work runs on this process's cores: audit entries in batches
    auditBatchWrites: needDynamo,
    close: async () => emulators?.close(),
  }
}

async function main() {
  const dataDir = resolve(process.env.DATA_DIR ?? '.data')
  const port = Number(process.env.PORT ?? 8787)
  const host = process.env.HOST ?? '127.0.0.1'
  mkdirSync(dataDir, { recursive: true })

  const jwtSecret = process.env.AUTH_JWT_SECRET || localSecret(join(dataDir, 'jwt-secret'))
  const auth = authSettingsFromEnv()
  // traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations/observability.md); EMF lines only with METRICS=emf
  const observability = observabilityFromEnv({ emf: false })
  const log = envLogger(observability.tracer, [jwtSecret])
  observability.useLog(log)
  const stores = await storesFor(dataDir, log)
  // the emulators (added by createAwsDeps) and this server's own port: never reachable by a tool
  const ownEndpoints = ownEndpointsFromEnv(process.env)
  const deps = createAwsDeps({
    documentsTable: DOCUMENTS_TABLE,
    toolUsageTable: TOOL_USAGE_TABLE,
    processesTable: PROCESSES_TABLE,
    observedLimitsTable: OBSERVED_LIMITS_TABLE,
    quotasTable: QUOTAS_TABLE,
    surface: surfaceSettingsFromEnv(),
    bucket: BUCKET,
    auditTable: AUDIT_TABLE,
    auditRetentionDays: auditRetentionDaysFromEnv(),
    auditRefusals: auditRefusalsFromEnv(),
    observability,
    jwtSecret,
    auth,
    region: stores.region,
    dynamoEndpoint: stores.dynamoEndpoint,
    s3Endpoint: stores.s3Endpoint,
    useFips: stores.useFips,
    useDualStack: stores.useDualStack,
    credentials: stores.credentials,
    dynamoCredentials: stores.dynamoCredentials,
    storeCallDeadlineMs: STORE_CALL_DEADLINE_MS,
    soleDocumentsWriter: stores.soleDocumentsWriter,
    auditBatchWrites: stores.auditBatchWrites,
    // AES-256-GCM file with a generated key beside it: secrets survive restarts, never in plain text
    secrets: new LocalSecretStore({ dir: join(dataDir, 'secrets') }),
    egressAllow: deploymentAllowList(process.env),
    ownEndpoints,
    // a long-running server: a stalled script must not hold other requests (docs/operations/security.md)
    sandbox: sandboxSettingsFromEnv('worker'),
    fairShare: fairShareFromEnv(),
    log,
  })
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(DOCUMENTS_TABLE)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(TOOL_USAGE_TABLE)),
    ensureTable(deps.clients.dynamo, processesTableSpec(PROCESSES_TABLE)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(OBSERVED_LIMITS_TABLE)),
    ensureTable(deps.clients.dynamo, auditTableSpec(AUDIT_TABLE)),
    ensureTable(deps.clients.dynamo, quotaCountersTableSpec(QUOTAS_TABLE)),
    ensureBucket(deps.clients.s3, BUCKET),
  ])

  const app = createApp(deps)
  const server = await serveNode(app.fetch, { port, hostname: host })
  // every scope, tenant:admin included; 30 days unless the deployment's cap is shorter
  const lifetime = Math.min(30 * 24 * 3600, auth.maxTokenLifetimeSeconds ?? Infinity)
  const token = await issueToken(
    jwtSecret,
    { tenant: 'demo', sub: 'local-admin', scope: ALL_SCOPES.join(' '), expiresInSeconds: lifetime },
    Math.floor(Date.now() / 1000),
  )
  const bound = server.address()
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${typeof bound === 'object' && bound ? bound.port : port}`
  ownEndpoints.add(url)
  // The auth metadata's base URL: PUBLIC_BASE_URL, else the address this server listens on — never
  // the request's Host header, which any client sets (it would be reflected into WWW-Authenticate
  // and the RFC 9728 document). Set before the first request can arrive (a later macrotask).
  deps.auth.publicBaseUrl ??= url
  process.stdout.write(
    [
      '',
      `Server Tools is listening on ${url}  (stores: ${stores.describe}; local data in ${dataDir})`,
      '',
      `  export ST_URL=${url}/brain/demo`,
      `  export ST_TOKEN=${token}`,
      '',
      '  curl -s -H "Authorization: Bearer $ST_TOKEN" $ST_URL/projects/p1/server-tools',
      '',
      'Ctrl-C stops it; the data stays for the next start.',
      '',
    ].join('\n'),
  )

  let stopping = false
  const stop = async () => {
    if (stopping) return
    stopping = true
    process.stdout.write('\nstopping…\n')
    server.close()
    ;(server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.()
    await deps.usage.flush() // the last second of usage counts
    await deps.audit.recorder.flush({ endWindow: true }) // with the refusals counted so far
    await observability.flush()
    destroyAwsClients(deps.clients)
    await stores.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

/** A random secret kept in DATA_DIR, so tokens stay valid across restarts. */
function localSecret(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const secret = randomBytes(32).toString('base64url')
  writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  return secret
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
