/** The deployment settings read from the environment, in one place (edge only). */
import { jsonLogger, type LogLevel } from '../lib/runtime/logger'

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
