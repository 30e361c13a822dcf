/**
 * The audit log: who changed what and who was refused, per tenant, append-only.
 *
 * An entry never holds content or a secret: the target names what was touched (a path, a tool or
 * secret name), versions say which revision it was and became, and `contentHash` (SHA-256 of the
 * request body; never for secrets, whose hash would let a guess be confirmed) says what was written.
 */

/** What happened: a write that took effect or failed, or a refusal. */
export type AuditOutcome = 'ok' | 'failed' | 'denied'

export interface AuditActor {
  /** The token's subject (`sub`); absent for a request without a valid token. */
  subject?: string
  issuer?: string
}

export interface AuditEntry {
  tenant: string
  /** Sortable and unique: `<ISO time>#<random>`; the newest sorts last. */
  id: string
  /** ISO-8601. */
  at: string
  actor: AuditActor
  /** e.g. `document.put`, `secret.delete`, `process.spawn`, `auth.forbidden`, `egress.refused` (docs/operations/observability.md). */
  action: string
  /** What the action was on: `projects/<p>/documents/<path>`, `secrets/<name>`, `host:<name>` … */
  target: string
  outcome: AuditOutcome
  /** The HTTP status answered, when the entry comes from a request's answer. */
  status?: number
  /** Why it was refused or failed: an error code or refusal reason, never a message with data in it. */
  reason?: string
  versionBefore?: string
  versionAfter?: string
  /** `sha256:<hex>` of the request body. */
  contentHash?: string
  /** Set when the request named a client (`x-server-tools-client`, e.g. `cli apply`). */
  client?: string
  requestId?: string
  traceId?: string
  sourceAddress?: string
  /**
   * Set on a digest: the entry stands for this many refusals of one kind within a window, past
   * what a window records one entry each (lib/audit/refusal-digest.ts). Its `target` is what
   * their targets have in common; per-request fields (requestId, traceId, contentHash,
   * sourceAddress) are left out.
   */
  repeated?: number
  /** A digest's first and last refusal, ISO-8601. */
  firstAt?: string
  lastAt?: string
  /** A digest's first few distinct targets and source addresses. */
  samples?: { targets: string[]; sourceAddresses: string[] }
  /** Epoch seconds after which the entry is gone (DynamoDB TTL; readers skip it before TTL deletes it). */
  expiresAt: number
}

export interface AuditFilter {
  /** ISO-8601 bounds, inclusive. */
  from?: string
  to?: string
  /** Equal to the actor's subject. */
  actor?: string
  /** Equal to the action, or its prefix when it ends with `.` (`secret.`). */
  action?: string
  /** Equal to the target, or its prefix when it ends with `/`. */
  target?: string
}

export interface AuditPage {
  /** Newest first. */
  entries: AuditEntry[]
  /** Pass back as `cursor` for the next page; absent on the last page. */
  next?: string
}

export interface AuditStore {
  /** Adds an entry; an entry with the same tenant and id is never overwritten (rejects instead). */
  append(entry: AuditEntry): Promise<void>
  /**
   * Adds several entries in one store request, without the condition `append` puts on each (ids
   * are unique by construction: time, a per-recorder sequence and a random part); answers the
   * entries the store left unwritten, to be tried again. Only a store where nothing can delete an
   * entry through the same permission offers it (DynamoDB's BatchWriteItem permission also
   * deletes: the AWS deployment grants PutItem and Query only, and its store leaves this out).
   */
  appendMany?(entries: AuditEntry[]): Promise<AuditEntry[]>
  /**
   * A tenant's entries matching the filter, newest first, at most `limit` (1–200); expired entries
   * (`expiresAt` ≤ nowSeconds) are never returned. The cursor is only meaningful for the same tenant.
   */
  query(tenant: string, filter: AuditFilter, page: { limit: number; cursor?: string }, nowSeconds: number): Promise<AuditPage>
}

export const MAX_AUDIT_PAGE = 200

/** Entries one `appendMany` carries at most (DynamoDB's BatchWriteItem limit). */
export const MAX_AUDIT_BATCH = 25

/** Whether an entry passes the filter's non-time conditions (both adapters apply the same rules). */
export function matchesFilter(e: AuditEntry, f: AuditFilter): boolean {
  if (f.actor !== undefined && e.actor.subject !== f.actor) return false
  if (f.action !== undefined && !(f.action.endsWith('.') ? e.action.startsWith(f.action) : e.action === f.action)) return false
  if (f.target !== undefined && !(f.target.endsWith('/') ? e.target.startsWith(f.target) : e.target === f.target)) return false
  return true
}

/** Cursors are the id of the last entry returned, base64url-encoded (opaque to callers). */
export const encodeCursor = (id: string) => Buffer.from(id, 'utf8').toString('base64url')
export function decodeCursor(cursor: string): string | undefined {
  const id = Buffer.from(cursor, 'base64url').toString('utf8')
  return /^\d{4}-\d\d-\d\dT[\d:.]+Z#[0-9a-z]+$/.test(id) ? id : undefined
}
