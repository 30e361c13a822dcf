/** The deployment settings read from the environment, in one place (edge only). */

import { REFUSAL_DIGEST_LIMITS, type RefusalDigestLimits } from '../lib/audit/refusal-digest'
import { OwnEndpoints } from '../lib/egress/own-endpoints'
import type { Logger, LogLevel } from '../lib/runtime/logger'
import { noopTracer, type Tracer } from '../lib/runtime/tracer'
import type { SandboxSettings } from '../lib/sandbox'
import { SANDBOX_ISOLATIONS, type SandboxIsolation } from '../lib/sandbox/isolation'
import type { AwsCredentials } from '../lib/stores/aws/dynamo/sigv4'
import type { SurfaceSettings } from '../lib/surface/surface'
import {
  ASYMMETRIC_ALGORITHMS,
  type AsymmetricAlgorithm,
  type AuthSettings,
  DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
  type IdentityProviderSettings,
} from './http/token-verifier'
import { createObservability, type Observability, serviceLogger, tracingModeFromEnv } from './observability'

/**
 * JSON lines on stdout at LOG_LEVEL (default info), with the request's context and the active
 * trace and span ids; `secrets` (the deployment's own, such as the JWT secret) never appear in a
 * line in any encoding, nor do bearer tokens (functions/observability serviceLogger).
 */
export function envLogger(tracer: Tracer = noopTracer, secrets: string[] = []): Logger {
  const level = (process.env.LOG_LEVEL ?? 'info') as LogLevel
  return serviceLogger({
    write: (line) => process.stdout.write(`${line}\n`),
    level: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
    tracer,
    secrets,
  })
}

/**
 * Tracing from the standard OTEL_* variables (functions/observability tracingModeFromEnv), metrics
 * as EMF lines on stdout when `emf` (Lambda; METRICS=off turns them off, METRICS=emf on elsewhere).
 * The OTel modules are loaded by the first request that needs them (functions/lazy/otel-*.ts).
 */
export function observabilityFromEnv(opts: { emf: boolean }, env: Record<string, string | undefined> = process.env): Observability {
  const metrics = env.METRICS?.trim().toLowerCase()
  const emf = metrics === 'emf' || (opts.emf && metrics !== 'off')
  return createObservability({
    mode: tracingModeFromEnv(env),
    modules: { api: () => import('./lazy/otel-api'), sdk: () => import('./lazy/otel-sdk') },
    ...(emf ? { emf: (line: string) => process.stdout.write(`${line}\n`) } : {}),
    sdkOptions: { serviceName: env.OTEL_SERVICE_NAME?.trim() || 'server-tools' },
  })
}

/**
 * AUDIT_TABLE (the audit log's DynamoDB table; sst.config.ts sets it) and AUDIT_RETENTION_DAYS
 * (1–3650, default 365: each entry's TTL). Without a table the entries stay in memory, and the
 * cold start says so at warn level.
 */
export function auditSettingsFromEnv(log: Logger): { table?: string; retentionDays?: number; refusals?: RefusalDigestLimits } {
  const table = optionalEnv('AUDIT_TABLE')
  if (!table) log.log('warn', 'audit.no_table', { message: 'AUDIT_TABLE is not set: audit entries are kept in memory only' })
  return { table, retentionDays: auditRetentionDaysFromEnv(), refusals: auditRefusalsFromEnv() }
}

export const auditRetentionDaysFromEnv = () => wholeEnv('AUDIT_RETENTION_DAYS', 1, 3650)

/** AUDIT_REFUSAL_WINDOW_SECONDS (1–3600, default 60): the window over which refusals' audit entries are bounded (lib/audit/refusal-digest.ts). */
export function auditRefusalsFromEnv(): RefusalDigestLimits | undefined {
  const seconds = wholeEnv('AUDIT_REFUSAL_WINDOW_SECONDS', 1, 3600)
  return seconds === undefined ? undefined : { ...REFUSAL_DIGEST_LIMITS, windowMs: seconds * 1000 }
}

export function requiredEnv(name: string): string {
  const v = process.env[name]
  if (!v) throw new Error(`environment variable ${name} must be set`)
  return v
}

export const optionalEnv = (name: string) => process.env[name] || undefined

/**
 * SANDBOX_MEMORY_MB: the QuickJS memory limit per run (default 32). SANDBOX_ISOLATION: `worker` or
 * `inline` (the entry point's default otherwise). Sharing between tenants (docs/operations/security.md, "The script sandbox"):
 * SANDBOX_TENANT_CONCURRENCY (scripts one tenant runs at once, default half the workers),
 * SANDBOX_TENANT_QUEUE (scripts one tenant may have waiting, default 8), SANDBOX_QUEUE (waiting
 * across tenants, default 64). A bad value fails the cold start.
 */
