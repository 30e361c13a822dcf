/**
 * Quota admission: every rule that matches a call must have budget left in each of its windows.
 * Budget is leased: a container reserves a slice of a window from the shared counter store and
 * spends it locally, so most calls cost no storage request. The store never grants past a
 * window's limit, so the service never admits more than the limit (overshoot 0); what leases cost
 * is budget stranded in containers that stop calling — at most (slice − 1) per container per
 * window, which the window then does not admit. A container that saw a window spent refuses
 * without asking again until the window ends: a flood costs the store nothing.
 *
 * Token windows (`volume.tokens`) are leased the same way, but spent after the call, by what the
 * provider reported (`charge`): a call is admitted while its container's lease has a token left,
 * and its tokens are taken from the lease afterwards — into debt when it used more than was left,
 * a debt the next refill reserves before anything else. The store still never grants past the
 * limit, so the tokens used can exceed it only by debts no refill could cover: per container, what
 * the calls admitted on its last tokens used — one call's tokens when its calls come one at a time
 * (a Lambda container serves one request at a time; a script's parallel calls are several).
 */
import type { DocumentCascade, LayeredDocument } from '../documents/cascade'
import type { Clock } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import type { QuotaCounterStore } from './ports'
import {
  matches,
  type PlacedRule,
  parseQuotaDocument,
  placeRules,
  QUOTAS_PATH,
  type QuotaSubject,
  type QuotaWindow,
  windowsOf,
} from './rules'

/** A slice is this share of a window's limit (at least 1, at most MAX_SLICE). */
export const SLICE_FRACTION = 1 / 20
export const MAX_SLICE = 500
export const sliceOf = (limit: number) => Math.max(1, Math.min(MAX_SLICE, Math.floor(limit * SLICE_FRACTION)))
/** Token slices are larger (one model call spends hundreds to thousands): the same share, at most this. */
export const MAX_TOKEN_SLICE = 50_000
export const tokenSliceOf = (limit: number) => Math.max(1, Math.min(MAX_TOKEN_SLICE, Math.floor(limit * SLICE_FRACTION)))

/**
 * How long a container trusts the quota documents it read when the document store cannot say
 * whether they changed (DocumentStore.generation undefined: outside a request, say); with a
 * generation, a rule edit takes effect on the next call.
 */
export const RULES_TTL_MS = 5_000

export interface QuotaRefusal {
  rule: PlacedRule
  window: QuotaWindow
  retryAfterSeconds: number
  message: string
}

export interface QuotaCaller {
  tenant: string
  project: string
  role?: string
}

export interface QuotaStatus {
  layer: PlacedRule['layer']
  index: number
  match: PlacedRule['match']
  rate?: PlacedRule['rate']
  volume?: PlacedRule['volume']
  windows: {
    kind: QuotaWindow['kind']
    limit: number
    used: number
    remaining: number
    resetsAt: string
    resetsInSeconds: number
    /** Refusals this container answered in the window (refusals are not written to the store). */
    refusedHere: number
  }[]
}

interface Lease {
  remaining: number
  end: number
  /** The store said the window is spent: refuse locally until `end`. */
  spent: boolean
  refill?: Promise<void>
}

/**
 * The rules of one tenant/project, read through the cascade and kept while the tenant's document
 * generation is unchanged (or RULES_TTL_MS where there is none).
 */
export class QuotaRuleSource {
  private readonly cache = new Map<string, { at: number; generation?: number; rules: Promise<PlacedRule[]> }>()
  /** Tenant/projects whose rules this container has read at least once. */
  private readonly seen = new Set<string>()

  constructor(
    private readonly cascade: DocumentCascade,
    private readonly clock: Clock,
    private readonly log?: Logger,
    /** DocumentStore.generation. */
    private readonly generation?: (tenant: string) => Promise<number | undefined>,
  ) {}

