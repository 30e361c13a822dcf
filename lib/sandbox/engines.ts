/**
 * The QuickJS engines: WebAssembly modules loaded lazily (never at cold start of a request that
 * runs no script), each with ONE long-lived runtime on which every run makes a fresh context.
 *
 * Memory: quickjs-emscripten 0.32's `setMemoryLimit` bounds one allocation, not a runtime's total
 * (upstream #255, #271: Emscripten reports no usable size, so nothing accumulates), and WebAssembly
 * memory never shrinks. So each engine gets a WebAssembly.Memory of its own whose `maximum` is the
 * ceiling (the memory limit + the engine's own overhead): past it `malloc` fails and
 * QuickJS throws "out of memory" — a real limit on the total, whatever allocates it. An engine whose
 * memory grew past start + margin is retired after its run and its module dropped whole, which is
 * the only way to give the memory back.
 *
 * - One sync-build engine runs scripts that make no host call (about 2.5× cheaper per run).
 * - A small pool of asyncify-build engines runs scripts that call `vance.tools.*`. Only one
 *   asyncified call can be suspended per WebAssembly module, so each engine runs one script at a
 *   time; top-level runs queue for a free engine, nested runs (a script called by a script) get
 *   an engine of their own, so a parent waiting on its child can never deadlock the pool.
 *
 * Known traps with quickjs-emscripten 0.32 that shape this file: `module.newContext()` leaks ~64 KB
 * per call in the asyncify build, and disposing an async runtime after adding host functions
 * throws — so runtimes are never disposed; an engine that failed inside WebAssembly (e.g. the host
 * stack overflowed in native recursion) is dropped whole and a new one is made.
 */
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import {
  newQuickJSAsyncWASMModuleFromVariant,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSAsyncRuntime,
  type QuickJSAsyncWASMModule,
  type QuickJSRuntime,
  type QuickJSWASMModule,
  RELEASE_ASYNC,
  RELEASE_SYNC,
} from 'quickjs-emscripten'
import { KIB, MIB, type SandboxLimits } from './limits'

/** What the interrupt handler consults; one per run, installed on the engine for its duration. */
export interface Interruptible {
  shouldInterrupt(): boolean
}

interface EngineBase {
  readonly id: number
  /** Set when the WebAssembly instance can no longer be trusted; the engine is then replaced. */
  broken: boolean
  busy: boolean
  current: Interruptible | undefined
  /** WebAssembly memory after the warm-up, and how far past it the engine may grow before it is retired. */
  baseBytes: number
  margin: number
  memory: MemoryGauge
  /** Total runs, for stats. */
  runs: number
  /** Retire the engine after its run: its memory grew past the margin, or the run left work behind (pending jobs). */
  retire: boolean
}
export interface SyncEngine extends EngineBase {
  kind: 'sync'
  module: QuickJSWASMModule
  runtime: QuickJSRuntime
}
export interface AsyncEngine extends EngineBase {
  kind: 'async'
  module: QuickJSAsyncWASMModule
  runtime: QuickJSAsyncRuntime
}
export type Engine = SyncEngine | AsyncEngine

export interface EngineStats {
  kind: 'sync' | 'async'
  id: number
  busy: boolean
  runs: number
  /** Size of the WebAssembly linear memory (it only grows). */
  wasmBytes: number
  /** Bytes QuickJS holds in its heap right now. */
  quickjsBytes: number
}

let nextId = 1

const PAGE = 64 * KIB
/** What these builds start with (Emscripten's INITIAL_MEMORY); QuickJS plus the warm-up fit in it. */
const INITIAL_MEMORY = 16 * MIB

/** How far an engine's memory may grow before it is retired after its run: a quarter of the limit, at least 4 MiB. */
export const recycleMargin = (limits: SandboxLimits) => Math.max(4 * MIB, Math.ceil(limits.memoryBytes / 4 / PAGE) * PAGE)

/**
 * What an engine holds besides the script's heap: Emscripten's 5 MiB stack and static data (measured:
 * 10.8 of the first 16 MiB are left for the heap, both builds).
 */
const ENGINE_OVERHEAD = 6 * MIB

/**
 * The memory one engine may ever have: the script's limit plus the engine's own overhead (never
 * less than the builds' initial 16 MiB), so a run that holds more than about `memoryBytes` fails.
 */
export const memoryCeiling = (limits: SandboxLimits) =>
  Math.max(INITIAL_MEMORY, Math.ceil((limits.memoryBytes + ENGINE_OVERHEAD) / PAGE) * PAGE)

/** A WebAssembly.Memory (the project's lib setting does not type it). */
type WasmMemory = ReturnType<QuickJSWASMModule['getWasmMemory']>

