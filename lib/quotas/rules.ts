/**
 * Quota rules (issue 25): `quotas.yaml` in a project, in `_tenant`, and in the deployment's
 * bundled defaults. Every layer's rules apply at once (a call passes all of them); an inner layer
 * cannot lift an outer one's cap, so a project cannot undo what the tenant admin set.
 *
 *   rules:
 *     - match: { tool: "petstore__*" }            # project, role, tool (name or `prefix*`), type, label
 *       rate: { requests: 10, per: minute, burst: 5 }   # per second | minute | hour
 *     - match: { role: coder, type: prompt_template }
 *       volume: { requests: 2000, tokens: 200000, per: day }   # per day | month (UTC)
 *
 * `tokens` caps model tokens (input + output, as the provider reported them) of the calls the rule
 * matches that report any — prompt_template calls. They are charged after the call: a call is
 * admitted while the window has tokens left and refused once it is spent, so the window can end
 * over its cap by what the calls in flight when it ran out used (one call's tokens when calls
 * come one at a time per container; see limiter.ts).
 *
 * A rule's budget is shared by every call it matches: per tenant for `_tenant` and bundled rules,
 * per project for a project's own. Validated on write like every document (line/column, did-you-mean).
 */
import { validateAgainst } from '../config/json-schema'
import { locate, parseYaml, type YamlSource } from '../config/yaml'
import type { Issue } from '../errors'
import { sha256 } from '../runtime/hash'

export const QUOTAS_PATH = 'quotas.yaml'
export const MAX_QUOTA_RULES = 100

export const RATE_PERIODS = { second: 1_000, minute: 60_000, hour: 3_600_000 } as const
export const VOLUME_PERIODS = ['day', 'month'] as const
export type RatePeriod = keyof typeof RATE_PERIODS
export type VolumePeriod = (typeof VOLUME_PERIODS)[number]

export interface QuotaMatch {
  project?: string
  role?: string
  /** A tool name, or a prefix ending in `*` (`petstore__*`). */
  tool?: string
  type?: string
  label?: string
}

export interface QuotaRule {
  match: QuotaMatch
  rate?: { requests: number; per: RatePeriod; burst?: number }
  /** At least one of `requests` and `tokens`. */
  volume?: { requests?: number; tokens?: number; per: VolumePeriod }
}

/** A rule as enforced: where it was written and a stable id (an edited rule starts a new count). */
export interface PlacedRule extends QuotaRule {
  id: string
  layer: 'project' | 'tenant' | 'bundled'
  /** The rule's position in its document (0-based): what GET /quotas names. */
  index: number
}

const NAME = { type: 'string', minLength: 1, maxLength: 256 }
const count = { type: 'integer', minimum: 1, maximum: 1_000_000_000 }
const tokenCount = { type: 'integer', minimum: 1, maximum: 1_000_000_000_000 }

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    rules: {
      type: 'array',
      maxItems: MAX_QUOTA_RULES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['match'],
        properties: {
          match: {
            type: 'object',
            additionalProperties: false,
            properties: { project: NAME, role: NAME, tool: NAME, type: NAME, label: NAME },
          },
          rate: {
            type: 'object',
            additionalProperties: false,
            required: ['requests', 'per'],
            properties: { requests: count, per: { enum: Object.keys(RATE_PERIODS) }, burst: count },
          },
          volume: {
            type: 'object',
            additionalProperties: false,
            required: ['per'],
            properties: { requests: count, tokens: tokenCount, per: { enum: VOLUME_PERIODS } },
          },
        },
      },
    },
  },
}

export type QuotaParse = { ok: true; rules: QuotaRule[] } | { ok: false; issues: Issue[] }

