/**
 * `npm start`: the service on a laptop. Embedded dynalite (data on disk) and s3rver under
 * DATA_DIR, the same AWS adapters as production, tables and bucket created when missing.
 */

import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { serve } from '@hono/node-server'
import { deploymentAllowList } from '../lib/egress/allow-list'
import { LocalSecretStore } from '../lib/secrets/local'
import { auditTableSpec } from '../lib/stores/aws/audit-store'
import { destroyAwsClients } from '../lib/stores/aws/clients'
import { observedLimitsTableSpec } from '../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../lib/stores/aws/provision'
import { toolUsageTableSpec } from '../lib/stores/aws/tool-usage-store'
import { createAwsDeps } from './deps'
import { startEmulators } from './emulators'
import { createApp } from './http/app'
import { ALL_SCOPES, issueToken } from './http/auth'
import {
  auditRetentionDaysFromEnv,
  authSettingsFromEnv,
  envLogger,
  observabilityFromEnv,
  ownEndpointsFromEnv,
  sandboxSettingsFromEnv,
  surfaceSettingsFromEnv,
} from './settings'

const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } // what s3rver accepts; dynalite accepts any
const DOCUMENTS_TABLE = 'server-tools-documents'
const TOOL_USAGE_TABLE = 'server-tools-tool-usage'
const PROCESSES_TABLE = 'server-tools-processes'
const OBSERVED_LIMITS_TABLE = 'server-tools-observed-limits'
const AUDIT_TABLE = 'server-tools-audit'
const BUCKET = 'server-tools-blobs'

async function main() {
  const dataDir = resolve(process.env.DATA_DIR ?? '.data')
  const port = Number(process.env.PORT ?? 8787)
  const host = process.env.HOST ?? '127.0.0.1'
  mkdirSync(join(dataDir, 's3'), { recursive: true })
  mkdirSync(join(dataDir, 'dynamodb'), { recursive: true })

  const jwtSecret = process.env.AUTH_JWT_SECRET || localSecret(join(dataDir, 'jwt-secret'))
  const auth = authSettingsFromEnv()
  const emulators = await startEmulators({ s3Directory: join(dataDir, 's3'), dynamoPath: join(dataDir, 'dynamodb') })
  // the emulators (added by createAwsDeps) and this server's own port: never reachable by a tool
  const ownEndpoints = ownEndpointsFromEnv(process.env)
  // traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations/observability.md); EMF lines only with METRICS=emf
  const observability = observabilityFromEnv({ emf: false })
  const log = envLogger(observability.tracer, [jwtSecret])
  observability.useLog(log)
  const deps = createAwsDeps({
    documentsTable: DOCUMENTS_TABLE,
    toolUsageTable: TOOL_USAGE_TABLE,
    processesTable: PROCESSES_TABLE,
    observedLimitsTable: OBSERVED_LIMITS_TABLE,
    surface: surfaceSettingsFromEnv(),
    bucket: BUCKET,
    auditTable: AUDIT_TABLE,
    auditRetentionDays: auditRetentionDaysFromEnv(),
    observability,
    jwtSecret,
    auth,
    region: 'us-east-1',
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: LOCAL_CREDENTIALS,
    // AES-256-GCM file with a generated key beside it: secrets survive restarts, never in plain text
    secrets: new LocalSecretStore({ dir: join(dataDir, 'secrets') }),
    egressAllow: deploymentAllowList(process.env),
    ownEndpoints,
    // a long-running server: a stalled script must not hold other requests (docs/operations/security.md)
    sandbox: sandboxSettingsFromEnv('worker'),
    log,
  })
  await Promise.all([
    ensureTable(deps.clients.dynamo, documentsTableSpec(DOCUMENTS_TABLE)),
    ensureTable(deps.clients.dynamo, toolUsageTableSpec(TOOL_USAGE_TABLE)),
    ensureTable(deps.clients.dynamo, processesTableSpec(PROCESSES_TABLE)),
    ensureTable(deps.clients.dynamo, observedLimitsTableSpec(OBSERVED_LIMITS_TABLE)),
    ensureTable(deps.clients.dynamo, auditTableSpec(AUDIT_TABLE)),
    ensureBucket(deps.clients.s3, BUCKET),
  ])

  const app = createApp(deps)
  const server = serve({ fetch: app.fetch, port, hostname: host })
  await new Promise<void>((res) => server.once('listening', () => res()))
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
  process.stdout.write(
    [
      '',
      `Server Tools is listening on ${url}  (data in ${dataDir})`,
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
    await deps.audit.recorder.flush()
    await observability.flush()
    destroyAwsClients(deps.clients)
    await emulators.close()
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
