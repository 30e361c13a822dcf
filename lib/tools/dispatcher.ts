/**
 * The one path every tool call takes — a model's, an `invoke_tool` indirection's, a script's
 * sibling call: resolve through a gate, validate arguments, invoke, and turn every failure
 * the call caused into a result a model can act on.
 */

import type { SiblingCallOptions, SiblingTools, ToolOutcome } from '../calls/outcome'
import { toolError } from '../calls/outcome'
import { type ArgumentValidation, INLINE_VALIDATION } from '../config/argument-validation'
import { isServerToolsError, ServerToolsError } from '../errors'
import type { Clock } from '../runtime/clock'
import { type CallSignal, signalOf } from '../runtime/deferred-signal'
import type { Logger } from '../runtime/logger'
import { type Metrics, noopMetrics } from '../runtime/metrics'
import { noopTracer, type Tracer } from '../runtime/tracer'
import type { DiscoverySurface, InvocationContext, Tool } from './contracts'

/** What a caller may see and call: the project's callable tools, or a process's surface. */
export interface ToolGate {
  /** The tool behind a name if this caller may call it; undefined otherwise. */
  resolve(name: string): Promise<Tool | undefined>
  /** Names this caller may call (for `vance.tools.list`). */
  names(): Promise<string[]>
  /** A process's discovery surface, handed to the tools it calls (the meta-tools need it). */
  surface?: DiscoverySurface
}

export interface CallerIdentity {
  tenant: string
  project: string
  subject: string
  processId?: string
  role?: string
  /** `code`: made by a code-mode script (execute_code), not by the model directly. */
  origin?: 'code'
}

/** What a listener hears before a tool runs (after it resolved and its arguments validated). */
export interface BeforeCallEvent {
  caller: CallerIdentity
  tool: Tool
  params: Record<string, unknown>
  depth: number
  delegate: boolean
}

/** What a listener hears after a tool ran, whatever the outcome. */
export interface AfterCallEvent {
  caller: CallerIdentity
  tool: Tool
  outcome: ToolOutcome
  depth: number
  delegate: boolean
}

/**
 * Observes calls (usage counting, progress). Listeners are synchronous and must not throw (a
 * throwing listener is logged and ignored; it never changes the call's outcome).
 *
 * The delegate path (spec §14.4): when a wrapper tool calls the tool it wraps as its mechanical
 * half (`file_read → client_file_read`, through `ctx.tools.delegate`), the dispatcher calls
 * `beforeDelegate` / `afterDelegate` instead of `beforeCall` / `afterCall`. A listener that does
 * not define them hears the delegated call through its normal hooks (progress pings stay); the
 * usage counter defines them as no-ops, so one intent counts once. `delegate: true` on the event
 * says the same thing to a listener that only has the normal hooks.
 */
export interface DispatchListener {
  beforeCall?(event: BeforeCallEvent): void
  afterCall?(event: AfterCallEvent): void
  beforeDelegate?(event: BeforeCallEvent): void
  afterDelegate?(event: AfterCallEvent): void
  /** A call refused before it ran: by the admission (a quota) or for capacity (the sandbox was full). */
  refused?(event: RefusalEvent): void
}

/** A refused call: `quota` from the admission, `capacity` when the tool answered OVERLOADED. */
export interface RefusalEvent {
  caller: CallerIdentity
  tool: Tool
  refusal: AdmissionRefusal & { class: 'quota' | 'capacity' }
  depth: number
}

export const MAX_SIBLING_DEPTH = 4

/** Why a call may not run now (a quota), and when it may: decided before the tool runs. */
export interface AdmissionRefusal {
  message: string
  retryAfterSeconds: number
  /** What the refusal names, for the audit log: e.g. `quota:_tenant/2`. */
  reason: string
}

/**
 * Asked before every call (not the delegate half of a wrapper: one intent is admitted once). A
 * refused call runs nothing; listeners hear it through `refused`.
 */
export type Admission = (caller: CallerIdentity, tool: Tool, prepared?: Promise<unknown>) => Promise<AdmissionRefusal | undefined>
/**
 * Started as a call begins, beside the tool's lookup: what the admission will read that does not
 * depend on the tool (the caller's quota rules), so both reads go out together. Its promise is
 * handed to the admission.
 */
