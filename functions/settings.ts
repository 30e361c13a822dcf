/** The deployment settings read from the environment, in one place (edge only). */
import { jsonLogger, type LogLevel } from '../lib/runtime/logger'
import { SANDBOX_ISOLATIONS, type SandboxIsolation, type SandboxSettings } from '../lib/sandbox'

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
 * `inline` (the entry point's default otherwise). Sharing between tenants (README "Scripted tools"):
 * SANDBOX_TENANT_CONCURRENCY (scripts one tenant runs at once, default half the workers),
 * SANDBOX_TENANT_QUEUE (scripts one tenant may have waiting, default 8), SANDBOX_QUEUE (waiting
 * across tenants, default 64). A bad value fails the cold start.
 */
export function sandboxSettingsFromEnv(defaultIsolation: SandboxIsolation): SandboxSettings & { isolation: SandboxIsolation } {
  const isolation = (optionalEnv('SANDBOX_ISOLATION') ?? defaultIsolation) as SandboxIsolation
  if (!SANDBOX_ISOLATIONS.includes(isolation)) throw new Error(`SANDBOX_ISOLATION must be one of ${SANDBOX_ISOLATIONS.join(', ')}, got '${isolation}'`)
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

function wholeEnv(name: string, min: number, max: number): number | undefined {
  const raw = optionalEnv(name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got '${raw}'`)
  return n
}