/** Counts the growths refused at the ceiling: how a run learns that it ran out of memory (QuickJS then may throw only `null`). */
export interface MemoryGauge {
  refused: number
}

/**
 * Emscripten grows the memory through this object's own `grow` (and takes a refusal as malloc
 * failing); the wrapper only counts refusals.
 */
function boundedMemory(limits: SandboxLimits, gauge: MemoryGauge): WasmMemory {
  const memory = new wasm.Memory({ initial: INITIAL_MEMORY / PAGE, maximum: memoryCeiling(limits) / PAGE })
  const grow = memory.grow.bind(memory)
  memory.grow = (pages: number) => {
    try {
      return grow(pages)
    } catch (e) {
      gauge.refused++
      throw e
    }
  }
  return memory
}

/** After its run: should this engine be dropped rather than reused? */
export function outgrown(engine: Engine): boolean {
  return engine.module.getWasmMemory().buffer.byteLength > engine.baseBytes + engine.margin
}

function configure(runtime: QuickJSRuntime, engine: { current: Interruptible | undefined }, limits: SandboxLimits) {
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  // Installed once; reads the run in progress, so a run never sees another run's budget.
  runtime.setInterruptHandler(() => (engine.current ? engine.current.shouldInterrupt() : false))
}

// Node's global WebAssembly (the project's lib setting types the namespace, not the value).
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<WebAssembly.Module>
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory
    }
  }
).WebAssembly

/** Each build is compiled once per thread; every engine instantiates it (cheap) with a memory of its own. */
const compiled = new Map<string, Promise<WebAssembly.Module | undefined>>()
function compiledBuild(pkg: string): Promise<WebAssembly.Module | undefined> {
  let module = compiled.get(pkg)
  if (!module) {
    module = (async () => {
      try {
        return await wasm.compile(await readFile(createRequire(import.meta.url).resolve(`${pkg}/wasm`)))
      } catch {
        return undefined // bundled layouts where the .wasm can't be resolved: let Emscripten locate it
      }
    })()
    compiled.set(pkg, module)
  }
  return module
}

async function variant<V extends typeof RELEASE_SYNC | typeof RELEASE_ASYNC>(
  base: V,
  pkg: string,
  limits: SandboxLimits,
  gauge: MemoryGauge,
): Promise<V> {
  const wasmModule = await compiledBuild(pkg)
  return newVariant(base, { ...(wasmModule ? { wasmModule } : {}), wasmMemory: boundedMemory(limits, gauge) }) as V
}

/**
 * A fresh WebAssembly instance runs its first script 10–50× slower than later ones while V8
 * compiles the functions it touches; that cost is paid here, not out of a script's timeout.
 */
const WARM_UP = `var o = { a: [1, "x", true, null], b: { c: 1.5 } };
JSON.parse(JSON.stringify(o)).a.map(function (x) { return String(x); }).join(",").replace(/x/g, "y").length +
Object.keys(o).length + new Map([[1, 2]]).size + (function f(n) { return n ? f(n - 1) : 0; })(20)`

const fresh = (limits: SandboxLimits, memory: MemoryGauge) => ({
  memory,
  broken: false,
  retire: false,
  busy: false,
  current: undefined,
  runs: 0,
  baseBytes: INITIAL_MEMORY,
  margin: recycleMargin(limits),
})

export async function createSyncEngine(limits: SandboxLimits): Promise<SyncEngine> {
  const memory: MemoryGauge = { refused: 0 }
  const module = await newQuickJSWASMModuleFromVariant(variant(RELEASE_SYNC, '@jitl/quickjs-wasmfile-release-sync', limits, memory))
  const runtime = module.newRuntime()
  const engine: SyncEngine = { kind: 'sync', id: nextId++, module, runtime, ...fresh(limits, memory) }
  configure(runtime, engine, limits)
  const ctx = runtime.newContext()
  try {
    const r = ctx.evalCode(WARM_UP, 'warm-up.js')
    ;(r.error ?? r.value).dispose()
  } finally {
    ctx.dispose()
  }
  engine.baseBytes = module.getWasmMemory().buffer.byteLength
  return engine
}