export function sandboxSettingsFromEnv(defaultIsolation: SandboxIsolation): SandboxSettings & { isolation: SandboxIsolation } {
  const isolation = (optionalEnv('SANDBOX_ISOLATION') ?? defaultIsolation) as SandboxIsolation
  if (!SANDBOX_ISOLATIONS.includes(isolation))
    throw new Error(`SANDBOX_ISOLATION must be one of ${SANDBOX_ISOLATIONS.join(', ')}, got '${isolation}'`)
  const mb = wholeEnv('SANDBOX_MEMORY_MB', 4, 1024)
  const tenantConcurrency = wholeEnv('SANDBOX_TENANT_CONCURRENCY', 1, 64)
  const tenantQueue = wholeEnv('SANDBOX_TENANT_QUEUE', 1, 1000)
  const queue = wholeEnv('SANDBOX_QUEUE', 1, 10_000)
  return {
    isolation,
    ...(mb === undefined ? {} : { memoryBytes: mb * 1024 * 1024 }),
    ...(tenantConcurrency === undefined ? {} : { tenantConcurrency }),
    ...(tenantQueue === undefined ? {} : { tenantQueue }),
    ...(queue === undefined ? {} : { queue }),
  }
}

/**
 * How long the node server (`npm start`) waits on a connection: Node's own defaults hold a client
 * that trickles its headers for 60 s and its body for 300 s, so a few hundred slow connections
 * would hold the server. `connectionsCheckingIntervalMs` is how often Node checks (its default, 30
 * s, would let a timeout run that much late).
 */
export interface NodeServerTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  connectionsCheckingIntervalMs: number
}

export const DEFAULT_NODE_SERVER_TIMEOUTS: NodeServerTimeouts = {
  headersTimeoutMs: 10_000,
  // a 1 MiB body (the largest any route takes) in 30 s is 35 KB/s: slower clients are not served
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
}

/** HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS over the defaults. */
export function nodeServerTimeoutsFromEnv(): NodeServerTimeouts {
  const d = DEFAULT_NODE_SERVER_TIMEOUTS
  const headersTimeoutMs = wholeEnv('HTTP_HEADERS_TIMEOUT_MS', 100, 300_000) ?? d.headersTimeoutMs
  const requestTimeoutMs = wholeEnv('HTTP_REQUEST_TIMEOUT_MS', 100, 3_600_000) ?? d.requestTimeoutMs
  return {
    headersTimeoutMs,
    // Node requires requestTimeout ≥ headersTimeout
    requestTimeoutMs: Math.max(requestTimeoutMs, headersTimeoutMs),
    keepAliveTimeoutMs: wholeEnv('HTTP_KEEP_ALIVE_TIMEOUT_MS', 100, 300_000) ?? d.keepAliveTimeoutMs,
    connectionsCheckingIntervalMs: Math.min(d.connectionsCheckingIntervalMs, headersTimeoutMs),
  }
}

/** The options `http.createServer` takes for these timeouts (@hono/node-server's `serverOptions`). */
export const nodeServerOptions = (t: NodeServerTimeouts) => ({
  headersTimeout: t.headersTimeoutMs,
  requestTimeout: t.requestTimeoutMs,
  keepAliveTimeout: t.keepAliveTimeoutMs,
  connectionsCheckingInterval: t.connectionsCheckingIntervalMs,
})

