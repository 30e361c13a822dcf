/**
 * The YAML parse workers: texts too long to parse on the thread that serves requests
 * (yaml-parsing.ts decides which) are parsed here, in `node:worker_threads` workers, with the
 * sandbox's design (lib/sandbox/quickjs.ts, scheduler.ts) and its shared parts:
 *
 * - **Fair places** (lib/runtime/fair-queue.ts): `workers` parses at once, `tenantConcurrency`
 *   per tenant, bounded queues served round-robin between tenants; a wait longer than the
 *   parse's deadline, or a full queue, is OVERLOADED (503 with Retry-After).
 * - **A hard deadline and a heap cap** (WORK_BUDGETS.yamlParseMs, yamlParseHeap): a parse that
 *   passes its deadline has its worker terminated; a worker that runs out of heap dies. Either
 *   way the parse is refused as over its budget (a 400 / 422 naming the limit, like every other
 *   work budget) and the next parse gets a fresh worker.
 * - **Plain data back**: the worker runs the same parseYaml (depth scan, duplicate keys, alias
 *   charging) and answers the data with the positions of its syntax tree (YamlPositions), or the
 *   issues with their lines and columns — so the answers are the same as an inline parse's.
 *
 * Workers start on the first long text (this module is itself loaded then, never at cold start),
 * one per place at most, and never hold the process open while idle. A worker is this module
 * evaluated again with a marker in `workerData` (lib/runtime/threads.ts).
 */
import { isMainThread, type MessagePort, parentPort, type Worker, workerData } from 'node:worker_threads'
import type { Issue } from '../errors'
import { formatCount } from '../runtime/count-format'
import { FairQueue, overloaded } from '../runtime/fair-queue'
import { startWorker } from '../runtime/threads'
import { parseYaml, type YamlParsing, type YamlPositions, type YamlResult, yamlModule, yamlPositions } from './yaml'
import { parseLimits, type YamlParseStats, type YamlWorkerSettings } from './yaml-parsing'

/** Marks workerData as ours, so that this module loaded in some other worker never starts serving. */
export const YAML_WORKER_MARK = 'server-tools.yaml-parse-worker'

/** How long a new worker may take to load before its first parse's deadline starts. */
const STARTUP_ALLOWANCE_MS = 30_000

type ToWorker = { id: number; text: string; path?: string }
type Answer = { ok: true; data: unknown; positions?: YamlPositions } | { ok: false; issues: Issue[]; overBudget?: true }
type FromWorker = { t: 'ready' } | { t: 'done'; id: number; answer: Answer } | { t: 'failed'; id: number; message: string }

/** Why a parse ended without an answer of the worker's. */
type Lost = { lost: 'deadline' | 'heap' | 'failed'; message?: string }

class ParseWorker {
  dead = false
  private ready = false
  private readonly worker: Worker
  private job: { id: number; resolve: (a: Answer | Lost) => void; timer?: NodeJS.Timeout; deadlineMs: number; post: () => void } | undefined
  private nextId = 1

  constructor(
    heapMb: number,
    private readonly onDeath: (w: ParseWorker) => void,
  ) {
    this.worker = startWorker(import.meta.url, { [YAML_WORKER_MARK]: true }, { maxOldGenerationSizeMb: heapMb })
    this.worker.on('message', (m: FromWorker) => this.receive(m))
    this.worker.on('error', (e) => {
      const code = (e as { code?: string }).code
      this.end(code === 'ERR_WORKER_OUT_OF_MEMORY' ? { lost: 'heap' } : { lost: 'failed', message: e.message })
    })
    this.worker.on('exit', () => this.end({ lost: 'failed', message: 'the parse worker stopped' }))
    this.worker.unref()
  }

  parse(text: string, path: string | undefined, deadlineMs: number): Promise<Answer | Lost> {
    return new Promise((resolve) => {
      const id = this.nextId++
      const post = () => {
        this.arm(deadlineMs, 'deadline')
        this.worker.postMessage({ id, text, path } satisfies ToWorker)
      }
      this.job = { id, resolve, deadlineMs, post }
      if (this.ready) post()
      else this.arm(STARTUP_ALLOWANCE_MS, 'failed')
    })
  }

  stop() {
    if (this.dead) return
    this.dead = true
    void this.worker.terminate()
  }

  private arm(ms: number, why: Lost['lost']) {
    const job = this.job!
    clearTimeout(job.timer)
    job.timer = setTimeout(
      () => this.end({ lost: why, message: why === 'failed' ? `the parse worker did not start within ${ms} ms` : undefined }),
      ms,
    )
  }

  private receive(m: FromWorker) {
    if (m.t === 'ready') {
      this.ready = true
      this.job?.post()
      return
    }
    if (!this.job || this.job.id !== m.id) return
    const job = this.job
    this.job = undefined
    clearTimeout(job.timer)
    job.resolve(m.t === 'done' ? m.answer : { lost: 'failed', message: m.message })
  }

