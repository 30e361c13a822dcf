/**
 * One script run on one engine: a fresh context, the declared inputs and `vance` bound, the source
 * evaluated, a returned promise (or top-level `await`) settled, the result read back as JSON —
 * and every path ends in a SandboxResult. Nothing here outlives the run: the context, every host
 * handle and every pending host callback are released in `finally`.
 */
import type { QuickJSAsyncContext, QuickJSContext, QuickJSDeferredPromise, QuickJSHandle } from 'quickjs-emscripten'
import type { SiblingTools, ToolOutcome } from '../calls/outcome'
import { formatCount } from '../runtime/count-format'
import type { AsyncEngine, Engine, Interruptible } from './engines'
import { jsonDeeperThanLimit, utf8Bytes } from './json'
import { formatBytes, type SandboxLimits } from './limits'

export type SandboxErrorClass = 'TIMEOUT' | 'RESOURCE_EXHAUSTED' | 'GUEST_EXCEPTION' | 'HOST_EXCEPTION'
export interface SandboxSuccess {
  value: unknown
  durationMs: number
}
export interface SandboxFailure {
  error: SandboxErrorClass
  message: string
}
export type SandboxResult = SandboxSuccess | SandboxFailure
export const isSandboxFailure = (r: SandboxResult): r is SandboxFailure => 'error' in r

/** What a script may reach outside itself: its siblings (through the dispatcher's gates) and who runs it. */
export interface SandboxHost {
  tools: SiblingTools
  context: { tenant: string; project: string; processId?: string }
  /** Nesting depth of the invocation running this script (0 for a direct call). */
  depth: number
}

export interface SandboxRequest {
  source: string
  /** Bound as top-level variables; values must be JSON. */
  inputs?: Record<string, unknown>
  timeoutMs?: number
  host?: SandboxHost
  /** Shown in error locations. */
  filename?: string
  /** Ends the run (queued or running) and, through its host calls, every run nested under it. */
  signal?: AbortSignal
  /** Told when the run's deadline clock starts (its engine is loaded and acquired). */
  onStarted?: () => void
}

/** The answer of a run ended by its signal (its parent timed out, its caller went away). */
export const CANCELLED: SandboxFailure = {
  error: 'TIMEOUT',
  message: 'the script was cancelled: the call it belongs to ended (it timed out or its caller went away)',
}

/** The sync build can't suspend for a host call: such a run is abandoned and redone on an async engine. */
export const RETRY_ASYNC = Symbol('retry on an async engine')
export type RunOutcome = SandboxResult | typeof RETRY_ASYNC

/** Raised out of a run when WebAssembly itself failed; the engine must be dropped. */
export class EngineFailure extends Error {}

// JS_EVAL_TYPE_GLOBAL = 0; JS_EVAL_FLAG_ASYNC = 1 << 7 (top-level await; the result is a promise of { value }).
const EVAL_GLOBAL = 0
const EVAL_ASYNC = 1 << 7
const MAX_MESSAGE = 2000

export class RunState implements Interruptible {
  ticks = 0
  reason: 'timeout' | 'fuel' | 'async' | 'cancelled' | undefined
  /** The run's signal fired: interrupt at the next poll, stop waiting for host calls. */
  cancelled = false
  private readonly wakers = new Set<() => void>()
  /** Sync build: the script reached for `vance`. */
  needsAsync = false
  /** The deadline passed while a host call was outstanding. */
  timedOutWaiting = false
  /** Inside evalCodeAsync: a host call may suspend the script. */
  inEval = false
  /** Reading the result: host calls are refused. */
  finishing = false
  finished = false
  siblingCalls = 0
  /** True once the engine refused this run memory (set by runOnEngine). */
  outOfMemory: () => boolean = () => false
  readonly hostErrors: { handle: QuickJSHandle; error: SandboxErrorClass; message: string }[] = []
  readonly outstanding = new Set<Promise<void>>()
  /** Guest promises handed out for host calls made from promise jobs; released with the run. */
  readonly deferreds = new Set<QuickJSDeferredPromise>()

