/**
 * The tenant work workers: YAML texts too long to parse on the thread that serves requests
 * (yaml-parsing.ts decides which) are parsed here, and tool-call validations too long to run there
 * (argument-validation.ts decides which) are run here, in `node:worker_threads` workers, with the
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
 *   issues with their lines and columns — so the answers are the same as an inline parse's. A
 *   validation runs the same interpreter with the same budget and answers its errors.
 *
 * Parses and validations have places of their own (a flood of one never queues the other), each
 * place at most one worker. Workers start on the first long text or validation (this module is
 * itself loaded then, never at cold start) and never hold the process open while idle. A worker is
 * this module evaluated again with a marker in `workerData` (lib/runtime/threads.ts).
 */
import { isMainThread, type MessagePort, parentPort, type Worker, workerData } from 'node:worker_threads'
import type { Issue } from '../errors'
import { BoundedCache } from '../runtime/bounded-cache'
import { formatCount } from '../runtime/count-format'
import { FairQueue, type FairQueueWords, overloaded } from '../runtime/fair-queue'
import { startWorker } from '../runtime/threads'
import type { ValidationAnswer, ValidationWorkers } from './argument-validation'
import type { JsonSchema } from './json-schema'
import { type InterpretedValidator, interpret } from './schema-interpreter'
import { parseYaml, type YamlParsing, type YamlPositions, type YamlResult, yamlModule, yamlPositions } from './yaml'
import { parseLimits, type YamlParseStats, type YamlWorkerSettings } from './yaml-parsing'

/** Marks workerData as ours, so that this module loaded in some other worker never starts serving. */
export const YAML_WORKER_MARK = 'server-tools.yaml-parse-worker'

/** How long a new worker may take to load before its first parse's deadline starts. */
const STARTUP_ALLOWANCE_MS = 30_000

type Job = { kind: 'parse'; text: string; path?: string } | { kind: 'validate'; schema: JsonSchema; value: unknown }
type ToWorker = Job & { id: number }
type ParseAnswer = { ok: true; data: unknown; positions?: YamlPositions } | { ok: false; issues: Issue[]; overBudget?: true }
type Answer = ParseAnswer | ValidationAnswer
type FromWorker = { t: 'ready' } | { t: 'done'; id: number; answer: Answer } | { t: 'failed'; id: number; message: string }

/** Why a parse ended without an answer of the worker's. */
type Lost = { lost: 'deadline' | 'heap' | 'failed'; message?: string }

class WorkWorker {
  dead = false
  private ready = false
  private readonly worker: Worker
  private job: { id: number; resolve: (a: Answer | Lost) => void; timer?: NodeJS.Timeout; deadlineMs: number; post: () => void } | undefined
  private nextId = 1

  constructor(
    heapMb: number,
    private readonly onDeath: (w: WorkWorker) => void,
  ) {
    this.worker = startWorker(import.meta.url, { [YAML_WORKER_MARK]: true }, { maxOldGenerationSizeMb: heapMb })
    this.worker.on('message', (m: FromWorker) => this.receive(m))
    this.worker.on('error', (e) => {
      const code = (e as { code?: string }).code
      this.end(code === 'ERR_WORKER_OUT_OF_MEMORY' ? { lost: 'heap' } : { lost: 'failed', message: e.message })
    })
    this.worker.on('exit', () => this.end({ lost: 'failed', message: 'the worker stopped' }))
    this.worker.unref()
  }

