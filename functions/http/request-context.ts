/**
 * What one request is about (request id, tenant, project, process, tool, source address), kept
 * in async-local storage for the request's duration: log lines and audit entries written anywhere
 * below the HTTP edge carry it without every layer passing it on.
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
}

const storage = new AsyncLocalStorage<RequestContext>()

export const requestContext = {
  run: <T>(ctx: RequestContext, fn: () => T): T => storage.run(ctx, fn),
  current: (): RequestContext | undefined => storage.getStore(),
}

/** The audit entry fields the current request supplies (none outside a request). */
export function auditContext() {
  const ctx = storage.getStore()
  if (!ctx) return { actor: {} }
  return {
    actor: ctx.actor() ?? {},
    requestId: ctx.requestId,
    ...(ctx.traceId ? { traceId: ctx.traceId } : {}),
    ...(ctx.sourceAddress ? { sourceAddress: ctx.sourceAddress } : {}),
  }
}
