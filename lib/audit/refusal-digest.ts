/**
 * How many audit entries refusals may cost. A write that took effect is always one entry of its
 * own; a refusal or a failed write costs nothing to whoever sends it, and was one entry each, kept
 * for a year: one connection sending refused spawns wrote ~300 entries a second, and a client
 * with no token at all could write them into any tenant's log, since a 401 is recorded against
 * the path's tenant. What one sender costs the log is bounded instead, counted per container over
 * fixed windows:
 *
 * - a tenant's first `perTenant` refusals in a window are entries of their own, and so are at
 *   most `perWindow` of all tenants together;
 * - the rest are counted by kind (tenant, action, outcome, reason, status, actor) into one digest
 *   entry per kind, written when the window ends: `repeated` says how many refusals it stands
 *   for, `firstAt`/`lastAt` when, `target` is what their targets have in common, and a few of the
 *   distinct targets and source addresses are kept as samples. Varying the path, the address or
 *   the body does not make a new kind, so it does not buy more entries;
 * - at most `kinds` digests a window (a client spraying 401s over made-up tenant ids makes a kind
 *   per id): what is past them is counted in one log line at warn level and a metric
 *   (`AuditRefusalsUncounted`) when the window ends — never dropped silently.
 *
 * So a window writes at most `perWindow + kinds` refusal entries, whatever arrives.
 */
import { iso } from '../runtime/clock'
import type { AuditDraft } from './recorder'

export interface RefusalDigestLimits {
  /** The window's length, in ms. */
  windowMs: number
  /** Refusals of one tenant a window recorded as entries of their own. */
  perTenant: number
  /** Refusals of all tenants together a window recorded as entries of their own. */
  perWindow: number
  /** Digest entries a window writes at most. */
  kinds: number
  /** Distinct targets and source addresses a digest keeps as samples. */
  samples: number
}

export const REFUSAL_DIGEST_LIMITS: RefusalDigestLimits = { windowMs: 60_000, perTenant: 20, perWindow: 600, kinds: 1_000, samples: 5 }

/** The refusals of one kind counted in a window. */
interface Kind {
  first: AuditDraft
  count: number
  firstAt: number
  lastAt: number
  target: string
  targets: Set<string>
  sources: Set<string>
}

/** What a window that ended leaves to write and to report. */
export interface ClosedWindow {
  /** One draft per kind, `repeated` set. */
  digests: AuditDraft[]
  /** Refusals past `kinds`: neither an entry nor in a digest. */
  uncounted: number
  startedAt: number
  endedAt: number
}

export class RefusalDigest {
  private startedAt: number | undefined
  private recorded = 0
  private readonly perTenant = new Map<string, number>()
  private readonly kinds = new Map<string, Kind>()
  private uncounted = 0

  constructor(readonly limits: RefusalDigestLimits = REFUSAL_DIGEST_LIMITS) {}

  /** When the current window ends, while it has refusals counted and not yet written; otherwise undefined. */
  get pendingUntil(): number | undefined {
    return this.startedAt !== undefined && (this.kinds.size > 0 || this.uncounted > 0) ? this.startedAt + this.limits.windowMs : undefined
  }

  /**
   * True when the refusal is to be an entry of its own; false when it was counted into its kind.
   * A window that ended before `now` must have been closed first (`close`).
   */
  admit(draft: AuditDraft, now: number): boolean {
    if (this.startedAt === undefined) this.startedAt = now
    const mine = this.perTenant.get(draft.tenant) ?? 0
    if (mine < this.limits.perTenant && this.recorded < this.limits.perWindow) {
      this.perTenant.set(draft.tenant, mine + 1)
      this.recorded++
      return true
    }
    const key = kindKey(draft)
    const kind = this.kinds.get(key)
    if (kind) {
      kind.count++
      kind.lastAt = now
      kind.target = commonTarget(kind.target, draft.target)
      sample(kind.targets, draft.target, this.limits.samples)
      if (draft.sourceAddress) sample(kind.sources, draft.sourceAddress, this.limits.samples)
    } else if (this.kinds.size < this.limits.kinds) {
      this.kinds.set(key, {
        first: draft,
        count: 1,
        firstAt: now,
        lastAt: now,
        target: draft.target,
        targets: new Set([draft.target]),
        sources: new Set(draft.sourceAddress ? [draft.sourceAddress] : []),
      })
    } else this.uncounted++
    return false
  }

  /** Ends the window when it has ended by `now` (or at once with `force`), answering what it leaves to write. */
  close(now: number, force = false): ClosedWindow | undefined {
    if (this.startedAt === undefined || (!force && now < this.startedAt + this.limits.windowMs)) return undefined
    const closed: ClosedWindow = {
      digests: [...this.kinds.values()].map(digestOf),
      uncounted: this.uncounted,
      startedAt: this.startedAt,
      endedAt: Math.min(now, this.startedAt + this.limits.windowMs),
    }
    this.startedAt = undefined
    this.recorded = 0
    this.perTenant.clear()
    this.kinds.clear()
    this.uncounted = 0
    return closed
  }
}

/** What makes two refusals the same kind: nothing the sender varies for free (path, address, body). */
const kindKey = (d: AuditDraft) =>
  [d.tenant, d.action, d.outcome, d.reason ?? '', d.status ?? '', d.actor.subject ?? '', d.actor.issuer ?? '', d.client ?? ''].join(
    '\u0000',
  )

function sample(set: Set<string>, value: string, most: number) {
  if (set.size < most) set.add(value)
}

/**
 * What two targets have in common, cut after a `/` or `:` so the target filter's prefixes
 * (`projects/p1/`) still find it: `projects/p1/documents/a.yaml` and `projects/p1/documents/b.yaml`
 * give `projects/p1/documents/`.
 */
export function commonTarget(a: string, b: string): string {
  if (a === b) return a
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  const cut = Math.max(a.lastIndexOf('/', i - 1), a.lastIndexOf(':', i - 1))
  return cut < 0 ? '' : a.slice(0, cut + 1)
}

function digestOf(kind: Kind): AuditDraft {
  // per-request fields name one request of many: left out rather than shown for all of them
  const { requestId: _r, traceId: _t, contentHash: _h, versionBefore: _v, sourceAddress: _s, ...rest } = kind.first
  return {
    ...rest,
    target: kind.target,
    repeated: kind.count,
    firstAt: iso(kind.firstAt),
    lastAt: iso(kind.lastAt),
    samples: { targets: [...kind.targets], sourceAddresses: [...kind.sources] },
  }
}