  constructor(
    readonly deadline: number,
    readonly maxTicks: number,
    readonly now: () => number,
  ) {}

  shouldInterrupt(): boolean {
    if (this.reason) return true
    if (this.cancelled) this.reason = 'cancelled'
    else if (this.needsAsync) this.reason = 'async'
    else if (this.timedOutWaiting || this.now() > this.deadline) this.reason = 'timeout'
    else if (++this.ticks > this.maxTicks) this.reason = 'fuel'
    return this.reason !== undefined
  }

  cancel() {
    this.cancelled = true
    for (const wake of this.wakers) wake()
  }

  /** Resolves when the deadline passes or the run is cancelled (or never, once cleared). */
  deadlineTimer(): { promise: Promise<'deadline'>; clear(): void } {
    let timer: NodeJS.Timeout | undefined
    let wake = () => {}
    const promise = new Promise<'deadline'>((resolve) => {
      wake = () => resolve('deadline')
      if (this.cancelled) return wake()
      timer = setTimeout(wake, Math.max(0, this.deadline - this.now()))
      this.wakers.add(wake)
    })
    return {
      promise,
      clear: () => {
        clearTimeout(timer)
        this.wakers.delete(wake)
      },
    }
  }
}

export interface RunSettings {
  limits: SandboxLimits
  timeoutMs: number
}

/**
 * Runs `req` on `engine`. `mode` says which build the engine is; the caller owns the engine
 * (acquired, released) and the state (deadline, fuel). Throws EngineFailure when WebAssembly failed.
 */
export async function runOnEngine(engine: Engine, req: SandboxRequest, state: RunState, settings: RunSettings): Promise<RunOutcome> {
  const ctx = engine.runtime.newContext()
  engine.runs++
  const refusedBefore = engine.memory.refused
  state.outOfMemory = () => engine.memory.refused > refusedBefore
  const filename = req.filename ?? 'script.js'
  let stringify: QuickJSHandle | undefined
  try {
    if (engine.kind === 'async') installVance(ctx as QuickJSAsyncContext, state, req.host, settings.limits)
    else installVanceTrap(ctx, state)
    bindInputs(ctx, req.inputs ?? {})
    stringify = pristineStringify(ctx)
    engine.current = state // budgets apply from the first statement of the script on

    const topLevelAwait = /\bawait\b/.test(req.source)
    const flags = topLevelAwait ? EVAL_GLOBAL | EVAL_ASYNC : EVAL_GLOBAL
    let evaluated
    if (engine.kind === 'async') {
      state.inEval = true
      try {
        evaluated = await (ctx as QuickJSAsyncContext).evalCodeAsync(req.source, filename, flags)
      } finally {
        state.inEval = false
      }
    } else {
      evaluated = ctx.evalCode(req.source, filename, flags)
    }
    if (evaluated.error) return failure(ctx, evaluated.error, state, settings, filename)

    let settled = await settle(engine, ctx, evaluated.value, state)
    if ('value' in settled && topLevelAwait) {
      const wrapper = settled.value
      const inner = ctx.getProp(wrapper, 'value')
      wrapper.dispose()
      settled = await settle(engine, ctx, inner, state)
    }
    if ('pending' in settled) {
      if (engine.kind === 'sync' && state.needsAsync) return RETRY_ASYNC
      return (
        interruption(state, settings) ?? {
          error: 'GUEST_EXCEPTION',
          message: 'the script returned a promise that never settles: nothing is left that could settle it',
        }
      )
    }
    if ('error' in settled) return failure(ctx, settled.error, state, settings, filename)
    const leftover = drainJobs(engine, ctx, state, filename)
    if (leftover) {
      settled.value.dispose()
      return failure(ctx, leftover, state, settings, filename)
    }

    state.finishing = true
    const read = readResult(engine, ctx, stringify, settled.value, settings.limits)
    settled.value.dispose()
    if (engine.kind === 'sync' && state.needsAsync) return RETRY_ASYNC
    if ('thrown' in read) return failure(ctx, read.thrown, state, settings, filename)
    const interrupted = interruption(state, settings)
    if (interrupted) return interrupted
    return read.result
  } catch (e) {
    if (e instanceof EngineFailure) throw e
    // Anything thrown by quickjs-emscripten's own wrappers (not a guest exception) means WebAssembly
    // failed part-way — typically the host stack overflowing in native recursion. Trust nothing.
    throw new EngineFailure(e instanceof Error ? e.message : String(e), { cause: e })
  } finally {
    state.finished = true
    for (const d of state.deferreds) if (d.alive) d.dispose()
    for (const h of state.hostErrors) if (h.handle.alive) h.handle.dispose()
    if (stringify?.alive) stringify.dispose()
    engine.current = undefined
    // A failed instance may hang or corrupt on dispose; it is dropped whole instead.
    if (!engine.broken) {
      ctx.dispose()
      // Jobs still queued (left by an interrupted run, or finalizers queued as the context went)
      // would run in the next run — another tenant's, on its budget. QuickJS can't drop them: the
      // engine is retired instead.
      if (engine.runtime.hasPendingJob()) engine.retire = true
    }
  }
}

