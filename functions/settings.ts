/** The deployment settings read from the environment, in one place (edge only). */
import { jsonLogger, type LogLevel } from '../lib/runtime/logger'
import { SANDBOX_ISOLATIONS, type SandboxIsolation } from '../lib/sandbox/isolation'

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
