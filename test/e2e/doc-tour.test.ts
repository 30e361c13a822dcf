/**
 * The README's five-minute tour, run as written: its shell blocks are read from README.md itself (so
 * the document cannot drift from what works) and run with bash and curl against `npm start` — twice,
 * restarting on the same DATA_DIR in between, as a newcomer who tries it again would.
 *
 * What is checked: every request answers 2xx unless a `# → NNN` comment after it says otherwise;
 * each `"key": value` a `# →` comment shows is somewhere in the answer (on a re-run, `version` moves on,
 * as the README says); and the `export` lines the tour shows are the ones `npm start` prints.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { type LocalService, startLocalService, stopLocalService } from '../support/npm-start'

const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), 'server-tools-tour-'))
const services: LocalService[] = []

afterAll(() => {
  for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
})

interface Expectation {
  /** the comment as written, for messages */
  comment: string
  status?: number
  pairs: [key: string, value: unknown][]
}

/** The tour's shell blocks, from its heading to the next one. */
function tourBlocks(readme: string): string[] {
  const start = readme.indexOf('\n## A five-minute tour')
  if (start < 0) throw new Error('README.md has no "## A five-minute tour" section')
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

/** `"key": value` pairs a comment shows; values cut with "…" say too little to compare. */
function pairsOf(comment: string): [string, unknown][] {
  return [...comment.matchAll(/"(\w+)": ("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)]
    .filter((m) => !m[2].includes('…'))
    .map((m) => [m[1], JSON.parse(m[2])])
}

/**
 * One bash script: the printed exports replaced by what this `npm start` printed, curl wrapped to
 * report each status, each `# →` comment replaced by a marker that names its expectation.
 */
function tourScript(blocks: string[], printed: Record<string, string>): { script: string; expectations: Expectation[] } {
  const expectations: Expectation[] = []
  const lines = ['set -euo pipefail', `curl() { command curl -w '\\n@@status %{http_code}\\n' "$@"; }`]
  for (const block of blocks) {
    const blockLines = block.replace(/\n$/, '').split('\n')
    blockLines.forEach((line, i) => {
      const exported = /^export (\w+)=/.exec(line)
      if (exported) {
        if (!(exported[1] in printed)) throw new Error(`the tour exports ${exported[1]}, which npm start does not print`)
        lines.push(`export ${exported[1]}='${printed[exported[1]]}'`)
        return
      }
      const arrow = /^\s*# → (.*)$/.exec(line)
      if (!arrow) return void lines.push(line)
      // a comment running over several lines (`#   …`) belongs to the same answer
      let comment = arrow[1]
      for (let j = i + 1; j < blockLines.length && /^\s*#\s/.test(blockLines[j]) && !/^\s*# →/.test(blockLines[j]); j++)
        comment += ` ${blockLines[j].replace(/^\s*#\s*/, '')}`
      const status = /^(\d{3})\b/.exec(comment)
      expectations.push({ comment, status: status ? Number(status[1]) : undefined, pairs: pairsOf(comment) })
      lines.push(`echo '@@expect ${expectations.length - 1}'`)
    })
  }
  return { script: `${lines.join('\n')}\n`, expectations }
}

interface Answer {
  status: number
  body: string
}

function has(value: unknown, key: string, expected: unknown): boolean {
  if (Array.isArray(value)) return value.some((v) => has(v, key, expected))
  if (!value || typeof value !== 'object') return false
  return Object.entries(value).some(([k, v]) => (k === key && v === expected) || has(v, key, expected))
}

/** Every problem with one run's output, checked against the expectations; [] when the tour held. */
function tourProblems(output: string, expectations: Expectation[], opts: { rerun: boolean }): string[] {
  const problems: string[] = []
  const answers: Answer[] = []
  const claimed = new Set<Answer>()
  let body: string[] = []
  for (const line of output.split('\n')) {
    const status = /^@@status (\d{3})$/.exec(line)
    const expect = /^@@expect (\d+)$/.exec(line)
    if (status) {
      answers.push({ status: Number(status[1]), body: body.join('\n') })
      body = []
    } else if (expect) {
      const e = expectations[Number(expect[1])]
      const last = answers.at(-1)
      if (!last) {
        problems.push(`no answer before "${e.comment}"`)
        continue
      }
      claimed.add(last)
      const expectedStatus = e.status !== undefined && (e.status >= 400 || !opts.rerun) ? e.status : undefined
      if (expectedStatus !== undefined && last.status !== expectedStatus)
        problems.push(`expected ${expectedStatus} for "${e.comment}", got ${last.status}: ${last.body}`)
      let json: unknown
      try {
        json = JSON.parse(last.body)
      } catch {
        if (e.pairs.length) problems.push(`"${e.comment}": the answer is not JSON: ${last.body}`)
        continue
      }
      for (const [key, value] of e.pairs) {
        if (opts.rerun && key === 'version') continue
        if (!has(json, key, value)) problems.push(`"${e.comment}": no "${key}": ${JSON.stringify(value)} in ${last.body}`)
      }
    } else body.push(line)
  }
  for (const a of answers)
    if ((a.status < 200 || a.status >= 300) && !claimed.has(a))
      problems.push(`a request answered ${a.status} with no comment saying so: ${a.body}`)
  if (answers.length < 8) problems.push(`only ${answers.length} requests ran`)
  return problems
}

async function runTour(service: LocalService, rerun: boolean) {
  const { script, expectations } = tourScript(tourBlocks(readFileSync('README.md', 'utf8')), {
    ST_URL: service.url,
    ST_TOKEN: service.token,
  })
  const { stdout } = await run('bash', ['-c', script], { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 })
  return tourProblems(stdout, expectations, { rerun })
}

describe("the README's tour", () => {
  it('runs as written against npm start, and again on the same data after a restart', { timeout: 180_000 }, async () => {
    const readme = readFileSync('README.md', 'utf8')
    // the URL the tour shows is the one npm start prints, but for the port
    const shown = /export ST_URL=(\S+)/.exec(tourBlocks(readme).join('\n'))![1]
    for (const rerun of [false, true]) {
      const service = await startLocalService(dataDir)
      services.push(service)
      let log = ''
      service.child.stdout!.on('data', (d) => (log += d))
      service.child.stderr!.on('data', (d) => (log += d))
      expect(new URL(service.url).pathname).toBe(new URL(shown).pathname)
      expect(await runTour(service, rerun), rerun ? 'second run' : 'first run').toEqual([])
      expect(await stopLocalService(service.child), `npm start did not stop cleanly:\n${log}`).toBe(0)
    }
  })

  it('reports a status the README does not show, and a value the answer does not carry', () => {
    const { script, expectations } = tourScript(['curl x\n# → 422 { "detail": "bad", "line": 4 }\ncurl y\n'], {})
    expect(script).toContain(`echo '@@expect 0'`)
    const output = ['{"detail":"bad","errors":[{"line":3}]}', '@@status 422', '@@expect 0', 'not found', '@@status 404', ''].join('\n')
    expect(tourProblems(output, expectations, { rerun: false })).toEqual([
      expect.stringContaining('no "line": 4'),
      'a request answered 404 with no comment saying so: not found',
      'only 2 requests ran',
    ])
  })
})
