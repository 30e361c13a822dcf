/** `npm start` as a child process on 127.0.0.1: start it on a DATA_DIR, read the printed URL and token, stop it. */
import { type ChildProcess, spawn } from 'node:child_process'

export interface LocalService {
  /** `http://127.0.0.1:<port>/brain/demo`, as printed */
  url: string
  /** the origin alone */
  origin: string
  token: string
  child: ChildProcess
}

export async function startLocalService(dataDir: string, env: Record<string, string> = {}): Promise<LocalService> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local.ts'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', AUTH_JWT_SECRET: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const deadline = Date.now() + 20_000
  while (!/ST_TOKEN=\S+/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      if (child.exitCode === null) child.kill('SIGKILL')
      throw new Error(`npm start did not come up:\n${out}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  const url = /export ST_URL=(\S+)/.exec(out)![1]
  return { url, origin: new URL(url).origin, token: /export ST_TOKEN=(\S+)/.exec(out)![1], child }
}

/** SIGINT, as Ctrl-C (or SIGTERM, as a supervisor): resolves with the exit code. */
export function stopLocalService(child: ChildProcess, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  child.kill(signal)
  return exited
}
