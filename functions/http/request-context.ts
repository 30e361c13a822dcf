/**
 * What one request is about (request id, tenant, project, process, tool, source address), kept
 * in async-local storage for the request's duration: log lines and audit entries written anywhere
 * below the HTTP edge carry it without every layer passing it on.
 *
 * The same storage holds the OpenTelemetry context when the SDK runs (its context manager,
 * functions/observability/context-manager.ts, keeps it here): with async hooks, every enabled
 * AsyncLocalStorage costs a copy on every promise the process creates, and a second one for the
 * trace context was the largest single cost of tracing per tool call (docs/operations/observability.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks'

export interface RequestContext {
  requestId: string
  sourceAddress?: string
  tenant?: string
  project?: string
  process?: string
  tool?: string
  /** Who the token says the caller is, once it is verified (read when needed: authentication comes later). */
  actor: () => { subject?: string; issuer?: string } | undefined
  traceId?: string
  /** What a slice of this request's long work waits for between turns (set by the fair-share gate: functions/http/fair-share.ts). */
  turnWait?: () => Promise<void> | undefined
}

/** What the one storage holds: the request's context, and the trace context when an SDK keeps one here. */
export interface AsyncFrame {
  request?: RequestContext
  trace?: unknown
}

const storage = new AsyncLocalStorage<AsyncFrame>()

/** The storage itself, for the OpenTelemetry context manager. */
export const asyncFrames = {
  current: (): AsyncFrame | undefined => storage.getStore(),
  run: <T>(frame: AsyncFrame, fn: () => T): T => storage.run(frame, fn),
}

export const requestContext = {
  run: <T>(ctx: RequestContext, fn: () => T): T => storage.run({ request: ctx, trace: storage.getStore()?.trace }, fn),
  current: (): RequestContext | undefined => storage.getStore()?.request,
}

/** The audit entry fields the current request supplies (none outside a request). */
export function auditContext() {
  const ctx = storage.getStore()?.request
  if (!ctx) return { actor: {} }
  return {
    actor: ctx.actor() ?? {},
    requestId: ctx.requestId,
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    ...(ctx.sourceAddress ? { sourceAddress: ctx.sourceAddress } : {}),
  }
}