export function parseQuotaDocument(text: YamlSource, path = QUOTAS_PATH): QuotaParse {
  const parsed = parseYaml(text, path)
  if (!parsed.ok) return parsed
  const data = parsed.value.data ?? { rules: [] }
  const issues = validateAgainst(schema, data)
  if (!issues.length) {
    const rules = (data as { rules: QuotaRule[] }).rules
    rules.forEach((r, i) => {
      if (!r.rate && !r.volume) issues.push({ pointer: `/rules/${i}`, message: 'a rule needs a rate, a volume, or both' })
      if (r.volume && r.volume.requests === undefined && r.volume.tokens === undefined)
        issues.push({ pointer: `/rules/${i}/volume`, message: 'a volume needs requests, tokens, or both' })
      if (r.match.tool?.includes('*') && r.match.tool.indexOf('*') !== r.match.tool.length - 1)
        issues.push({ pointer: `/rules/${i}/match/tool`, message: "'*' may only end a tool pattern (a prefix, such as petstore__*)" })
    })
  }
  if (issues.length) return { ok: false, issues: locate(parsed.value, issues, path) }
  return { ok: true, rules: (data as { rules: QuotaRule[] }).rules }
}

/** Write-time check for the documents API: [] for other paths. */
export function checkQuotaDocument(path: string, body: YamlSource): Issue[] {
  if (path !== QUOTAS_PATH) return []
  const r = parseQuotaDocument(body, path)
  return r.ok ? [] : r.issues
}

export const placeRules = (rules: QuotaRule[], layer: PlacedRule['layer']): PlacedRule[] =>
  rules.map((r, index) => ({ ...r, layer, index, id: sha256(JSON.stringify(r)).slice(0, 16) }))

/** What a rule's selectors look at. */
export interface QuotaSubject {
  project: string
  role?: string
  tool: string
  type: string
  labels: readonly string[]
}

export function matches(m: QuotaMatch, s: QuotaSubject): boolean {
  if (m.project !== undefined && m.project !== s.project) return false
  if (m.role !== undefined && m.role !== s.role) return false
  if (m.type !== undefined && m.type !== s.type) return false
  if (m.label !== undefined && !s.labels.includes(m.label)) return false
  if (m.tool !== undefined) {
    if (m.tool.endsWith('*') ? !s.tool.startsWith(m.tool.slice(0, -1)) : m.tool !== s.tool) return false
  }
  return true
}

/** One counted window of a rule: its cap and where it starts and ends (epoch ms). */
export interface QuotaWindow {
  /** `rate`, `burst`, `volume` (requests) or `tokens`: which part of the rule this window enforces. */
  kind: 'rate' | 'burst' | 'volume' | 'tokens'
  limit: number
  start: number
  end: number
}

/**
 * The windows a rule counts at `now`. Windows are fixed (aligned to the epoch, or to the UTC
 * day/month), so containers agree on them without talking. A `burst` smaller than `requests`
 * adds a shorter window — per × burst / requests long, capped at `burst` — so 10 a minute with
 * burst 5 admits at most 5 in any aligned 30 s: the spread a token bucket would give, in counters.
 */
export function windowsOf(rule: QuotaRule, now: number): QuotaWindow[] {
  const out: QuotaWindow[] = []
  if (rule.rate) {
    const len = RATE_PERIODS[rule.rate.per]
    out.push(aligned('rate', rule.rate.requests, len, now))
    const burst = rule.rate.burst
    if (burst !== undefined && burst < rule.rate.requests)
      out.push(aligned('burst', burst, Math.max(1, Math.floor((len * burst) / rule.rate.requests)), now))
  }
  if (rule.volume) {
    const d = new Date(now)
    const start =
      rule.volume.per === 'day'
        ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
        : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    const end = rule.volume.per === 'day' ? start + 86_400_000 : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
    if (rule.volume.requests !== undefined) out.push({ kind: 'volume', limit: rule.volume.requests, start, end })
    if (rule.volume.tokens !== undefined) out.push({ kind: 'tokens', limit: rule.volume.tokens, start, end })
  }
  return out
}

function aligned(kind: QuotaWindow['kind'], limit: number, len: number, now: number): QuotaWindow {
  const start = now - (now % len)
  return { kind, limit, start, end: start + len }
}