export type AdmissionPrep = (caller: CallerIdentity) => Promise<unknown>

/** Where each call's span and numbers go (default: nowhere). */
export interface DispatchObservers {
  tracer?: Tracer
  metrics?: Metrics
  clock?: Clock
}

export class ToolDispatcher {
  private readonly listeners: DispatchListener[] = []
  private readonly tracer: Tracer
  private readonly metrics: Metrics
  private readonly clock: Clock | undefined
  private admission: Admission | undefined
  private admissionPrep: AdmissionPrep | undefined

  constructor(
    private readonly log: Logger,
    observers: DispatchObservers = {},
    /** Where arguments are validated: on this thread by default, partly in workers where one thread serves many tenants. */
    private readonly validation: ArgumentValidation = INLINE_VALIDATION,
  ) {
    this.tracer = observers.tracer ?? noopTracer
    this.metrics = observers.metrics ?? noopMetrics
    this.clock = observers.clock
  }

  addListener(listener: DispatchListener) {
    this.listeners.push(listener)
  }

  setAdmission(admission: Admission, prepare?: AdmissionPrep) {
    this.admission = admission
    this.admissionPrep = prepare
  }

  /**
   * `overloaded: 'throw'`: a caller outside any process answers a tool refused for capacity
   * (OVERLOADED) itself — as 503 with Retry-After; elsewhere it is a tool error saying so.
   * `refused: 'throw'`: a REST caller's own call refused by a quota is its 429 (QUOTA_EXCEEDED);
   * a sibling call's refusal stays a tool error the script can act on.
   */
  async call(
    gate: ToolGate,
    caller: CallerIdentity,
    name: unknown,
    params: unknown,
    opts: { depth?: number; delegate?: boolean; signal?: CallSignal; overloaded?: 'throw'; refused?: 'throw' } = {},
  ): Promise<ToolOutcome> {
    const depth = opts.depth ?? 0
    if (typeof name !== 'string' || !name) return toolError('A tool call needs a tool name (a non-empty string).')
    if (opts.signal?.aborted)
      return toolError(`Tool '${name}' was not called: the call it belongs to was cancelled (it timed out or its caller went away).`)
    if (depth > MAX_SIBLING_DEPTH) {
      return toolError(
        `Tool '${name}' was not called: sibling calls may nest at most ${MAX_SIBLING_DEPTH} deep (is a tool calling itself through its siblings?).`,
      )
    }
    const prepared = this.admission && !opts.delegate ? this.admissionPrep?.(caller) : undefined
    // its failure is the admission's to report; a call that ends before it (an unknown tool) leaves it unheard
    prepared?.catch(() => undefined)
    let tool: Tool | undefined
    try {
      tool = await gate.resolve(name)
    } catch (e) {
      if (isServerToolsError(e, 'INVALID_CONFIG')) {
        const issues = (e.details?.errors ?? []).map((i) => i.message)
        return toolError(`Tool '${name}' cannot be used: ${e.message}.${issues.length ? ` ${issues.join('; ')}` : ''}`)
      }
      throw e
    }
    if (!tool) return toolError(`Unknown tool '${name}'. Call tool_list to see the tools you can use.`)

    const args = params === undefined || params === null ? {} : params
    if (typeof args !== 'object' || Array.isArray(args))
      return toolError(`Invalid arguments for '${tool.name}': params must be a JSON object.`)
    let problems
    try {
      problems = await this.validation.validate(tool.inputSchema, args, { tenant: caller.tenant, signal: opts.signal })
    } catch (e) {
      // a validation that waited for a worker past its deadline: refused for capacity, as a busy sandbox is
      if (isServerToolsError(e, 'OVERLOADED')) {
        if (opts.overloaded === 'throw') throw e
        return toolError(e.message, { retryAfterSeconds: e.details?.retryAfterSeconds })
      }
      return toolError(`Tool '${tool.name}' has an input schema that cannot be used: ${(e as Error).message}`)
    }
    if (problems.length) {
      return toolError(`Invalid arguments for '${tool.name}': ${problems.map((p) => p.message).join('; ')}.`, { errors: problems })
    }

    const delegate = opts.delegate ?? false
    if (this.admission && !delegate) {
      const refusal = await this.admission(caller, tool, prepared)
      if (refusal) {
        this.observe(tool.typeId, 'refused', 'QUOTA_EXCEEDED', undefined)
        this.notify((l) => l.refused?.({ caller, tool: tool!, refusal: { ...refusal, class: 'quota' }, depth }))
        if (opts.refused === 'throw' && depth === 0)
          throw new ServerToolsError('QUOTA_EXCEEDED', refusal.message, { retryAfterSeconds: refusal.retryAfterSeconds })
        return toolError(refusal.message, { reason: 'quota_exceeded', retryAfterSeconds: refusal.retryAfterSeconds })
      }
    }

    const ctx = new CallContext(caller, depth, this.siblings(gate, caller, depth, opts.signal), opts.signal)
    if (gate.surface) ctx.surface = gate.surface
    this.notify((l) =>
      (delegate ? (l.beforeDelegate ?? l.beforeCall) : l.beforeCall)?.call(l, {
        caller,
        tool: tool!,
        params: args as Record<string, unknown>,
        depth,
        delegate,
      }),
    )
    const outcome = await this.invokeObserved(tool, args as Record<string, unknown>, ctx, caller, opts.overloaded)
    const event: AfterCallEvent = { caller, tool, outcome, depth, delegate }
    this.notify((l) => (delegate ? (l.afterDelegate ?? l.afterCall) : l.afterCall)?.call(l, event))
    return outcome
  }

