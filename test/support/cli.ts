/** The `server-tools` CLI, run as a user runs it (a child process of bin/server-tools.mjs) or in this process. */
import { spawn } from 'node:child_process'
import { run } from '../../functions/cli/main'

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

/**
 * The same command through the function the bin calls (`run`, with the bin's line framing and no
 * terminal to ask), without a process of its own: a bin start costs ~0.5 s of CPU (tsx and the
 * module graph), which 59 commands made the suite's longest file. The bin itself is run by runCli.
 */
export async function runCliInProcess(service: { url: string; token: string }, ...args: string[]): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await run(args, {
    out: (t) => (stdout += `${t}\n`),
    err: (t) => (stderr += `${t}\n`),
    env: { ...process.env, ST_URL: service.url, ST_TOKEN: service.token },
  })
  return { code, stdout, stderr }
}
