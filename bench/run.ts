/**
 * `npm run bench`: runs every bench in bench/, one after the other.
 *
 * A bench is any exported function named `bench<Something>` (declared `export [async] function`
 * or `export const`) in a top-level module of bench/
 * (bench/cascade.ts → benchCascade, bench/sandbox.ts → benchSandbox, …). Modules are discovered
 * and imported at run time, so a bench that is not written yet is simply absent, and one that
 * fails is reported without stopping the others (the exit code is then 1).
 *
 * A bench prints its own table and ratio lines; if it returns `{ summary: string[] }`, those lines
 * are repeated at the end. `npm run bench -- cascade sandbox` runs only the named ones (module or
 * function name, case-insensitive).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath, pathToFileURL } from 'node:url'

type Bench = () => Promise<unknown> | unknown

const here = dirname(fileURLToPath(import.meta.url))
const self = fileURLToPath(import.meta.url)
const wanted = process.argv.slice(2).map((a) => a.toLowerCase())

async function discover(): Promise<{ module: string; name: string; run: Bench }[]> {
  const files = readdirSync(here)
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && join(here, f) !== self)
    // Only modules that declare a bench export are imported, so helpers and scratch files never run.
    .filter((f) => /export\s+(async\s+)?(function\s*\*?|const|let)\s+bench[A-Z0-9_]/.test(readFileSync(join(here, f), 'utf8')))
    .sort()
  const found: { module: string; name: string; run: Bench }[] = []
  for (const file of files) {
    const module = file.replace(/\.[^.]+$/, '')
    let exports: Record<string, unknown>
    try {
      exports = (await import(pathToFileURL(join(here, file)).href)) as Record<string, unknown>
    } catch (e) {
      process.stderr.write(`bench/${file}: could not be loaded: ${(e as Error).message}\n`)
      process.exitCode = 1
      continue
    }
    for (const [name, value] of Object.entries(exports)) {
      if (/^bench[A-Z0-9_]/.test(name) && typeof value === 'function') found.push({ module, name, run: value as Bench })
    }
  }
  return found.filter((b) => wanted.length === 0 || wanted.includes(b.module.toLowerCase()) || wanted.includes(b.name.toLowerCase()))
}

async function main() {
  const benches = await discover()
  if (benches.length === 0) {
    process.stderr.write(`no bench found${wanted.length ? ` for ${wanted.join(', ')}` : ''} in bench/\n`)
    process.exit(1)
  }
  process.stdout.write(`running ${benches.map((b) => `${b.module}.${b.name}`).join(', ')}\n`)
  const summary: string[] = []
  for (const b of benches) {
    const t0 = performance.now()
    try {
      const result = (await b.run()) as { summary?: unknown } | undefined
      if (result && Array.isArray(result.summary)) summary.push(...result.summary.map(String))
      process.stdout.write(`${b.module}.${b.name} finished in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
    } catch (e) {
      process.exitCode = 1
      process.stderr.write(`${b.module}.${b.name} FAILED: ${(e as Error).stack ?? e}\n`)
      summary.push(`${b.module}.${b.name}: FAILED (${(e as Error).message})`)
    }
  }
  if (summary.length) process.stdout.write(['', 'summary', ...summary.map((l) => `  ${l}`), ''].join('\n'))
}

main().then(
  // Benches close what they open; exiting here keeps a stray handle in one of them from hanging the run.
  () => process.exit(process.exitCode ?? 0),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
