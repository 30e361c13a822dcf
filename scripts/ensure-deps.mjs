// Installs the dependencies when node_modules is missing or older than the lockfile, so that
// `npm start`, `npm test` and `npm run bench` work on a fresh clone, and applies patches/ (pinned
// fixes to dependencies, e.g. dynalite's iterator leak) when one is newer than the last time they
// were applied — a checkout that gained a patch after its install gets it too. Plain Node.

import { execSync } from 'node:child_process'
import { existsSync, lstatSync, readdirSync, statSync, writeFileSync } from 'node:fs'

// A node_modules that is a link belongs to another checkout (a git worktree sharing one install):
// reinstalling through it would replace that checkout's packages, so leave it as it is.
if (existsSync('node_modules') && lstatSync('node_modules').isSymbolicLink()) process.exit(0)

const marker = 'node_modules/.package-lock.json'
const stale = !existsSync(marker) || statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs + 1000
if (stale) {
  console.error('[ensure-deps] installing dependencies (npm ci)…')
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' }) // its postinstall applies patches/
}

const applied = 'node_modules/.patches-applied'
const patches = existsSync('patches') ? readdirSync('patches').filter((f) => f.endsWith('.patch')) : []
const newest = Math.max(0, statSync('package.json').mtimeMs, ...patches.map((f) => statSync(`patches/${f}`).mtimeMs))
if (patches.length && (stale || !existsSync(applied) || statSync(applied).mtimeMs < newest)) {
  if (!stale) {
    console.error('[ensure-deps] applying patches/ …')
    execSync('npx --no-install patch-package', { stdio: 'inherit' })
  }
  writeFileSync(applied, `${new Date().toISOString()}\n`)
}