/**
 * Promise jobs the script left queued after its result settled (`Promise.resolve().then(f)` never
 * awaited) are its own work: they run now, on its fuel and deadline — never in a later run. An
 * endless chain ends in the run's own RESOURCE_EXHAUSTED or TIMEOUT. Returns what interrupted them.
 */
function drainJobs(engine: Engine, ctx: QuickJSContext, state: RunState, filename: string): QuickJSHandle | undefined {
  // only growths refused while draining count: the script may have caught an earlier one itself
  const refusedBefore = engine.memory.refused
  const outOfMemory = () => engine.memory.refused > refusedBefore
  while (engine.runtime.hasPendingJob()) {
    const jobs = engine.runtime.executePendingJobs()
    if (jobs.error) {
      // The engine's own limits end the run like the budgets do: an endless chain that reaches the
      // memory ceiling before its fuel runs out throws out-of-memory (or null) from a job, and the
      // chain then stops — that must not read as a clean finish.
      if (state.reason || state.needsAsync || outOfMemory() || engineLimit(ctx, jobs.error, filename)) return jobs.error
      jobs.error.dispose() // a job that threw: its own promise rejected, nobody is waiting for it
    }
  }
  // QuickJS may also swallow the failed allocation inside its job loop (the chain just stops, no
  // job reports an error): the refused growth is what tells. failure() reads it first.
  return outOfMemory() ? ctx.null : undefined
}

/** Whether a thrown value is QuickJS running out of something (memory, stack, an engine limit), not the script's own error. */
function engineLimit(ctx: QuickJSContext, thrown: QuickJSHandle, filename: string): boolean {
  if (ctx.typeof(thrown) !== 'object') return false
  // at the ceiling QuickJS may not manage to build its error and throws null
  return ctx.eq(thrown, ctx.null) || describe(ctx, thrown, filename).name === 'InternalError'
}

type Settled = { value: QuickJSHandle } | { error: QuickJSHandle } | { pending: true }

/** Settles a promise: runs jobs, waits for host calls made from jobs, until it is no longer pending. */
async function settle(engine: Engine, ctx: QuickJSContext, handle: QuickJSHandle, state: RunState): Promise<Settled> {
  if (ctx.typeof(handle) !== 'object') return { value: handle }
  for (;;) {
    const jobs = engine.runtime.executePendingJobs()
    if (jobs.error) {
      handle.dispose()
      return { error: jobs.error }
    }
    const promise = ctx.getPromiseState(handle)
    if (promise.type === 'fulfilled') {
      if (promise.notAPromise) return { value: handle }
      handle.dispose()
      return { value: promise.value }
    }
    if (promise.type === 'rejected') {
      handle.dispose()
      return { error: promise.error }
    }
    if (state.outstanding.size === 0 || state.reason) {
      handle.dispose()
      return { pending: true }
    }
    const deadline = state.deadlineTimer()
    const first = await Promise.race([...state.outstanding, deadline.promise])
    deadline.clear()
    if (first === 'deadline') {
      state.timedOutWaiting = true
      handle.dispose()
      return { pending: true }
    }
  }
}