  async rules(tenant: string, project: string): Promise<PlacedRule[]> {
    const key = `${tenant}\u0000${project}`
    const now = this.clock.now()
    // First sight: nothing memoised to check the generation against, so the rules are read at once —
    // beside the tenant's stamp read when the document cache holds no view of the tenant either —
    // and not memoised: a read that may have been answered before the stamp read cannot be kept
    // under the generation that read shows (lib/documents/stamped-cache.ts).
    if (this.generation && !this.seen.has(key)) {
      if (this.seen.size > 10_000) this.seen.clear()
      this.seen.add(key)
      return this.read(tenant, project)
    }
    const generation = await this.generation?.(tenant)
    const hit = this.cache.get(key)
    if (hit && (generation !== undefined ? hit.generation === generation : hit.generation === undefined && now - hit.at < RULES_TTL_MS))
      return hit.rules
    const rules = this.read(tenant, project).catch((e) => {
      this.cache.delete(key)
      throw e
    })
    if (this.cache.size > 10_000) this.cache.clear()
    this.cache.set(key, { at: now, generation, rules })
    return rules
  }

  private async read(tenant: string, project: string): Promise<PlacedRule[]> {
    return (await this.cascade.readLayers(tenant, project, QUOTAS_PATH)).flatMap((d) => this.placed(tenant, d))
  }

  private placed(tenant: string, d: LayeredDocument): PlacedRule[] {
    const parsed = parseQuotaDocument(d.json !== undefined ? { text: d.body, json: d.json } : d.body)
    if (parsed.ok) return placeRules(parsed.rules, d.source)
    // written before this check existed: its rules cannot be read, so they cannot be enforced
    this.log?.log('warn', 'quotas.unreadable', { tenant, layer: d.source, problems: parsed.issues.length })
    return []
  }
}

/** The counter a rule's window is kept under: per tenant, and per project for a project's own rules. */
export const counterOf = (rule: PlacedRule, project: string, w: QuotaWindow) =>
  `${rule.layer === 'project' ? `p:${project}` : rule.layer}|${rule.id}|${w.kind}|${w.start}`

export class QuotaLimiter {
  private readonly leases = new Map<string, Lease>()
  private readonly compiledSets = new WeakMap<PlacedRule[], CompiledRules>()
  /** Refusals this container answered, per tenant and counter (what GET /quotas adds up locally). */
  readonly refused = new Map<string, number>()

  constructor(
    private readonly deps: {
      rules: QuotaRuleSource
      store: QuotaCounterStore
      clock: Clock
    },
  ) {}

  /** The caller's rules, read without waiting for the tool; hand them to `admit`. */
  prepare(caller: QuotaCaller): Promise<PlacedRule[]> {
    return this.deps.rules.rules(caller.tenant, caller.project)
  }

  /**
   * Undefined when the call may run (its budget is taken; tokens are charged after it); else why
   * not and when to retry. `prepared`: what `prepare` returned for this call.
   */
  async admit(
    caller: QuotaCaller,
    subject: Omit<QuotaSubject, 'project'>,
    prepared?: Promise<PlacedRule[]>,
  ): Promise<QuotaRefusal | undefined> {
    const rules = await (prepared ?? this.deps.rules.rules(caller.tenant, caller.project))
    if (!rules.length) return undefined
    const now = this.deps.clock.now()
    const wanted = this.compiled(rules, caller).wanted(caller, subject, now)
    if (!wanted.length) return undefined
    // Leases fill concurrently; only when every window has a unit at once are they all spent, so a
    // call refused by one window takes nothing from the others.
    // Each round ends with every empty lease refilled by at least one unit or marked spent, and
    // a window's budget is finite: callers racing for a slice end admitted or refused, never spin.
    for (;;) {
      let empty: Promise<void>[] | undefined
      for (const w of wanted) {
        const lease = this.leaseOf(w)
        if (lease.spent) return this.refusal(w, caller.tenant, now)
        if (lease.remaining < 1) (empty ??= []).push(this.refill(caller.tenant, w, lease))
      }
      if (!empty) {
        // a request takes its unit now; tokens are taken when the call reports them (charge)
        for (const w of wanted) if (w.window.kind !== 'tokens') this.leaseOf(w).remaining--
        return undefined
      }
      await Promise.all(empty)
    }
  }

