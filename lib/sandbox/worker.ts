/**
 * The worker half of the sandbox: a thread that owns QuickJS engines (an InProcessSandbox) and runs
 * one script at a time for the main thread (quickjs.ts), which may terminate it at any moment.
 *
 * Everything crossing the thread boundary is JSON text or plain data built from it: the request's
 * inputs, sibling params and sibling outcomes travel as JSON strings. A script's host calls
 * (`vance.tools.*`) are posted to the main thread, which runs them through the run's own
 * `host.tools` and posts the answer back; meanwhile the asyncify engine stays suspended on a
 * promise and this thread's event loop is free to receive it.
 */
import type { MessagePort } from 'node:worker_threads'
import type { SiblingTools, ToolOutcome } from '../calls/outcome'
import type { SandboxRequest, SandboxResult } from './execute'
import { InProcessSandbox, type SandboxStats } from './in-process'
import type { SandboxLimits } from './limits'

/** Marks workerData as ours, so that a module loaded in some other worker never starts serving. */
export const WORKER_MARK = 'vance.quickjs-sandbox-worker'

export interface WorkerSetup {
  [WORKER_MARK]: true
  limits: SandboxLimits
  useSyncBuild: boolean
  /** Load the sync engine as the thread starts, so that its first script does not wait for WebAssembly. */
  prepare?: boolean
}

export interface WireRequest {
  source: string
  /** JSON text of the inputs. */
  inputs?: string
  timeoutMs: number
  filename?: string
  host?: { context: { tenant: string; project: string; processId?: string }; depth: number }
}

export type HostOp = { op: 'call'; name: string; params: string } | { op: 'list' } | { op: 'has'; name: string }

/** A host call's answer: JSON text, or a message when the main thread's tools threw. */
export type HostAnswer = { json: string } | { thrown: string }

export type ToWorker =
  | { t: 'run'; id: number; req: WireRequest }
  | { t: 'answer'; id: number; callId: number; answer: HostAnswer }
  | { t: 'stats'; id: number }
  | { t: 'cancel'; id: number }

export type FromWorker =
  | { t: 'started'; id: number }
  | { t: 'done'; id: number; result: SandboxResult }
  | { t: 'failed'; id: number; message: string }
  | { t: 'host'; id: number; callId: number; call: HostOp }
  | { t: 'stats'; id: number; stats: SandboxStats }

export function isWorkerSetup(data: unknown): data is WorkerSetup {
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>)[WORKER_MARK] === true
}

/** A sibling outcome whose content is not JSON: siblingCall's JSON.stringify then refuses it as the in-process path did. */
const NOT_JSON = {
  toJSON() {
    throw new TypeError('not JSON')
  },
}

export function serveWorker(port: MessagePort, setup: WorkerSetup) {
  const runIds = new Map<SandboxRequest, number>()
  const cancels = new Map<number, AbortController>()
  const sandbox = new InProcessSandbox({
    ...setup.limits,
    asyncEngines: 1,
    useSyncBuild: setup.useSyncBuild,
    onStarted: (req) => {
      const id = runIds.get(req)
      if (id !== undefined) post({ t: 'started', id })
    },
  })
  if (setup.prepare) void sandbox.prepare()
  const pending = new Map<number, { resolve: (a: HostAnswer) => void }>()
  let nextCall = 1
  const post = (m: FromWorker) => port.postMessage(m)

  const ask = (id: number, call: HostOp): Promise<HostAnswer> =>
    new Promise((resolve) => {
      const callId = nextCall++
      pending.set(callId, { resolve })
      post({ t: 'host', id, callId, call })
    })
  const unwrap = async (answer: Promise<HostAnswer>): Promise<unknown> => {
    const a = await answer
    if ('thrown' in a) throw new Error(a.thrown)
    return JSON.parse(a.json)
  }

  function toolsFor(id: number): SiblingTools {
    const call = async (name: string, params: unknown): Promise<ToolOutcome> => {
      const a = await ask(id, { op: 'call', name, params: JSON.stringify(params ?? {}) })
      if ('thrown' in a) throw new Error(a.thrown)
      const wire = JSON.parse(a.json) as { isError?: boolean; content?: unknown; notJson?: true }
      return { isError: wire.isError === true, content: wire.notJson ? NOT_JSON : wire.content } as ToolOutcome
    }
    return {
      call,
      delegate: call,
      list: () => unwrap(ask(id, { op: 'list' })) as Promise<string[]>,
      has: (name) => unwrap(ask(id, { op: 'has', name })) as Promise<boolean>,
    }
  }

  port.on('message', (m: ToWorker) => {
    if (m.t === 'answer') {
      const p = pending.get(m.callId)
      pending.delete(m.callId)
      p?.resolve(m.answer)
    } else if (m.t === 'stats') {
      // Only where the process was started with --expose-gc (the memory test): its samples must
      // see this thread's heap collected too, not just the main thread's.
      ;(globalThis as { gc?: () => void }).gc?.()
      sandbox.stats().then(
        (stats) => post({ t: 'stats', id: m.id, stats }),
        () => post({ t: 'stats', id: m.id, stats: { engines: [], enginesReplaced: 0, enginesRetired: 0 } }),
      )
    } else if (m.t === 'cancel') {
      cancels.get(m.id)?.abort()
    } else if (m.t === 'run') {
      const { req: wire, id } = m
      const cancel = new AbortController()
      cancels.set(id, cancel)
      const req: SandboxRequest = {
        signal: cancel.signal,
        source: wire.source,
        inputs: wire.inputs === undefined ? undefined : (JSON.parse(wire.inputs) as Record<string, unknown>),
        timeoutMs: wire.timeoutMs,
        filename: wire.filename,
        host: wire.host && { tools: toolsFor(id), context: wire.host.context, depth: wire.host.depth },
      }
      runIds.set(req, id)
      sandbox
        .run(req)
        .then(
          (result) => post({ t: 'done', id, result }),
          (e) => post({ t: 'failed', id, message: e instanceof Error ? e.message : String(e) }),
        )
        .finally(() => {
          runIds.delete(req)
          cancels.delete(id)
        })
    }
  })
}