function interruption(state: RunState, { limits, timeoutMs }: RunSettings): SandboxFailure | undefined {
  if (state.cancelled) return CANCELLED
  if (state.reason === 'timeout' || state.timedOutWaiting)
    return { error: 'TIMEOUT', message: `the script did not finish within its ${timeoutMs} ms timeout` }
  if (state.reason === 'fuel')
    return {
      error: 'RESOURCE_EXHAUSTED',
      message: `the script used up its statement budget (about ${formatCount(limits.maxStatements)} statements)`,
    }
  return undefined
}

function failure(ctx: QuickJSContext, thrown: QuickJSHandle, state: RunState, settings: RunSettings, filename: string): RunOutcome {
  try {
    if (state.needsAsync) return RETRY_ASYNC
    const interrupted = interruption(state, settings)
    if (interrupted) return interrupted
    // At the ceiling QuickJS may not even manage its own "out of memory" error and throws null.
    if (state.outOfMemory()) return outOfMemory(settings.limits)
    for (const h of state.hostErrors) if (ctx.eq(thrown, h.handle)) return { error: h.error, message: h.message }
    const { name, message, location } = describe(ctx, thrown, filename)
    // Reading the thrown value runs its getters, which the budgets stop like any other code.
    const interruptedWhileReading = interruption(state, settings)
    if (interruptedWhileReading) return interruptedWhileReading
    const { limits } = settings
    if (name === 'InternalError' && message === 'out of memory') return outOfMemory(limits)
    // JSON.parse and the parser report running out of stack as a SyntaxError (seen in a worker, whose
    // host stack is deep enough for QuickJS's own limit to trip first).
    if ((name === 'InternalError' || name === 'SyntaxError') && message === 'stack overflow')
      return {
        error: 'RESOURCE_EXHAUSTED',
        message: `the script overflowed its stack (limit ${formatBytes(limits.stackBytes)}): recursion too deep`,
      }
    if (name === 'InternalError' && /too long|too many/.test(message))
      return { error: 'RESOURCE_EXHAUSTED', message: `the script exceeded an engine limit: ${message}` }
    const text = name ? `${name}: ${message}` : message
    return { error: 'GUEST_EXCEPTION', message: clip(location ? `${text} (${location})` : text) }
  } finally {
    if (thrown.alive) thrown.dispose()
  }
}

const outOfMemory = (limits: SandboxLimits): SandboxFailure => ({
  error: 'RESOURCE_EXHAUSTED',
  message: `the script ran out of memory (limit ${formatBytes(limits.memoryBytes)})`,
})

/** Name, message and script location of a thrown value, read defensively (getters may throw or be interrupted). */
function describe(ctx: QuickJSContext, thrown: QuickJSHandle, filename: string): { name: string; message: string; location?: string } {
  const type = ctx.typeof(thrown)
  if (type !== 'object' || isNull(ctx, thrown)) {
    let shown: string
    try {
      shown =
        type === 'string'
          ? JSON.stringify(ctx.getString(thrown))
          : type === 'symbol' || type === 'function'
            ? `a ${type}`
            : String(ctx.dump(thrown))
    } catch {
      shown = `a ${type}`
    }
    return { name: '', message: `the script threw ${clip(shown)}` }
  }
  const name = readStringProp(ctx, thrown, 'name')
  const message = readStringProp(ctx, thrown, 'message')
  const stack = readStringProp(ctx, thrown, 'stack')
  const at = stack && new RegExp(`${escapeRegExp(filename)}:(\\d+):(\\d+)`).exec(stack)
  if (name === undefined && message === undefined) return { name: '', message: 'the script threw an object that is not an Error' }
  return { name: name ?? 'Error', message: message ?? '', location: at ? `line ${at[1]}, column ${at[2]}` : undefined }
}

