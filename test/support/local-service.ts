/**
 * `npm start` as a child process on a fresh DATA_DIR and a free port on 127.0.0.1, read the way a
 * person reads it: the ST_URL and ST_TOKEN lines it prints.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface LocalService {
  url: string
  token: string
  child: ChildProcess
}

export class LocalServices {
  readonly dataDir = mkdtempSync(join(tmpdir(), 'server-tools-local-'))
  private readonly children: ChildProcess[] = []

  async start(): Promise<LocalService> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/local.ts'], {
      env: { ...process.env, DATA_DIR: this.dataDir, PORT: '0', AUTH_JWT_SECRET: '', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.children.push(child)
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

  async stop(child: ChildProcess): Promise<number | null> {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
    child.kill('SIGINT')
    return exited
  }

  /** Kills what is still running and removes the data directory (afterAll). */
  cleanUp() {
    for (const c of this.children) if (c.exitCode === null) c.kill('SIGKILL')
    rmSync(this.dataDir, { recursive: true, force: true })
  }
}
