/** Reads the console's browser files (script, style sheet) from disk, once, when the console is first served. */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import type { ConsoleAsset } from './http/console/routes'

// not an ES module import of node:fs: functions/defaults.ts says why
const { readFileSync } = createRequire(import.meta.url)('node:fs') as typeof import('node:fs')

const ASSETS = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const

export function consoleAssetsDir(): string {
  // Lambda runs from LAMBDA_TASK_ROOT with the assets copied beside the bundle under the same path (sst copyFiles)
  return resolve(process.env.CONSOLE_ASSETS_DIR ?? join(process.env.LAMBDA_TASK_ROOT ?? process.cwd(), 'functions/http/console/assets'))
}

export function loadConsoleAssets(dir = consoleAssetsDir()): Map<string, ConsoleAsset> {
  const out = new Map<string, ConsoleAsset>()
  for (const [file, type] of Object.entries(ASSETS)) {
    const body = readFileSync(join(dir, file), 'utf8')
    out.set(file, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` })
  }
  return out
}

/** loadConsoleAssets on first call, then the same map. */
export function lazyConsoleAssets(dir?: string): () => Map<string, ConsoleAsset> {
  let assets: Map<string, ConsoleAsset> | undefined
  return () => (assets ??= loadConsoleAssets(dir))
}
