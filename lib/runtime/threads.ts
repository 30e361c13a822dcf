/**
 * Starting a worker thread that runs a module of ours (the sandbox's QuickJS workers, the YAML
 * parse workers): the module is evaluated again in the thread with a marker in `workerData`, and
 * serves when it sees the marker. Bundled (or compiled) the module is a JS file the worker can
 * load itself. As TypeScript source (tsx, vitest) it is loaded through tsx's API from a small
 * eval'd script: on Node 20 neither an inherited nor an explicit `--import tsx` reaches a
 * worker's entry module.
 */
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { type ResourceLimits, Worker } from 'node:worker_threads'

const TS_SOURCE = /\.[mc]?ts$/

/**
 * A worker evaluating the module at `moduleUrl` (the caller's `import.meta.url`). Its
 * `process.env` is `env` if given, else a copy of the process's when it starts.
 */
export function startWorker(moduleUrl: string, workerData: unknown, resourceLimits?: ResourceLimits, env?: NodeJS.ProcessEnv): Worker {
  const self = new URL(moduleUrl)
  const options = { workerData, execArgv: workerExecArgv(), ...(resourceLimits ? { resourceLimits } : {}), ...(env ? { env } : {}) }
  if (!TS_SOURCE.test(self.pathname)) return new Worker(self, options)
  const api = pathToFileURL(
    createRequire(moduleUrl)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href
  const code = `import(${JSON.stringify(api)}).then((tsx) => tsx.tsImport(${JSON.stringify(self.href)}, ${JSON.stringify(self.href)}))`
  return new Worker(code, { eval: true, ...options })
}

/**
 * A worker inherits the process's Node options (execArgv left undefined: V8 flags may not be given
 * to a worker explicitly) — unless they include `--input-type` (a process started by
 * `node --input-type=module -e …`), which a worker refuses: it then gets none.
 */
function workerExecArgv(): string[] | undefined {
  return process.execArgv.some((a) => a === '--input-type' || a.startsWith('--input-type=')) ? [] : undefined
}