  run(job: Job, deadlineMs: number): Promise<Answer | Lost> {
    return new Promise((resolve) => {
      const id = this.nextId++
      const post = () => {
        this.arm(deadlineMs, 'deadline')
        this.worker.postMessage({ ...job, id } satisfies ToWorker)
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
      () => this.end({ lost: why, message: why === 'failed' ? `the worker did not start within ${ms} ms` : undefined }),
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

/** One kind of work's places (a fair queue) and the idle workers that hold them. */
class Places {
  /** Jobs given a place. */
  admitted = 0
  /** Workers started (the first ones and every replacement). */
  started = 0
  private readonly queue: FairQueue
  private readonly idle: WorkWorker[] = []

  constructor(
    slots: number,
    settings: YamlWorkerSettings,
    words: FairQueueWords,
    /** Why a job whose caller went away while it waited is refused. */
    private readonly gone: string,
    private readonly heapMb: number,
  ) {
    this.queue = new FairQueue(
      {
        slots,
        tenantSlots: Math.min(slots, settings.tenantConcurrency ?? 1),
        tenantQueue: settings.tenantQueue ?? 8,
        queue: settings.queue ?? 64,
      },
      words,
    )
  }

  get running() {
    return this.queue.running
  }

  /** Whether `tenant` would get a place or one to wait in (the fair queue's `hasRoom`). */
  hasRoom(tenant: string): boolean {
    return this.queue.hasRoom(tenant)
  }

  get waiting() {
    return this.queue.waiting
  }

  /** Runs `job` in one of `at.tenant`'s places. */
  async run(job: Job, at: { tenant: string; signal?: AbortSignal }, deadlineMs: number): Promise<Answer | Lost> {
    const release = await this.queue.enter(at.tenant, deadlineMs, at.signal)
    // the caller went away while waiting: nobody reads this answer
    if (!release) throw overloaded(this.gone, 1)
    this.admitted++
    // each place holds at most one worker: there are never more workers than places
    const worker = this.idle.pop() ?? this.start()
    try {
      return await worker.run(job, deadlineMs)
    } finally {
      if (!worker.dead) this.idle.push(worker)
      release()
    }
  }

  stop() {
    for (const w of this.idle.splice(0)) w.stop()
  }

  private start(): WorkWorker {
    this.started++
    return new WorkWorker(this.heapMb, (w) => {
      const i = this.idle.indexOf(w)
      if (i >= 0) this.idle.splice(i, 1)
    })
  }
}

export class YamlWorkerPool implements YamlParsing, ValidationWorkers {
  private readonly parses: Places
  private readonly validations: Places
  private readonly deadlineMs: number
  private readonly heapMb: number
  private readonly counts = { refusedDeadline: 0, refusedHeap: 0 }

  constructor(settings: YamlWorkerSettings = {}) {
    const { deadlineMs, heapMb } = parseLimits(settings)
    this.deadlineMs = deadlineMs
    this.heapMb = heapMb
    const slots = settings.workers ?? 2
    this.parses = new Places(
      slots,
      settings,
      { busy: 'YAML parsing is busy', things: 'documents', late: (ms) => `the document could not be parsed within ${ms} ms` },
      'the request ended before its body was parsed',
      heapMb,
    )
    this.validations = new Places(
      slots,
      settings,
      {
        busy: 'Validating tool arguments is busy',
        things: 'tool calls',
        late: (ms) => `the arguments could not be validated within ${ms} ms`,
      },
      'the call ended before its arguments were validated',
      heapMb,
    )
  }

  async parse(text: string, at: { tenant: string; path?: string; signal?: AbortSignal }): Promise<YamlResult> {
    const answer = await this.parses.run({ kind: 'parse', text, path: at.path }, at, this.deadlineMs)
    if ('ok' in answer) return answer.ok ? { ok: true, value: { data: answer.data, positions: answer.positions } } : answer
    if ('valid' in answer) throw new Error('a parse worker answered a validation')
    return this.refused(answer, at.path)
  }

  async validate(schema: JsonSchema, value: unknown, at: { tenant: string; signal?: AbortSignal }): Promise<ValidationAnswer | undefined> {
    if (!this.validations.hasRoom(at.tenant)) return undefined
    const answer = await this.validations.run({ kind: 'validate', schema, value }, at, this.deadlineMs)
    if ('valid' in answer) return answer
    if ('ok' in answer) throw new Error('a validation worker answered a parse')
    if (answer.lost === 'failed') throw new Error(`validating the arguments failed: ${answer.message}`)
    // a validation is bounded by its steps; a worker lost to the deadline or its heap is the same refusal
    return {
      valid: false,
      steps: 0,
      errors: [
        {
          keyword: 'budget',
          instancePath: '',
          schemaPath: '#',
          params: {},
          message: `is too costly to validate against this schema (over its ${answer.lost === 'deadline' ? `${formatCount(this.deadlineMs)} ms` : `${this.heapMb} MiB heap`} budget)`,
        },
      ],
    }
  }

  stats(): Omit<YamlParseStats, 'inline'> {
    return {
      offThread: this.parses.admitted,
      ...this.counts,
      workersStarted: this.parses.started + this.validations.started,
      running: this.parses.running,
      queued: this.parses.waiting,
    }
  }

  /** Validations handed to a worker, and those running or waiting now (argument-validation.ts). */
  validationStats() {
    return { offThread: this.validations.admitted, running: this.validations.running, queued: this.validations.waiting }
  }

  async close(): Promise<void> {
    this.parses.stop()
    this.validations.stop()
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

/** The worker half: parse each text and run each validation as the main thread would, answer plain data. */
function serve(port: MessagePort) {
  yamlModule() // loaded before the first deadline starts
  // a tenant's flood sends one schema again and again: its validator (patterns compiled) is kept
  const validators = new BoundedCache<string, InterpretedValidator>(64)
  port.on('message', (job: ToWorker) => {
    const { id } = job
    let m: FromWorker
    try {
      if (job.kind === 'validate') {
        const key = JSON.stringify(job.schema)
        let validate = validators.get(key)
        if (!validate) validators.set(key, (validate = interpret(job.schema)))
        const valid = validate(job.value)
        port.postMessage({
          t: 'done',
          id,
          answer: { valid, errors: validate.errors ?? null, steps: validate.steps ?? 0 },
        } satisfies FromWorker)
        return
      }
      const { text, path } = job
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