export async function createAsyncEngine(limits: SandboxLimits): Promise<AsyncEngine> {
  const memory: MemoryGauge = { refused: 0 }
  const module = await newQuickJSAsyncWASMModuleFromVariant(
    variant(RELEASE_ASYNC, '@jitl/quickjs-wasmfile-release-asyncify', limits, memory),
  )
  const runtime = module.newRuntime()
  const engine: AsyncEngine = { kind: 'async', id: nextId++, module, runtime, ...fresh(limits, memory) }
  configure(runtime, engine, limits)
  const ctx = runtime.newContext()
  try {
    const host = ctx.newAsyncifiedFunction('host', async () => ctx.newString('1'))
    ctx.setProp(ctx.global, 'host', host)
    host.dispose()
    const r = await ctx.evalCodeAsync(`host() + ${WARM_UP}`, 'warm-up.js', 0)
    ;(r.error ?? r.value).dispose()
  } finally {
    ctx.dispose()
  }
  engine.baseBytes = module.getWasmMemory().buffer.byteLength
  return engine
}

export function engineStats(engine: Engine): EngineStats {
  let quickjsBytes = -1
  if (!engine.busy && !engine.broken) {
    const usage = engine.runtime.computeMemoryUsage()
    const ctx = engine.runtime.context // computeMemoryUsage allocates the runtime's system context
    try {
      quickjsBytes = ctx ? (ctx.dump(usage) as { memory_used_size: number }).memory_used_size : -1
    } finally {
      usage.dispose()
    }
  }
  return {
    kind: engine.kind,
    id: engine.id,
    busy: engine.busy,
    runs: engine.runs,
    wasmBytes: engine.module.getWasmMemory().buffer.byteLength,
    quickjsBytes,
  }
}

/** The one sync engine: made on first use, replaced when broken. Runs are synchronous, so never shared mid-run. */
export class SyncEngineHolder {
  private engine: Promise<SyncEngine> | undefined
  constructor(private readonly limits: SandboxLimits) {}

  get(): Promise<SyncEngine> {
    this.engine ??= createSyncEngine(this.limits).catch((e) => {
      this.engine = undefined
      throw e
    })
    return this.engine
  }

  /** Drops a broken engine; the next get() loads a fresh one. */
  discard(engine: SyncEngine) {
    engine.broken = true
    void this.engine?.then((e) => {
      if (e === engine) this.engine = undefined
    })
  }

  async all(): Promise<SyncEngine[]> {
    return this.engine ? [await this.engine] : []
  }
}

export class NoEngineFreeError extends Error {}

/**
 * Async engines. `size` engines serve top-level runs (others queue, FIFO); a nested run never
 * waits — it takes a free engine or makes one, up to `hardCap` engines in all.
 */
export class AsyncEnginePool {
  private readonly engines: AsyncEngine[] = []
  private creating = 0
  private readonly waiters: { resolve: (e: AsyncEngine) => void; reject: (e: unknown) => void }[] = []

  constructor(
    private readonly limits: SandboxLimits,
    private readonly size: number,
    private readonly hardCap: number,
  ) {}

  /** Top-level runs holding an engine (nested ones never make a top-level run wait for theirs). */
  private topLevel = 0

  async acquire(nested: boolean): Promise<AsyncEngine> {
    const engine = await this.take(nested)
    if (!nested) this.topLevel++
    return engine
  }

  /** Gives back an engine acquired with the same `nested`; true when it was retired (see `outgrown`) rather than kept. */
  release(engine: AsyncEngine, nested: boolean): boolean {
    if (!nested) this.topLevel--
    return this.giveBack(engine)
  }

  private async take(nested: boolean): Promise<AsyncEngine> {
    const free = this.engines.find((e) => !e.busy && !e.broken)
    if (free) {
      free.busy = true
      return free
    }
    const live = this.engines.length + this.creating
    if (live < this.hardCap && (nested || this.topLevel < this.size)) return this.make()
    if (nested) throw new NoEngineFreeError(`all ${this.hardCap} sandbox engines are busy`)
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
  }

  private giveBack(engine: AsyncEngine): boolean {
    engine.current = undefined
    const retired = !engine.broken && (engine.retire || outgrown(engine))
    if (retired) engine.broken = true
    if (engine.broken || (this.engines.length > this.size && this.waiters.length === 0)) {
      // Dropped, never disposed (disposing an async runtime with host functions throws); the GC takes it.
      this.engines.splice(this.engines.indexOf(engine), 1)
      const waiter = this.waiters.shift()
      if (waiter) this.make().then(waiter.resolve, waiter.reject)
      return retired
    }
    const waiter = this.waiters.shift()
    if (waiter)
      waiter.resolve(engine) // stays busy: handed straight over
    else engine.busy = false
    return false
  }

  all(): AsyncEngine[] {
    return [...this.engines]
  }

  private async make(): Promise<AsyncEngine> {
    this.creating++
    try {
      const engine = await createAsyncEngine(this.limits)
      engine.busy = true
      this.engines.push(engine)
      return engine
    } finally {
      this.creating--
    }
  }
}
