/** The deployment settings read from the environment, in one place (edge only). */
import { OwnEndpoints } from '../lib/egress/own-endpoints'
import { jsonLogger, type LogLevel } from '../lib/runtime/logger'
import { SANDBOX_ISOLATIONS, type SandboxIsolation } from '../lib/sandbox'

export function envLogger() {
  const level = (process.env.LOG_LEVEL ?? 'info') as LogLevel
  return jsonLogger((line) => process.stdout.write(line + '\n'), ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info')
}

export function requiredEnv(name: string): string {
  const v = process.env[name]
  if (!v) throw new Error(`environment variable ${name} must be set`)
  return v
}

export const optionalEnv = (name: string) => process.env[name] || undefined

/**
 * SANDBOX_MEMORY_MB: the QuickJS memory limit per run (default 32). SANDBOX_ISOLATION: `worker` or
 * `inline` (the entry point's default otherwise). A bad value fails the cold start.
 */
export function sandboxSettingsFromEnv(defaultIsolation: SandboxIsolation): { memoryBytes?: number; isolation: SandboxIsolation } {
  const isolation = (optionalEnv('SANDBOX_ISOLATION') ?? defaultIsolation) as SandboxIsolation
  if (!SANDBOX_ISOLATIONS.includes(isolation)) throw new Error(`SANDBOX_ISOLATION must be one of ${SANDBOX_ISOLATIONS.join(', ')}, got '${isolation}'`)
  const raw = optionalEnv('SANDBOX_MEMORY_MB')
  if (raw === undefined) return { isolation }
  const mb = Number(raw)
  if (!Number.isInteger(mb) || mb < 4 || mb > 1024) throw new Error(`SANDBOX_MEMORY_MB must be a whole number from 4 to 1024, got '${raw}'`)
  return { memoryBytes: mb * 1024 * 1024, isolation }
}

/**
 * The listeners of the platform the service runs on, from the variables that announce them: the
 * Lambda runtime (and extensions) API, container credential and metadata endpoints, and the
 * store endpoints set for emulators. No tool may call them (OwnEndpoints); the HTTP port of
 * `npm start` is added once the server listens.
 */
export function ownEndpointsFromEnv(env: Record<string, string | undefined> = process.env): OwnEndpoints {
  const own = new OwnEndpoints()
  for (const name of ['AWS_LAMBDA_RUNTIME_API', 'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'ECS_CONTAINER_METADATA_URI', 'ECS_CONTAINER_METADATA_URI_V4', 'DYNAMODB_ENDPOINT', 'S3_ENDPOINT', 'SSM_ENDPOINT']) {
    const value = env[name]?.trim()
    if (value) own.add(value)
  }
  // a relative credentials URI is served by the container agent at this fixed address
  if (env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI) own.add('http://169.254.170.2')
  return own
}
