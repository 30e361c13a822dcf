// Installs the dependencies when node_modules is missing or older than the lockfile, so that
// `npm start`, `npm test` and `npm run bench` work on a fresh clone. Plain Node: no dependency.
import { existsSync, statSync } from 'node:fs'
import { execSync } from 'node:child_process'

const marker = 'node_modules/.package-lock.json'
const stale = !existsSync(marker) || statSync('package-lock.json').mtimeMs > statSync(marker).mtimeMs + 1000
if (stale) {
  console.error('[ensure-deps] installing dependencies (npm ci)…')
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' })
}
