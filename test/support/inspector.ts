/**
 * The MCP Inspector's CLI, installed on first use into node_modules/.cache rather than kept as a
 * devDependency: it (and its commander and undici) declare Node ≥ 22.19, which made every
 * `npm ci` on Node 20 print EBADENGINE warnings, while its CLI mode runs on Node 20 as the MCP
 * client test shows. The version is pinned; the install needs only the npm registry.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

export const INSPECTOR_VERSION = '2.12.0'

/** The path of the `mcp-inspector` binary, installing the pinned version when it is missing. */
export async function inspectorBin(): Promise<string> {
  const prefix = join(process.cwd(), 'node_modules', '.cache', `mcp-inspector-${INSPECTOR_VERSION}`)
  const bin = join(prefix, 'node_modules', '.bin', 'mcp-inspector')
  if (existsSync(bin)) return bin
  mkdirSync(prefix, { recursive: true })
  await promisify(execFile)(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      `@modelcontextprotocol/inspector@${INSPECTOR_VERSION}`,
    ],
    { timeout: 240_000 },
  )
  return bin
}
