/**
 * Which YAML texts leave the thread that serves requests (issue 21 build item 3). The `yaml`
 * package costs 2–4 µs a character for the worst layouts (a 64 KiB flow sequence of one-digit
 * items: 180–350 ms of CPU, measured on the 2-core test machine under load), so one tenant's
 * 64 KiB bodies stalled every other tenant. Texts up to `inlineChars` (a worst case of ~3–6 ms)
 * are parsed here, so the common small document and a cold start pay nothing for a worker; longer
 * ones go to the parse workers (lib/config/yaml-pool.ts, loaded by the first of them), which
 * share their places fairly between tenants and stop a parse at its deadline and heap cap.
 */
import type { ValidationWorkers } from './argument-validation'
import { WORK_BUDGETS } from './expansion-budget'
import { parseJsonInSlices } from './json-slices'
import { MAX_YAML_BYTES, parseYaml, type YamlParsing, type YamlResult } from './yaml'

/** Longest text parsed on the calling thread: ~3–6 ms for the worst layouts measured (docs/reference/limits.md). */
export const INLINE_YAML_CHARS = 2 * 1024

/** How the parse workers are shared and bounded; deployment settings (functions/settings.ts). */
export interface YamlWorkerSettings {
  /** Longest text parsed inline (default INLINE_YAML_CHARS). */
  inlineChars?: number
  /** Parse workers (default 2): parses at once across tenants. */
  workers?: number
  /** Parses one tenant may have at once (default 1). */
  tenantConcurrency?: number
  /** Parses one tenant may have waiting (default 8). */
  tenantQueue?: number
  /** Parses waiting across tenants (default 64). */
  queue?: number
  /** A parse's deadline (default WORK_BUDGETS.yamlParseMs). */
  deadlineMs?: number
  /** A parse worker's heap cap in MiB (default WORK_BUDGETS.yamlParseHeap). */
  heapMb?: number
}

export interface YamlParseStats {
  /** Texts parsed on the calling thread. */
  inline: number
  /** Texts handed to a parse worker. */
  offThread: number
  /** Parses refused at their deadline (the worker terminated and replaced). */
  refusedDeadline: number
  /** Parses refused at the heap cap (the worker died and was replaced). */
  refusedHeap: number
  /** Workers started (the first ones and every replacement). */
  workersStarted: number
  /** Parses holding a place (a worker) right now. */
  running: number
  /** Parses waiting for a place right now. */
  queued: number
}

/** The workers' pool: YAML parses, and validations too long for the shared thread (argument-validation.ts). */
export type WorkPool = YamlParsing &
  ValidationWorkers & {
    stats(): Omit<YamlParseStats, 'inline'>
    validationStats(): { offThread: number; running: number; queued: number }
    close(): Promise<void>
  }

/** The pool's code (lib/config/yaml-pool.ts), loaded by the caller: the composition root owns the dynamic import. */
export type YamlPoolModule = () => Promise<{ createYamlPool(settings: YamlWorkerSettings): WorkPool }>

export interface OffThreadYaml extends YamlParsing {
  stats(): YamlParseStats
  /** The pool, started by its first use (a long text here, or a validation handed over). */
  workers(): Promise<WorkPool>
  /** Stops the workers (tests; a process that exits does not need it: idle workers never hold it open). */
  close(): Promise<void>
}

const NOTHING_YET = { offThread: 0, refusedDeadline: 0, refusedHeap: 0, workersStarted: 0, running: 0, queued: 0 }

export function offThreadYaml(load: YamlPoolModule, settings: YamlWorkerSettings = {}): OffThreadYaml {
  const inlineChars = settings.inlineChars ?? INLINE_YAML_CHARS
  let pool: Promise<WorkPool> | undefined
  let built: WorkPool | undefined
  let inline = 0
  const workers = () => {
    pool ??= load().then((m) => (built = m.createYamlPool(settings)))
    return pool
  }
  return {
    async parse(text, at): Promise<YamlResult> {
      if (text.length <= inlineChars) {
        inline++
        return parseYaml(text, at.path)
      }
      // a JSON text past the YAML limit is parsed natively, never by the YAML parser, and in slices
      // (1 MiB is ~10 ms of scan and parse, given back to the event loop every 64 KiB)
      if (text.length > MAX_YAML_BYTES && /^\s*[[{]/.test(text)) {
        inline++
        const parsed = await parseJsonInSlices(text, { path: at.path })
        if (parsed.ok) return { ok: true, value: { data: parsed.value } }
        return { ok: false, issues: ['issue' in parsed ? parsed.issue : { path: at.path, message: 'the document is not valid JSON' }] }
      }
      return (await workers()).parse(text, at)
    },
    stats: () => ({ inline, ...(built?.stats() ?? NOTHING_YET) }),
    workers,
    close: async () => {
      if (pool) await (await pool).close()
    },
  }
}

/** The deadline and heap cap of one parse, as their budgets name them. */
export const parseLimits = (settings: YamlWorkerSettings) => ({
  deadlineMs: settings.deadlineMs ?? WORK_BUDGETS.yamlParseMs.limit,
  heapMb: settings.heapMb ?? WORK_BUDGETS.yamlParseHeap.limit,
})