  /** The rules of one tenant/project's set, compiled once per set (the set is kept while its documents are unchanged). */
  private compiled(rules: PlacedRule[], caller: QuotaCaller): CompiledRules {
    let c = this.compiledSets.get(rules)
    if (!c || c.tenant !== caller.tenant || c.project !== caller.project)
      this.compiledSets.set(rules, (c = new CompiledRules(rules, caller.tenant, caller.project)))
    return c
  }

  /** The lease a wanted window spends from, kept on the window (one Map lookup per new window, not per call). */
  private leaseOf(w: Wanted): Lease {
    // a Wanted lives only while its window does, and no lease is pruned before its window ends
    w.lease ??= this.lease(w.id, w.window)
    return w.lease
  }

  /**
   * Takes the tokens a call used (as its provider reported them) from the token windows of the
   * rules it matches. Local only: a lease in debt is settled by the next admission's refill.
   */
  async charge(caller: QuotaCaller, subject: Omit<QuotaSubject, 'project'>, tokens: number): Promise<void> {
    if (!(tokens > 0)) return
    const rules = await this.deps.rules.rules(caller.tenant, caller.project)
    if (!rules.length) return
    const s: QuotaSubject = { ...subject, project: caller.project, role: caller.role }
    const now = this.deps.clock.now()
    for (const rule of rules) {
      if (rule.volume?.tokens === undefined || !matches(rule.match, s)) continue
      for (const window of windowsOf(rule, now))
        if (window.kind === 'tokens')
          this.lease(`${caller.tenant}\u0000${counterOf(rule, caller.project, window)}`, window).remaining -= tokens
    }
  }

  /**
   * Every rule of a tenant/project with each window's limit, reserved use, what is left and when
   * it resets. `used` counts reserved budget (leases not yet spent included): an upper bound of
   * the calls admitted, exact once the containers holding slices have spent them.
   */
  async status(tenant: string, project: string): Promise<QuotaStatus[]> {
    const rules = await this.deps.rules.rules(tenant, project)
    const now = this.deps.clock.now()
    const rows = rules.map((rule) => ({ rule, windows: windowsOf(rule, now).map((w) => ({ w, counter: counterOf(rule, project, w) })) }))
    const used = await this.deps.store.read(
      tenant,
      rows.flatMap((r) => r.windows.map((w) => w.counter)),
    )
    return rows.map(({ rule, windows }) => ({
      layer: rule.layer,
      index: rule.index,
      match: rule.match,
      ...(rule.rate ? { rate: rule.rate } : {}),
      ...(rule.volume ? { volume: rule.volume } : {}),
      windows: windows.map(({ w, counter }) => {
        const u = Math.min(w.limit, used.get(counter) ?? 0)
        return {
          kind: w.kind,
          limit: w.limit,
          used: u,
          remaining: w.limit - u,
          resetsAt: new Date(w.end).toISOString(),
          resetsInSeconds: Math.max(0, Math.ceil((w.end - now) / 1000)),
          refusedHere: this.refused.get(`${tenant}\u0000${counter}`) ?? 0,
        }
      }),
    }))
  }

  private lease(id: string, w: QuotaWindow): Lease {
    let l = this.leases.get(id)
    if (!l) {
      if (this.leases.size > 10_000) this.prune()
      l = { remaining: 0, end: w.end, spent: false }
      this.leases.set(id, l)
    }
    return l
  }

  private refill(tenant: string, w: Wanted, lease: Lease): Promise<void> {
    lease.refill ??= (async () => {
      try {
        const counter = w.id.slice(tenant.length + 1)
        const tokens = w.window.kind === 'tokens'
        // a token lease in debt reserves the debt first: what its calls used beyond the lease
        const want = tokens ? tokenSliceOf(w.window.limit) + Math.max(0, -lease.remaining) : sliceOf(w.window.limit)
        const { granted } = await this.deps.store.reserve({ tenant, counter }, want, w.window.limit, Math.ceil(w.window.end / 1000) + 3600)
        lease.remaining += granted
        if (granted === 0 || lease.remaining < 1) lease.spent = true
      } finally {
        lease.refill = undefined
      }
    })()
    return lease.refill
  }