  /** The worker is gone (or must go): its parse, if any, ends with why. */
  private end(why: Lost) {
    const job = this.job
    this.job = undefined
    if (job) {
      clearTimeout(job.timer)
      job.resolve(why)
    }
    if (!this.dead) {
      this.stop()
      this.onDeath(this)
    }
  }
}

export class YamlWorkerPool implements YamlParsing {
  private readonly places: FairQueue
  private readonly idle: ParseWorker[] = []
  private readonly deadlineMs: number
  private readonly heapMb: number
  private readonly counts = { offThread: 0, refusedDeadline: 0, refusedHeap: 0, workersStarted: 0 }

  constructor(settings: YamlWorkerSettings = {}) {
    const { deadlineMs, heapMb } = parseLimits(settings)
    this.deadlineMs = deadlineMs
    this.heapMb = heapMb
    const slots = settings.workers ?? 2
    this.places = new FairQueue(
      {
        slots,
        tenantSlots: Math.min(slots, settings.tenantConcurrency ?? 1),
        tenantQueue: settings.tenantQueue ?? 8,
        queue: settings.queue ?? 64,
      },
      { busy: 'YAML parsing is busy', things: 'documents', late: (ms) => `the document could not be parsed within ${ms} ms` },
    )
  }

  async parse(text: string, at: { tenant: string; path?: string; signal?: AbortSignal }): Promise<YamlResult> {
    const release = await this.places.enter(at.tenant, this.deadlineMs, at.signal)
    // the caller went away while waiting: nobody reads this answer
    if (!release) throw overloaded('the request ended before its body was parsed', 1)
    // each place holds at most one worker: there are never more workers than places
    const worker = this.idle.pop() ?? this.start()
    try {
      this.counts.offThread++
      const answer = await worker.parse(text, at.path, this.deadlineMs)
      if ('ok' in answer) return answer.ok ? { ok: true, value: { data: answer.data, positions: answer.positions } } : answer
      return this.refused(answer, at.path)
    } finally {
      if (!worker.dead) this.idle.push(worker)
      release()
    }
  }

  stats(): Omit<YamlParseStats, 'inline'> {
    return { ...this.counts, running: this.places.running, queued: this.places.waiting }
  }

  async close(): Promise<void> {
    for (const w of this.idle.splice(0)) w.stop()
  }

  private start(): ParseWorker {
    this.counts.workersStarted++
    return new ParseWorker(this.heapMb, (w) => {
      const i = this.idle.indexOf(w)
      if (i >= 0) this.idle.splice(i, 1)
    })
  }

  private refused(why: Lost, path?: string): YamlResult {
    if (why.lost === 'failed') throw new Error(`YAML parsing failed: ${why.message}`)
    const message =
      why.lost === 'deadline'
        ? `parsing the document took longer than its ${formatCount(this.deadlineMs)} ms budget (yamlParseMs); send it as JSON, or in smaller documents`
        : `parsing the document needed more than its ${this.heapMb} MiB heap budget (yamlParseHeap); send it as JSON, or in smaller documents`
    if (why.lost === 'deadline') this.counts.refusedDeadline++
    else this.counts.refusedHeap++
    return { ok: false, overBudget: true, issues: [{ path, message }] }
  }
}

export const createYamlPool = (settings: YamlWorkerSettings) => new YamlWorkerPool(settings)

/** The worker half: parse each text as the main thread would, answer plain data. */
function serve(port: MessagePort) {
  yamlModule() // loaded before the first deadline starts
  port.on('message', ({ id, text, path }: ToWorker) => {
    let m: FromWorker
    try {
      const r = parseYaml(text, path)
      const { doc, lines } = r.ok ? r.value : {}
      const positions = doc && lines ? yamlPositions(doc, lines) : undefined
      m = { t: 'done', id, answer: r.ok ? { ok: true, data: r.value.data, positions } : r }
      // the positions' arrays are handed over, not copied
      const arrays = positions ? Object.values(positions).filter((v): v is Int32Array | Uint8Array => ArrayBuffer.isView(v)) : []
      port.postMessage(
        m,
        arrays.map((a) => a.buffer as ArrayBuffer),
      )
    } catch (e) {
      port.postMessage({ t: 'failed', id, message: e instanceof Error ? e.message : String(e) } satisfies FromWorker)
    }
  })
  port.postMessage({ t: 'ready' } satisfies FromWorker)
}

// In a parse worker this module is the entry point: serve the main thread.
if (!isMainThread && parentPort && (workerData as Record<string, unknown> | null)?.[YAML_WORKER_MARK] === true) serve(parentPort)