function wholeEnv(name: string, min: number, max: number): number | undefined {
  const raw = optionalEnv(name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`)
  return n
}

/**
 * Bearer-token settings besides AUTH_JWT_SECRET (docs/guide/auth-and-tokens.md). The identity provider is on when AUTH_JWKS_URL
 * is set, and then AUTH_ISSUER and AUTH_AUDIENCE are required: a provider's tokens are only ever
 * accepted for this service. A bad value fails the cold start.
 */
export function authSettingsFromEnv(): Omit<AuthSettings, 'jwtSecret'> {
  const lifetime = optionalEnv('AUTH_MAX_TOKEN_LIFETIME_SECONDS')
  const maxTokenLifetimeSeconds = lifetime === undefined ? DEFAULT_MAX_TOKEN_LIFETIME_SECONDS : Number(lifetime)
  if (!Number.isInteger(maxTokenLifetimeSeconds) || maxTokenLifetimeSeconds < 60)
    throw new Error(`AUTH_MAX_TOKEN_LIFETIME_SECONDS must be a whole number of seconds, at least 60, got '${lifetime}'`)
  const publicBaseUrl = optionalEnv('PUBLIC_BASE_URL')
  if (publicBaseUrl !== undefined) httpUrl('PUBLIC_BASE_URL', publicBaseUrl)
  return { maxTokenLifetimeSeconds, publicBaseUrl, identityProvider: identityProviderFromEnv() }
}

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

function identityProviderFromEnv(): IdentityProviderSettings | undefined {
  const jwksUrl = optionalEnv('AUTH_JWKS_URL')
  if (jwksUrl === undefined) return undefined
  const url = httpUrl('AUTH_JWKS_URL', jwksUrl)
  // the keys decide who is anyone: plain HTTP only to this machine (a local IdP, tests)
  if (url.protocol !== 'https:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))
    throw new Error(`AUTH_JWKS_URL must be https (plain http only on loopback), got '${jwksUrl}'`)
  const issuer = requiredEnv('AUTH_ISSUER')
  const audience = list(requiredEnv('AUTH_AUDIENCE'))
  const algorithms = list(optionalEnv('AUTH_ALGORITHMS') ?? 'RS256,ES256') as AsymmetricAlgorithm[]
  const unknown = algorithms.filter((a) => !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(a))
  if (unknown.length || !algorithms.length)
    throw new Error(`AUTH_ALGORITHMS must list asymmetric algorithms from ${ASYMMETRIC_ALGORITHMS.join(', ')}, got '${unknown.join(', ')}'`)
  const cooldown = Number(optionalEnv('AUTH_JWKS_REFRESH_SECONDS') ?? 30)
  if (!Number.isFinite(cooldown) || cooldown < 0 || cooldown > 86_400)
    throw new Error(`AUTH_JWKS_REFRESH_SECONDS must be from 0 to 86400, got '${optionalEnv('AUTH_JWKS_REFRESH_SECONDS')}'`)
  const authorizationServers = list(optionalEnv('AUTH_AUTHORIZATION_SERVERS'))
  for (const server of authorizationServers) httpUrl('AUTH_AUTHORIZATION_SERVERS', server)
  return {
    jwksUrl,
    issuer,
    audience,
    algorithms,
    tenantClaim: optionalEnv('AUTH_TENANT_CLAIM') ?? 'tenant',
    scopeClaim: optionalEnv('AUTH_SCOPE_CLAIM') ?? 'scope',
    refreshCooldownMs: cooldown * 1000,
    authorizationServers: authorizationServers.length ? authorizationServers : [issuer],
  }
}

function httpUrl(name: string, raw: string): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error(`${name} must be an absolute URL, got '${raw}'`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${name} must be an http(s) URL, got '${raw}'`)
  return url
}

/**
 * The listeners of the platform the service runs on, from the variables that announce them: the
 * Lambda runtime (and extensions) API, container credential and metadata endpoints, and the
 * store endpoints set for emulators. No tool may call them (OwnEndpoints); the HTTP port of
 * `npm start` is added once the server listens.
 */
export function ownEndpointsFromEnv(env: Record<string, string | undefined> = process.env): OwnEndpoints {
  const own = new OwnEndpoints()
  for (const name of [
    'AWS_LAMBDA_RUNTIME_API',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'ECS_CONTAINER_METADATA_URI',
    'ECS_CONTAINER_METADATA_URI_V4',
    'DYNAMODB_ENDPOINT',
    'S3_ENDPOINT',
    'SSM_ENDPOINT',
    'AWS_ENDPOINT_URL',
    'AWS_ENDPOINT_URL_DYNAMODB',
    'AWS_ENDPOINT_URL_S3',
  ]) {
    const value = env[name]?.trim()
    if (value) own.add(value)
  }
  // a relative credentials URI is served by the container agent at this fixed address
  if (env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) own.add('http://169.254.170.2')
  return own
}

/**
 * The longest one DynamoDB call may take, its retries included: a third of the API function's
 * 30 s timeout (sst.config.ts; test/deploy/sst-config.test.ts keeps it below), so a request that
 * makes a few store calls in a row still answers, with an error if need be, before Lambda ends it.
 */
export const STORE_CALL_DEADLINE_MS = 10_000

export interface StoreSettings {
  dynamoEndpoint?: string
  s3Endpoint?: string
  useFips?: boolean
  useDualStack?: boolean
}

/**
 * Where the stores are, as the SDK would read it: `DYNAMODB_ENDPOINT` (ours, first), then
 * `AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL`; `S3_ENDPOINT`, then the same two for S3;
 * `AWS_USE_FIPS_ENDPOINT` / `AWS_USE_DUALSTACK_ENDPOINT` = `true`. Unset: the regional endpoints.
 */