function readStringProp(ctx: QuickJSContext, h: QuickJSHandle, key: string): string | undefined {
  try {
    const v = ctx.getProp(h, key)
    try {
      return ctx.typeof(v) === 'string' ? ctx.getString(v) : undefined
    } finally {
      v.dispose()
    }
  } catch {
    return undefined
  }
}

const isNull = (ctx: QuickJSContext, h: QuickJSHandle) => ctx.eq(h, ctx.null)
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s)
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Object results are serialised by the guest's own JSON.stringify, captured before the script ran
 * (so tampering with JSON can't change what crosses the boundary), under a lowered stack limit: at
 * 32 KiB QuickJS stops native recursion by itself after ~1,600 levels — far past the 64 allowed,
 * and long before the host stack could overflow. The text is then measured on the host.
 */
const SERIALIZE_STACK_BYTES = 32 * 1024

type Read = { result: SandboxResult } | { thrown: QuickJSHandle }

function readResult(engine: Engine, ctx: QuickJSContext, stringify: QuickJSHandle, h: QuickJSHandle, limits: SandboxLimits): Read {
  const ok = (value: unknown): Read => ({ result: { value, durationMs: 0 } })
  switch (ctx.typeof(h)) {
    case 'undefined':
    case 'function':
    case 'symbol':
      return ok(null)
    case 'boolean':
      return ok(ctx.dump(h) as boolean)
    case 'number': {
      const n = ctx.getNumber(h)
      return ok(Number.isFinite(n) ? n : null)
    }
    case 'bigint':
      return {
        result: {
          error: 'GUEST_EXCEPTION',
          message: "the result is a BigInt, which JSON can't represent: convert it with String() or Number()",
        },
      }
    case 'string':
      return checkedText(JSON.stringify(ctx.getString(h)), limits)
  }
  if (isNull(ctx, h)) return ok(null)
  engine.runtime.setMaxStackSize(SERIALIZE_STACK_BYTES)
  let out
  try {
    out = ctx.callFunction(stringify, ctx.undefined, h)
  } finally {
    engine.runtime.setMaxStackSize(limits.stackBytes)
  }
  if (out.error) {
    if (readStringProp(ctx, out.error, 'message') === 'stack overflow') {
      out.error.dispose()
      return { result: tooDeep(limits) }
    }
    // A TypeError from JSON.stringify itself (a cycle, a BigInt) says the value is not JSON; anything
    // else (a throwing toJSON or getter, an interrupt, memory) is classified like any other throw.
    if (readStringProp(ctx, out.error, 'name') === 'TypeError') {
      const text = readStringProp(ctx, out.error, 'message') ?? ''
      if (/circular|serialize/i.test(text)) {
        out.error.dispose()
        return { result: { error: 'GUEST_EXCEPTION', message: `the result is not JSON: ${clip(text)}` } }
      }
    }
    return { thrown: out.error }
  }
  try {
    if (ctx.typeof(out.value) !== 'string') return ok(null) // e.g. a toJSON returning undefined
    return checkedText(ctx.getString(out.value), limits)
  } finally {
    out.value.dispose()
  }
}

const tooDeep = (limits: SandboxLimits): SandboxFailure => ({
  error: 'RESOURCE_EXHAUSTED',
  message: `the result nests deeper than ${limits.maxResultDepth} levels`,
})

function checkedText(text: string, limits: SandboxLimits): Read {
  // UTF-16 length is a lower bound of the UTF-8 size: huge texts are refused without measuring them.
  const huge = text.length > 8 * limits.maxResultBytes
  const bytes = huge ? text.length : utf8Bytes(text)
  if (bytes > limits.maxResultBytes)
    return {
      result: {
        error: 'RESOURCE_EXHAUSTED',
        message: `the result is ${huge ? `more than ${formatBytes(bytes)}` : `${formatCount(bytes)} bytes`} of JSON; the limit is ${formatCount(limits.maxResultBytes)} (${formatBytes(limits.maxResultBytes)})`,
      },
    }
  if (jsonDeeperThanLimit(text, limits.maxResultDepth)) return { result: tooDeep(limits) }
  return { result: { value: JSON.parse(text), durationMs: 0 } }
}

function pristineStringify(ctx: QuickJSContext): QuickJSHandle {
  const json = ctx.getProp(ctx.global, 'JSON')
  try {
    return ctx.getProp(json, 'stringify')
  } finally {
    json.dispose()
  }
}

/** Declared inputs as global variables. Primitives directly; objects and arrays as JSON text parsed in the guest. */
function bindInputs(ctx: QuickJSContext, inputs: Record<string, unknown>) {
  let parse: QuickJSHandle | undefined
  try {
    for (const [name, value] of Object.entries(inputs)) {
      let h: QuickJSHandle
      if (value === null || value === undefined) h = ctx.null
      else if (typeof value === 'number') h = ctx.newNumber(value)
      else if (typeof value === 'string') h = ctx.newString(value)
      else if (typeof value === 'boolean') h = value ? ctx.true : ctx.false
      else {
        if (!parse) {
          const json = ctx.getProp(ctx.global, 'JSON')
          parse = ctx.getProp(json, 'parse')
          json.dispose()
        }
        const text = ctx.newString(JSON.stringify(value))
        h = ctx.unwrapResult(ctx.callFunction(parse, ctx.undefined, text))
        text.dispose()
      }
      ctx.setProp(ctx.global, name, h)
      if (h.alive && h !== ctx.null && h !== ctx.true && h !== ctx.false) h.dispose()
    }
  } finally {
    parse?.dispose()
  }
}

/** Sync build: `vance` exists, but touching it abandons the run so it is redone where host calls work. */
function installVanceTrap(ctx: QuickJSContext, state: RunState) {
  ctx.defineProp(ctx.global, 'vance', {
    configurable: true,
    enumerable: false,
    get: () => {
      state.needsAsync = true
      throw new Error('vance is being prepared') // never observed: the run is redone on an async engine
    },
  })
}

/**
 * The guest half of `vance`: host functions take and return JSON text only. Before the first
 * `await` a host call suspends the script (asyncify) and returns the value; after an `await` (in a
 * promise job, where WebAssembly can't suspend) it returns a Promise — guarded so that using it
 * without `await` fails loudly instead of reading `undefined`.
 */
const VANCE_SOURCE = `(function (hostCall, hostList, hostHas, contextJson) {
  "use strict";
  var parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze, get = Reflect.get;
  var PASS = { then: 1, catch: 1, finally: 1, constructor: 1 };
  function later(promise, what) {
    return new Proxy(promise.then(parse), {
      get: function (target, key) {
        if (typeof key !== "string" || PASS[key] === 1) {
          var v = get(target, key);
          return typeof v === "function" ? v.bind(target) : v;
        }
        throw new TypeError(what + "() was called after an await, so it returned a Promise: write await " + what + "(…)");
      }
    });
  }
  function reply(r, what) { return typeof r === "string" ? parse(r) : later(r, what); }
  var tools = freeze({
    call: function call(name, params) {
      return reply(hostCall(name, params === undefined ? undefined : stringify(params)), "vance.tools.call");
    },
    list: function list() { return reply(hostList(), "vance.tools.list"); },
    has: function has(name) { return reply(hostHas(name), "vance.tools.has"); }
  });
  return freeze({ tools: tools, context: freeze(parse(contextJson)) });
})`

type Reply = { json: string } | { fail: SandboxErrorClass | 'TypeError'; message: string }

const NO_SIBLINGS: SiblingTools = {
  call: async (name) => ({ isError: true, content: { message: `no tool '${name}' is callable from here` } }),
  delegate: async (name) => ({ isError: true, content: { message: `no tool '${name}' is callable from here` } }),
  list: async () => [],
  has: async () => false,
}

function installVance(ctx: QuickJSAsyncContext, state: RunState, host: SandboxHost | undefined, limits: SandboxLimits) {
  const tools = host?.tools ?? NO_SIBLINGS
  const depth = host?.depth ?? 0

  // Past the call limit every attempt is refused with the same Error object, so a script that
  // catches refusals in a loop costs one allocation, and hostErrors stays ≤ maxSiblingCalls + 1.
  let refusal: QuickJSHandle | undefined
  const toGuest = (reply: Reply): QuickJSHandle | { error: QuickJSHandle } => {
    if ('json' in reply) return ctx.newString(reply.json)
    if (reply.fail === 'RESOURCE_EXHAUSTED' && refusal?.alive) return { error: refusal.dup() }
    const error = ctx.newError({ name: reply.fail === 'TypeError' ? 'TypeError' : 'Error', message: reply.message })
    if (reply.fail !== 'TypeError') state.hostErrors.push({ handle: error.dup(), error: reply.fail, message: reply.message })
    if (reply.fail === 'RESOURCE_EXHAUSTED') refusal = state.hostErrors[state.hostErrors.length - 1].handle
    return { error }
  }

  /** Runs a host operation: suspending inside the eval, as a guest promise inside a promise job. */
  const hostOp = (perform: () => Reply | Promise<Reply>): any => {
    if (state.finishing || state.finished)
      return toGuest({ fail: 'TypeError', message: 'vance.tools is not available while the result is being read' })
    let started: Reply | Promise<Reply>
    try {
      started = perform()
    } catch (e) {
      return toGuest({ fail: 'HOST_EXCEPTION', message: e instanceof Error ? e.message : String(e) })
    }
    if (!(started instanceof Promise)) return toGuest(started)
    const raced = raceDeadline(started, state)
    if (state.inEval) return raced.then(toGuest)
    const deferred = ctx.newPromise()
    state.deferreds.add(deferred)
    const done = raced.then((reply) => {
      if (state.finished) return // released with the run
      const settled = toGuest(reply)
      if ('error' in settled) {
        deferred.reject(settled.error)
        settled.error.dispose()
      } else {
        deferred.resolve(settled)
        settled.dispose()
      }
      deferred.dispose()
      state.deferreds.delete(deferred)
    })
    state.outstanding.add(done)
    void done.finally(() => state.outstanding.delete(done))
    return deferred.handle
  }

  const callFn = ctx.newAsyncifiedFunction('call', (nameH, paramsH) =>
    hostOp(() => {
      const name = nameH && ctx.typeof(nameH) === 'string' ? ctx.getString(nameH) : undefined
      if (!name) return { fail: 'TypeError', message: 'vance.tools.call(name, params): name must be a non-empty string' }
      let params: unknown = {}
      if (paramsH && ctx.typeof(paramsH) === 'string') {
        const text = ctx.getString(paramsH)
        if (utf8Bytes(text) > limits.maxResultBytes || jsonDeeperThanLimit(text, limits.maxResultDepth))
          return {
            fail: 'TypeError',
            message: `vance.tools.call('${name}'): params must be at most ${formatBytes(limits.maxResultBytes)} of JSON nested at most ${limits.maxResultDepth} deep`,
          }
        params = JSON.parse(text)
      }
      if (params === null || typeof params !== 'object' || Array.isArray(params))
        return { fail: 'TypeError', message: `vance.tools.call('${name}'): params must be an object` }
      if (++state.siblingCalls > limits.maxSiblingCalls)
        return {
          fail: 'RESOURCE_EXHAUSTED',
          message: `sibling call to '${name}' refused: a run may make at most ${limits.maxSiblingCalls} sibling calls`,
        }
      if (depth + 1 > limits.maxNestingDepth)
        return {
          fail: 'HOST_EXCEPTION',
          message: `sibling call to '${name}' refused: tools are already nested ${depth} deep, the most allowed is ${limits.maxNestingDepth}`,
        }
      return siblingCall(tools, name, params as Record<string, unknown>, limits)
    }),
  )
  const listFn = ctx.newAsyncifiedFunction('list', () => hostOp(async () => ({ json: JSON.stringify(await tools.list()) })))
  const hasFn = ctx.newAsyncifiedFunction('has', (nameH) =>
    hostOp(() => {
      if (!nameH || ctx.typeof(nameH) !== 'string') return { fail: 'TypeError', message: 'vance.tools.has(name): name must be a string' }
      const name = ctx.getString(nameH)
      return tools.has(name).then((yes) => ({ json: yes ? 'true' : 'false' }))
    }),
  )
  const contextJson = ctx.newString(
    JSON.stringify({
      tenant: host?.context.tenant ?? null,
      project: host?.context.project ?? null,
      processId: host?.context.processId ?? null,
    }),
  )
  const make = ctx.unwrapResult(ctx.evalCode(VANCE_SOURCE, '<vance>'))
  try {
    const vance = ctx.unwrapResult(ctx.callFunction(make, ctx.undefined, callFn, listFn, hasFn, contextJson))
    ctx.setProp(ctx.global, 'vance', vance)
    vance.dispose()
  } finally {
    for (const h of [make, callFn, listFn, hasFn, contextJson]) h.dispose()
  }
}

async function siblingCall(tools: SiblingTools, name: string, params: Record<string, unknown>, limits: SandboxLimits): Promise<Reply> {
  let outcome: ToolOutcome
  try {
    outcome = await tools.call(name, params)
  } catch (e) {
    return { fail: 'HOST_EXCEPTION', message: `sibling tool '${name}' failed: ${e instanceof Error ? e.message : String(e)}` }
  }
  if (outcome.isError) return { fail: 'HOST_EXCEPTION', message: messageOf(outcome.content, name) }
  let json: string | undefined
  try {
    json = JSON.stringify(outcome.content ?? null)
  } catch {
    return { fail: 'HOST_EXCEPTION', message: `sibling tool '${name}' returned a value that is not JSON` }
  }
  json ??= 'null'
  if (json.length > limits.maxSiblingResultBytes || utf8Bytes(json) > limits.maxSiblingResultBytes)
    return {
      fail: 'HOST_EXCEPTION',
      message: `the result of '${name}' is larger than a script may receive (${formatBytes(limits.maxSiblingResultBytes)} of JSON)`,
    }
  if (jsonDeeperThanLimit(json, limits.maxResultDepth))
    return { fail: 'HOST_EXCEPTION', message: `the result of '${name}' nests deeper than ${limits.maxResultDepth} levels` }
  return { json }
}

/** The sibling's own message, so the script (and a model reading the failure) sees what went wrong. */
function messageOf(content: unknown, name: string): string {
  if (typeof content === 'string' && content) return clip(content)
  if (content && typeof content === 'object' && typeof (content as { message?: unknown }).message === 'string')
    return clip((content as { message: string }).message)
  return clip(`sibling tool '${name}' failed: ${JSON.stringify(content) ?? 'no details'}`)
}

/** A host call that outlives the deadline answers a timeout; the run is then interrupted. */
async function raceDeadline(work: Promise<Reply>, state: RunState): Promise<Reply> {
  const deadline = state.deadlineTimer()
  work.catch(() => undefined) // a late rejection after the deadline must not go unhandled
  try {
    const first = await Promise.race([work, deadline.promise])
    // An answer that comes only after the deadline (a nested run cut short by this run's own
    // deadline ends just after it) is this run's timeout, not a failed sibling.
    if (first === 'deadline' || state.now() > state.deadline) {
      state.timedOutWaiting = true
      return { fail: 'TIMEOUT', message: 'the script did not finish within its timeout' }
    }
    return first
  } catch (e) {
    return { fail: 'HOST_EXCEPTION', message: e instanceof Error ? e.message : String(e) }
  } finally {
    deadline.clear()
  }
}

export type { AsyncEngine }
