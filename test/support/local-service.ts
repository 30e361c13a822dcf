/** `npm start`'s entry (functions/local.ts) as a child process on a given DATA_DIR, on a free loopback port. */
import { type ChildProcess, spawn } from 'node:child_process'

export interface LocalService {
  /** The printed ST_URL (`http://127.0.0.1:<port>/brain/demo`). */
  url: string
  /** The printed ST_TOKEN (tenant demo, every scope). */
  token: string
  child: ChildProcess
}

export async function startLocal(dataDir: string, children: ChildProcess[]): Promise<LocalService> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local.ts'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', AUTH_JWT_SECRET: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const deadline = Date.now() + 20_000
  while (!/ST_TOKEN=\S+/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${out}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return { url: /export ST_URL=(\S+)/.exec(out)![1], token: /export ST_TOKEN=(\S+)/.exec(out)![1], child }
}

/** SIGINT, as Ctrl-C does; resolves with the exit code. */
export async function stopLocal(child: ChildProcess) {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  child.kill('SIGINT')
  return exited
}
