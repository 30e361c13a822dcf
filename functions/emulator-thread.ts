/**
 * `npm start`'s embedded stores (dynalite, s3rver — functions/emulators.ts) on a thread of their
 * own. In the service's thread every store request of every tenant — usage counters, audit
 * entries flushed after the response, document reads — was parsed, validated and answered on the
 * event loop that serves requests, outside any tenant's fair share. Here they cost the service
 * thread only the HTTP round trip its AWS adapters make anyway, as against AWS.
 *
 * A worker thread, not a child process: the listeners stay in the service's process (the egress
 * guard's own-endpoint list and /proc both see them as the service's), the thread ends with the
 * process whatever kills it, and no second Node has to start (docs/decisions.md).
 *
 * - **Start**: resolves once both listeners are bound, with their endpoints; a failure to start
 *   (a port in use, a data directory it cannot open) rejects with the thread's own reason.
 * - **Close**: the listeners and dynalite's leveldb closed in the thread, then the thread ends;
 *   the data stays on disk for the next start.
 * - **Crash** after start: the listeners die with the thread, so store calls are refused at once
 *   (the AWS adapters' store errors, never a hung request); `onCrash` says why, once.
 */
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads'
import { startWorker } from '../lib/runtime/threads'
import { type EmulatorOptions, type Emulators, startEmulators } from './emulators'

/** Marks workerData as ours, so that this module loaded in another worker never starts serving. */
export const EMULATOR_THREAD_MARK = 'server-tools.emulator-thread'

/**
 * The thread's young generation, smaller than V8's default (up to 3 × 16 MiB semi-spaces): the
 * stores keep little between requests, and a second isolate's nursery grown to the default is that
 * much more of the process's RSS for nothing (the discovery suite's RSS grew 102 MB with the
 * default here, against its 100 MB goal).
 */
const STORE_THREAD_LIMITS = { maxYoungGenerationSizeMb: 8 }

/** How long the thread may take to load its modules and bind both ports. */
const STARTUP_MS = 30_000

type FromThread = { t: 'ready'; dynamoEndpoint: string; s3Endpoint: string } | { t: 'failed'; message: string } | { t: 'closed' }

export interface EmulatorThread extends Emulators {
  /** The thread itself (its `threadId`, and `terminate()` for what a crash looks like). */
  readonly thread: Worker
}

export function startEmulatorThread(
  opts: EmulatorOptions,
  hooks: {
    /** The thread ended without being asked to: the stores are gone until the service restarts. */
    onCrash?: (error: Error) => void
  } = {},
): Promise<EmulatorThread> {
  const thread = startWorker(import.meta.url, { [EMULATOR_THREAD_MARK]: true, opts }, STORE_THREAD_LIMITS)
  let closing = false
  let closed: (() => void) | undefined
  return new Promise<EmulatorThread>((resolve, reject) => {
    let started = false
    const fail = (error: Error) => {
      if (!started) {
        started = true
        clearTimeout(timer)
        void thread.terminate()
        reject(new Error(`the embedded stores did not start: ${error.message}`, { cause: error }))
      } else if (!closing) {
        closing = true
        hooks.onCrash?.(error)
      }
    }
    const timer = setTimeout(() => fail(new Error(`not ready within ${STARTUP_MS / 1000} s`)), STARTUP_MS)
    thread.on('error', (e) => fail(e))
    thread.on('exit', (code) => {
      closed?.()
      fail(new Error(`the stores' thread ended (exit code ${code})`))
    })
    thread.on('message', (m: FromThread) => {
      if (m.t === 'failed') return fail(new Error(m.message))
      if (m.t === 'closed') return closed?.()
      if (m.t !== 'ready' || started) return
      started = true
      clearTimeout(timer)
      resolve({
        dynamoEndpoint: m.dynamoEndpoint,
        s3Endpoint: m.s3Endpoint,
        thread,
        async close() {
          if (closing) return void (await thread.terminate())
          closing = true
          await new Promise<void>((r) => {
            closed = r
            thread.postMessage('close')
          })
          await thread.terminate()
        },
      })
    })
  })
}

if (!isMainThread && (workerData as { [EMULATOR_THREAD_MARK]?: boolean } | undefined)?.[EMULATOR_THREAD_MARK]) {
  const port = parentPort!
  const send = (m: FromThread) => port.postMessage(m)
  try {
    const emulators = await startEmulators((workerData as { opts: EmulatorOptions }).opts)
    port.on('message', async () => {
      await emulators.close()
      send({ t: 'closed' })
    })
    send({ t: 'ready', dynamoEndpoint: emulators.dynamoEndpoint, s3Endpoint: emulators.s3Endpoint })
  } catch (e) {
    send({ t: 'failed', message: (e as Error).message })
  }
}