export function storeSettingsFromEnv(env: Record<string, string | undefined> = process.env): StoreSettings {
  const first = (...names: string[]) => names.map((n) => env[n]?.trim()).find((v) => !!v)
  const flag = (name: string) => {
    const v = env[name]?.trim().toLowerCase()
    if (v === undefined || v === '') return undefined
    if (v !== 'true' && v !== 'false') throw new Error(`${name} must be true or false, got '${env[name]}'`)
    return v === 'true'
  }
  const dynamoEndpoint = first('DYNAMODB_ENDPOINT', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL')
  const s3Endpoint = first('S3_ENDPOINT', 'AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL')
  const useFips = flag('AWS_USE_FIPS_ENDPOINT')
  const useDualStack = flag('AWS_USE_DUALSTACK_ENDPOINT')
  return {
    ...(dynamoEndpoint && httpUrl('DYNAMODB_ENDPOINT', dynamoEndpoint) ? { dynamoEndpoint } : {}),
    ...(s3Endpoint && httpUrl('S3_ENDPOINT', s3Endpoint) ? { s3Endpoint } : {}),
    ...(useFips !== undefined ? { useFips } : {}),
    ...(useDualStack !== undefined ? { useDualStack } : {}),
  }
}

/** The region Lambda (or the shell) announces; the DynamoDB client signs for it and derives its endpoint. */
export function awsRegionFromEnv(env: Record<string, string | undefined> = process.env): string {
  const region = env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim()
  if (!region) throw new Error('AWS_REGION must be set (Lambda sets it; elsewhere export it)')
  return region
}

/**
 * The credentials in the environment, as Lambda provides its role's (the SDK's `fromEnv`); absent
 * when the environment holds none, and the SDK's default chain is loaded on first use instead.
 */
export function awsCredentialsFromEnv(env: Record<string, string | undefined> = process.env): AwsCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim()
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim()
  if (!accessKeyId || !secretAccessKey) return undefined
  const sessionToken = env.AWS_SESSION_TOKEN?.trim()
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
}

/** '90s', '30m', '1h30m' → ms (a local parse: lib/recipes/documents would load its imports at cold start). */
function durationMs(text: string): number | undefined {
  const m = /^(?:(\d{1,3})h)?(?:(\d{1,4})m)?(?:(\d{1,6})s)?$/.exec(text.trim())
  if (!m || (!m[1] && !m[2] && !m[3])) return undefined
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000
}

/**
 * `TOOL_BUDGET_RESERVE` (slots kept free for the engine's own action tool; default 1),
 * `MCP_SESSION_IDLE_TTL`, `LEARNED_TOOL_LIMIT_MIN` (no learned tool limit below it; default 8),
 * `LEARNED_TOOL_LIMIT_TTL_HOURS` (a learned limit is forgotten after it; default 168),
 * `PROCESS_SPAWNS_PER_MINUTE`, `PROCESS_SPAWN_BURST` (spawns per tenant: lib/recipes/spawn-rate.ts).
 */
export function surfaceSettingsFromEnv(env: Record<string, string | undefined> = process.env): Partial<SurfaceSettings> {
  const out: Partial<SurfaceSettings> = {}
  const whole = (name: string, min: number, max: number) => {
    const raw = env[name]
    if (raw === undefined || raw === '') return undefined
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`)
    return n
  }
  const reserve = whole('TOOL_BUDGET_RESERVE', 0, 64)
  if (reserve !== undefined) out.reserve = reserve
  const idle = env.MCP_SESSION_IDLE_TTL
  if (idle !== undefined && idle !== '') {
    const ms = durationMs(idle)
    if (ms === undefined || ms < 60_000 || ms > 24 * 3600_000)
      throw new Error(`MCP_SESSION_IDLE_TTL must be a duration from 1m to 24h like '30m' or '2h', got '${idle}'`)
    out.mcpSessionIdleMs = ms
  }
  const minimum = whole('LEARNED_TOOL_LIMIT_MIN', 1, 1_000)
  if (minimum !== undefined) out.learnedLimitMinimum = minimum
  const hours = whole('LEARNED_TOOL_LIMIT_TTL_HOURS', 1, 24 * 365)
  if (hours !== undefined) out.learnedLimitTtlMs = hours * 3600_000
  const perMinute = whole('PROCESS_SPAWNS_PER_MINUTE', 1, 1_000_000)
  const burst = whole('PROCESS_SPAWN_BURST', 1, 1_000_000)
  if (perMinute !== undefined || burst !== undefined)
    out.spawnRate = { ...(perMinute !== undefined ? { perMinute } : {}), ...(burst !== undefined ? { burst } : {}) }
  return out
}

/** FAIR_SHARE: `on` (default) or `off` — the per-tenant fair-share gate (docs/reference/limits.md#a-fair-share-of-the-main-thread). */
export function fairShareFromEnv(env: Record<string, string | undefined> = process.env): false | undefined {
  const raw = env.FAIR_SHARE?.trim().toLowerCase()
  if (raw === undefined || raw === '' || raw === 'on') return undefined
  if (raw === 'off') return false
  throw new Error(`FAIR_SHARE must be on or off, got '${env.FAIR_SHARE}'`)
}
