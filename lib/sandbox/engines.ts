/**
 * The QuickJS engines: WebAssembly modules loaded lazily (never at cold start of a request that
 * runs no script), each with ONE long-lived runtime on which every run makes a fresh context.
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
  RELEASE_ASYNC,
  RELEASE_SYNC,
  type QuickJSAsyncRuntime,
  type QuickJSAsyncWASMModule,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten'
import type { SandboxLimits } from './limits'

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
  /** Total runs, for stats. */
  runs: number
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

function configure(runtime: QuickJSRuntime, engine: { current: Interruptible | undefined }, limits: SandboxLimits) {
  runtime.setMemoryLimit(limits.memoryBytes)
  runtime.setMaxStackSize(limits.stackBytes)
  // Installed once; reads the run in progress, so a run never sees another run's budget.
  runtime.setInterruptHandler(() => (engine.current ? engine.current.shouldInterrupt() : false))
}

// Node's global WebAssembly (the project's lib setting types the namespace, not the value).
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly

/** Compiles the asyncify build once per process; every async engine instantiates it (cheap). */
let asyncVariant: Promise<typeof RELEASE_ASYNC> | undefined
function asyncifyVariant(): Promise<typeof RELEASE_ASYNC> {
  asyncVariant ??= (async () => {
    try {
      const path = createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-asyncify/wasm')
      const wasmModule = await wasm.compile(await readFile(path))
      return newVariant(RELEASE_ASYNC, { wasmModule })
    } catch {
      return RELEASE_ASYNC // bundled layouts where the .wasm can't be resolved: let Emscripten locate it
    }
  })()
  return asyncVariant
}

/**
 * A fresh WebAssembly instance runs its first script 10–50× slower than later ones while V8
 * compiles the functions it touches; that cost is paid here, not out of a script's timeout.
 */
const WARM_UP = `var o = { a: [1, "x", true, null], b: { c: 1.5 } };
JSON.parse(JSON.stringify(o)).a.map(function (x) { return String(x); }).join(",").replace(/x/g, "y").length +
Object.keys(o).length + new Map([[1, 2]]).size + (function f(n) { return n ? f(n - 1) : 0; })(20)`

export async function createSyncEngine(limits: SandboxLimits): Promise<SyncEngine> {
  const module = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC)
  const runtime = module.newRuntime()
  const engine: SyncEngine = { kind: 'sync', id: nextId++, module, runtime, broken: false, busy: false, current: undefined, runs: 0 }
  configure(runtime, engine, limits)
  const ctx = runtime.newContext()
  try {
    const r = ctx.evalCode(WARM_UP, 'warm-up.js')
    ;(r.error ?? r.value).dispose()
  } finally {
    ctx.dispose()
  }
  return engine
}

export async function createAsyncEngine(limits: SandboxLimits): Promise<AsyncEngine> {
  const module = await newQuickJSAsyncWASMModuleFromVariant(await asyncifyVariant())
  const runtime = module.newRuntime()
  const engine: AsyncEngine = { kind: 'async', id: nextId++, module, runtime, broken: false, busy: false, current: undefined, runs: 0 }
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

  async acquire(nested: boolean): Promise<AsyncEngine> {
    const free = this.engines.find((e) => !e.busy && !e.broken)
    if (free) {
      free.busy = true
      return free
    }
    const live = this.engines.length + this.creating
    if (live < this.size || (nested && live < this.hardCap)) return this.make()
    if (nested) throw new NoEngineFreeError(`all ${this.hardCap} sandbox engines are busy`)
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
  }

  release(engine: AsyncEngine) {
    engine.current = undefined
    if (engine.broken || (this.engines.length > this.size && this.waiters.length === 0)) {
      // Dropped, never disposed (disposing an async runtime with host functions throws); the GC takes it.
      this.engines.splice(this.engines.indexOf(engine), 1)
      const waiter = this.waiters.shift()
      if (waiter) this.make().then(waiter.resolve, waiter.reject)
      return
    }
    const waiter = this.waiters.shift()
    if (waiter) waiter.resolve(engine) // stays busy: handed straight over
    else engine.busy = false
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
