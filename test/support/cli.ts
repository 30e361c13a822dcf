/** The `server-tools` CLI run as a user runs it: a child process of bin/server-tools.mjs. */
import { spawn } from 'node:child_process'

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the CLI against `service` (its URL and token as ST_URL / ST_TOKEN) and collects what it printed. */
export function runCli(service: { url: string; token: string }, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/server-tools.mjs', ...args], {
      env: { ...process.env, ST_URL: service.url, ST_TOKEN: service.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}