  private refusal(w: Wanted, _tenant: string, now: number): QuotaRefusal {
    this.refused.set(w.id, (this.refused.get(w.id) ?? 0) + 1)
    const retryAfterSeconds = Math.max(1, Math.ceil((w.window.end - now) / 1000))
    const r = w.rule
    const what =
      w.window.kind === 'tokens'
        ? `${r.volume!.tokens} model tokens per ${r.volume!.per}`
        : w.window.kind === 'volume'
          ? `${r.volume!.requests} per ${r.volume!.per}`
          : w.window.kind === 'burst'
            ? `a burst of ${r.rate!.burst}`
            : `${r.rate!.requests} per ${r.rate!.per}`
    return {
      rule: r,
      window: w.window,
      retryAfterSeconds,
      message: `Quota reached: rule ${r.index + 1} of the ${r.layer === 'tenant' ? '_tenant' : r.layer} quotas.yaml allows ${what}${describeMatch(r)}. Retry in ${retryAfterSeconds} s.`,
    }
  }

  private prune() {
    const now = this.deps.clock.now()
    for (const [k, l] of this.leases) if (l.end <= now && !l.refill) this.leases.delete(k)
  }
}

/** One window a call must take a unit from: its rule, its counter id (tenant-qualified) and, once looked up, its lease. */
interface Wanted {
  rule: PlacedRule
  window: QuotaWindow
  id: string
  lease?: Lease
}

/** Selections memoised per set; past this many distinct subjects the memo starts over. */
const MAX_SELECTIONS = 4_096

/**
 * One tenant/project's rule set, compiled: which rules select a subject is decided once per
 * (role, tool, type, labels) and kept with the windows those rules count now, until the first of
 * them ends. A call then costs a Map lookup, not a match of every rule and a fresh set of windows.
 */
class CompiledRules {
  private readonly selections = new Map<string, { rules: PlacedRule[]; wanted: Wanted[]; from: number; until: number }>()

  constructor(
    private readonly rules: PlacedRule[],
    readonly tenant: string,
    readonly project: string,
  ) {}

  wanted(caller: QuotaCaller, subject: Omit<QuotaSubject, 'project'>, now: number): Wanted[] {
    const key = `${caller.role ?? ''}\u0000${subject.tool}\u0000${subject.type}\u0000${subject.labels.join('\u0001')}`
    let sel = this.selections.get(key)
    if (!sel) {
      const s: QuotaSubject = { ...subject, project: this.project, role: caller.role }
      if (this.selections.size >= MAX_SELECTIONS) this.selections.clear()
      this.selections.set(key, (sel = { rules: this.rules.filter((r) => matches(r.match, s)), wanted: [], from: 1, until: 0 }))
    }
    if (now < sel.from || now >= sel.until) {
      sel.wanted = sel.rules.flatMap((rule) =>
        windowsOf(rule, now).map((window) => ({ rule, window, id: `${this.tenant}\u0000${counterOf(rule, this.project, window)}` })),
      )
      sel.from = Math.max(...sel.wanted.map((w) => w.window.start), Number.NEGATIVE_INFINITY)
      sel.until = Math.min(...sel.wanted.map((w) => w.window.end), Number.POSITIVE_INFINITY)
    }
    return sel.wanted
  }
}

function describeMatch(r: PlacedRule): string {
  const parts = Object.entries(r.match).map(([k, v]) => `${k} ${v}`)
  return parts.length ? ` for ${parts.join(', ')}` : ''
}

/** Tool types whose results report model tokens: what token windows are charged from. */
export const TOKEN_REPORTING_TYPES: ReadonlySet<string> = new Set(['prompt_template'])

/**
 * Input + output tokens a prompt_template result reports (`usage: { inputTokens, outputTokens }`,
 * on success and on a failure the provider still billed); 0 when it reports none.
 */
export function reportedTokens(content: unknown): number {
  const usage = (content as { usage?: { inputTokens?: unknown; outputTokens?: unknown } } | null)?.usage
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.ceil(v) : 0)
  return usage && typeof usage === 'object' ? n(usage.inputTokens) + n(usage.outputTokens) : 0
}