  /**
   * The invocation inside its span (`execute_tool <name>`, the GenAI semantic conventions' name):
   * tool name and type, tenant, project, process, role, depth, outcome and error class, never the
   * arguments. Counted and timed by tool type and outcome.
   */
  private invokeObserved(
    tool: Tool,
    args: Record<string, unknown>,
    ctx: InvocationContext,
    caller: CallerIdentity,
    overloaded: 'throw' | undefined,
  ): Promise<ToolOutcome> {
    const started = this.clock?.now()
    const type = tool.typeId
    return this.tracer.span(
      `execute_tool ${tool.name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool.name,
          'gen_ai.tool.type': type,
          'server_tools.tenant': caller.tenant,
          'server_tools.project': caller.project,
          'server_tools.process': caller.processId,
          'server_tools.role': caller.role,
          'server_tools.depth': ctx.depth,
          'server_tools.origin': caller.origin,
        },
      },
      async (span) => {
        let outcome: ToolOutcome
        let errorClass: string | undefined
        try {
          outcome = await tool.invoke(args, ctx)
          if (outcome.isError) errorClass = errorClassOf(outcome)
        } catch (e) {
          if (isServerToolsError(e, 'OVERLOADED')) {
            this.observe(type, 'refused', 'OVERLOADED', started)
            span.fail('OVERLOADED')
            const retryAfterSeconds = Number(e.details?.retryAfterSeconds ?? 1)
            const refusal = { class: 'capacity' as const, message: e.message, retryAfterSeconds, reason: 'capacity' }
            this.notify((l) => l.refused?.({ caller, tool, refusal, depth: ctx.depth }))
            if (overloaded === 'throw') throw e
            return toolError(e.message, { retryAfterSeconds: e.details?.retryAfterSeconds })
          }
          this.log.log('warn', 'tool.failed', {
            tenant: caller.tenant,
            project: caller.project,
            tool: tool.name,
            error: (e as Error).message,
          })
          errorClass = (e as Error)?.name ?? 'Error'
          outcome = toolError(`Tool '${tool.name}' failed: ${(e as Error).message}`)
        }
        const result = outcome.isError ? 'error' : 'ok'
        span.setAttributes({ 'server_tools.outcome': result })
        if (errorClass) span.fail(errorClass)
        this.observe(type, result, errorClass, started)
        return outcome
      },
    )
  }

  private observe(type: string, outcome: string, errorClass: string | undefined, started: number | undefined) {
    this.metrics.record('ToolCalls', 1, { ToolType: type, Outcome: outcome })
    if (started !== undefined) this.metrics.record('ToolDuration', this.clock!.now() - started, { ToolType: type, Outcome: outcome })
    if (errorClass) this.metrics.record('ToolErrors', 1, { ToolType: type, ErrorClass: errorClass })
  }

  /**
   * The delegate path: a wrapper tool calling the tool it wraps, through the same gate, one level
   * deeper. Listeners hear it through beforeDelegate/afterDelegate (see DispatchListener).
   */
  delegate(
    gate: ToolGate,
    caller: CallerIdentity,
    name: unknown,
    params: unknown,
    opts: { depth?: number; signal?: CallSignal } = {},
  ): Promise<ToolOutcome> {
    return this.call(gate, caller, name, params, { ...opts, delegate: true })
  }

  private notify(hook: (l: DispatchListener) => void) {
    for (const l of this.listeners) {
      try {
        hook(l)
      } catch (e) {
        this.log.log('error', 'dispatch.listener_failed', { error: (e as Error).message })
      }
    }
  }

  /** Sibling calls go back through the same gate, one level deeper. */
  siblings(gate: ToolGate, caller: CallerIdentity, depth: number, signal?: CallSignal): SiblingTools {
    return new SiblingCalls(this, gate, caller, depth, signal)
  }
}

/**
 * A call's context as its tool sees it: the caller's identity, the depth, the siblings and the
 * request's signal. A class, not `{ ...caller, depth, tools }`: on Node 20 (V8 11.3) an object
 * spread followed by a property the spread object lacks builds a new hidden class on every call
 * (~2 µs and a map's garbage each, measured in a scratch loop), and a getter in an object literal
 * is defined by the runtime. The signal's getter is on the prototype: a deferred signal is made
 * only if the tool reads it (a close listener and a controller per call otherwise).
 */
class CallContext implements InvocationContext {
  readonly tenant: string
  readonly project: string
  readonly subject: string
  readonly processId: string | undefined
  readonly role: string | undefined
  readonly origin: 'code' | undefined
  surface?: DiscoverySurface
  readonly #signal: CallSignal | undefined

  constructor(
    caller: CallerIdentity,
    readonly depth: number,
    readonly tools: SiblingTools,
    signal: CallSignal | undefined,
  ) {
    this.tenant = caller.tenant
    this.project = caller.project
    this.subject = caller.subject
    this.processId = caller.processId
    this.role = caller.role
    this.origin = caller.origin
    this.#signal = signal
  }

  get signal(): AbortSignal | undefined {
    return signalOf(this.#signal)
  }
}

/**
 * A call's siblings as one object with its methods on the prototype: every call hands its tool a
 * set, and most tools never touch it, so it costs one allocation rather than four closures.
 */
class SiblingCalls implements SiblingTools {
  constructor(
    private readonly dispatcher: ToolDispatcher,
    private readonly gate: ToolGate,
    private readonly caller: CallerIdentity,
    private readonly depth: number,
    private readonly signal: CallSignal | undefined,
  ) {}

  call(name: string, params: unknown, opts?: SiblingCallOptions) {
    const caller = opts?.origin ? { ...this.caller, origin: opts.origin } : this.caller
    return this.dispatcher.call(this.gate, caller, name, params, { depth: this.depth + 1, signal: opts?.signal ?? this.signal })
  }

  delegate(name: string, params: unknown, opts?: SiblingCallOptions) {
    return this.dispatcher.delegate(this.gate, this.caller, name, params, { depth: this.depth + 1, signal: opts?.signal ?? this.signal })
  }

  list() {
    return this.gate.names()
  }

  async has(name: string) {
    return (await this.gate.resolve(name).catch(() => undefined)) !== undefined
  }
}

/** A tool error's class for spans and metrics: its `reason` or `error` field when it names one, else `tool_error`. */
function errorClassOf(outcome: ToolOutcome): string {
  const c = outcome.content as { reason?: unknown; error?: unknown } | null
  const named = typeof c?.reason === 'string' ? c.reason : typeof c?.error === 'string' ? c.error : undefined
  return named && /^[A-Za-z_-]{1,40}$/.test(named) ? named : 'tool_error'
}
