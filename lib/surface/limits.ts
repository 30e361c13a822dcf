/**
 * Learned tool limits (spec §14.1 "self-correction on drift"): an endpoint that rejects a tools
 * array says how many it takes; the number is persisted per tenant and `instance/model`, so every
 * Lambda container learns from one rejection.
 *
 * A learned limit only ever shrinks manifests, so a false report is a denial of service on the
 * tenant's own processes (issue 21 N6: one report of "maximum 1" emptied every manifest forever).
 * So a report is believed only within bounds: it needs the `limits:report` scope, the rejected
 * request must have been longer than the maximum it names, the limit learned is never below the
 * capability floor + 1 nor below the deployment's minimum, it expires after a TTL, and it is
 * dropped as soon as the catalog's `maxTools` for the model is no longer the one it was learned
 * under (an operator who edits the catalog has decided).
 */

import { invalidInput } from '../errors'
import { parseModelRef } from '../models/documents'
import type { ChainEntryLimit, SurfaceDocuments } from '../recipes/catalog'
import type { Clock } from '../runtime/clock'
import { iso } from '../runtime/clock'
import type { Logger } from '../runtime/logger'
import { CAPABILITY_FLOOR } from './families'

/**
 * The key a learned limit is stored under: `instance/model` trimmed and lower-cased, so a backend
 * (or a recipe) that spells the model `GLM-5` still gets the limit learned for `glm-5`.
 */
export const endpointKey = (endpoint: string) => endpoint.trim().toLowerCase()

/** Defaults of the bounds on learned limits (deployment settings may raise the minimum). */
export const LEARNED_LIMIT_DEFAULTS = {
  /** No learned limit is below this (LEARNED_TOOL_LIMIT_MIN). */
  minimum: 8,
  /** A learned limit is forgotten this long after it was learned (LEARNED_TOOL_LIMIT_TTL_HOURS). */
  ttlMs: 7 * 24 * 3600_000,
} as const

/**
 * The catalog's verdict a limit was learned under: the number, `unlimited` or `none`. A learned
 * limit applies only while the catalog still says the same.
 */
export const catalogMark = (entry: Pick<ChainEntryLimit, 'catalog' | 'catalogSource'>): string =>
  entry.catalog !== undefined ? String(entry.catalog) : entry.catalogSource === 'unlimited' ? 'unlimited' : 'none'

export interface ObservedLimitRecord {
  tenant: string
  /** `instance/model`; adapters key it with endpointKey. */
  endpoint: string
  maxTools: number
  observedAt: string
  /** Epoch seconds after which the record is ignored (DynamoDB's TTL attribute; read filters it too). */
  expiresAt: number
  /** catalogMark of the model when the limit was learned. */
  catalog: string
  requestedToolCount?: number
  errorMessage?: string
}

/** A stored limit as read back. */
export interface LearnedLimit {
  maxTools: number
  catalog: string
}

export interface ObservedLimitStore {
  /**
   * Keeps the minimum of the live records: stores `record` when no limit is stored, the stored
   * one is larger, has expired at `nowSec`, or was learned under another catalog mark
   * (atomically — a concurrent larger value never overwrites a smaller live one). Returns the
   * limit stored afterwards and whether this call lowered (or replaced) it.
   */
  lower(record: ObservedLimitRecord, nowSec: number): Promise<{ maxTools: number; lowered: boolean }>
  /**
   * The live (not expired at `nowSec`) limits of the given endpoints (absent ones left out), in
   * one round trip. Endpoints match by endpointKey; the map is keyed by the endpoints as given.
   */
  getMany(tenant: string, endpoints: readonly string[], nowSec: number): Promise<Map<string, LearnedLimit>>
}

const RECOGNISERS = [/array_above_max_length/i, /['"`]tools['"`][\s\S]{0,200}?\btoo (?:long|many)\b/i, /\btoo many (?:tools|functions)\b/i]
const NUMBER = /\bmaximum (?:length|of)\s*(?:of\s*)?(\d{1,6})\b/i

/** Whether an endpoint's error says the tools array was too long, and the maximum it names. */
export function parseToolLimitRejection(message: string): { recognised: boolean; maxTools?: number } {
  const recognised = RECOGNISERS.some((r) => r.test(message))
  if (!recognised) return { recognised }
  const m = NUMBER.exec(message)
  const n = m ? Number(m[1]) : undefined
  return n !== undefined && n >= 1 ? { recognised, maxTools: n } : { recognised }
}

export interface LearnRequest {
  instance: string
  model: string
  errorMessage: string
  requestedToolCount?: number
  /** Project whose catalog layer decides the limit in force (default: the tenant layer). */
  project?: string
}

export interface LearnAnswer {
  learned: boolean
  model: string
  /** The number read from this rejection, when there was one. */
  observed?: number
  /** The limit in force for this model now: min(catalog, learned); null = none known. */
  limit: number | null
  /** The learned limit before this call, if any. */
  previous?: number
  /** When the limit learned by this call is forgotten. */
  expiresAt?: string
  reason?: string
  advice?: string
}

export interface ObservedLimitSettings {
  /** No learned limit below this (it is raised to the capability floor + 1 when lower). */
  minimum: number
  ttlMs: number
}

export class ObservedLimits {
  private readonly settings: ObservedLimitSettings
  constructor(
    private readonly deps: {
      store: ObservedLimitStore
      documents: SurfaceDocuments
      log: Logger
      clock: Clock
      settings?: Partial<ObservedLimitSettings>
    },
  ) {
    this.settings = { ...LEARNED_LIMIT_DEFAULTS, ...deps.settings }
  }

  /** The lowest limit a report can set: the capability floor plus one tool, and the deployment's minimum. */
  get floor(): number {
    return Math.max(CAPABILITY_FLOOR.length + 1, this.settings.minimum)
  }

  private nowSec() {
    return Math.floor(this.deps.clock.now() / 1000)
  }

  /** Learned limits for a chain's entries (absent = nothing learned, or expired). */
  forChain(tenant: string, chain: readonly string[]): Promise<Map<string, LearnedLimit>> {
    return chain.length ? this.deps.store.getMany(tenant, chain, this.nowSec()) : Promise.resolve(new Map())
  }

  /** The learned limit that applies to a chain entry: none once the catalog says something else than when it was learned. */
  static applicable(entry: ChainEntryLimit, learned: LearnedLimit | undefined): number | undefined {
    return learned && learned.catalog === catalogMark(entry) ? learned.maxTools : undefined
  }

  async learn(tenant: string, req: LearnRequest): Promise<LearnAnswer> {
    // Instances are lower case in the catalog; the model keeps its spelling for the catalog lookup
    // and the store folds it (endpointKey).
    const model = `${req.instance.trim().toLowerCase()}/${req.model.trim()}`
    const ref = parseModelRef(model)
    if (typeof ref === 'string') throw invalidInput(ref, [{ pointer: '/model', message: ref }])
    const project = req.project ?? '_tenant'
    const [catalog, learnedBefore] = await Promise.all([
      this.deps.documents.chainLimits(tenant, project, [model]),
      this.forChain(tenant, [model]),
    ])
    const entry = catalog.entries[0]
    const previous = ObservedLimits.applicable(entry, learnedBefore.get(model))
    const inForce = (learned: number | undefined) => {
      const values = [entry.catalog, learned].filter((v): v is number => v !== undefined)
      return values.length ? Math.min(...values) : null
    }
    const where = `models/${ref.instance}/${ref.model}.yaml (or models/${ref.instance}/_provider.yaml for every model of '${ref.instance}')`
    const unchanged = (reason: string, observed?: number) => ({
      learned: false,
      model,
      ...(observed !== undefined ? { observed } : {}),
      limit: inForce(previous),
      ...(previous !== undefined ? { previous } : {}),
      reason,
    })
    const parsed = parseToolLimitRejection(req.errorMessage)
    if (!parsed.recognised)
      return unchanged(
        `the error message is not a tool-count rejection this service recognises; if the endpoint limits tools, set maxTools for this model in ${where}`,
      )
    if (parsed.maxTools === undefined) {
      const asked = req.requestedToolCount !== undefined ? ` (it was sent ${req.requestedToolCount})` : ''
      return unchanged(
        `the endpoint rejected the tools array${asked} but did not name its maximum; set maxTools for this model in ${where}`,
      )
    }
    const named = parsed.maxTools
    // A rejection of an array no longer than the maximum it names is not a rejection for length.
    if (req.requestedToolCount === undefined || req.requestedToolCount <= named)
      return unchanged(
        `a rejection naming a maximum of ${named} is only believed for a request with more tools than that; send requestedToolCount (the length of the tools array that was rejected)`,
        named,
      )
    const learnt = Math.max(named, this.floor)
    const now = this.deps.clock.now()
    const stored = await this.deps.store.lower(
      {
        tenant,
        endpoint: model,
        maxTools: learnt,
        observedAt: iso(now),
        expiresAt: Math.floor((now + this.settings.ttlMs) / 1000),
        catalog: catalogMark(entry),
        requestedToolCount: req.requestedToolCount,
        errorMessage: req.errorMessage.slice(0, 1000),
      },
      Math.floor(now / 1000),
    )
    const raised = learnt > named ? ` (raised from ${named}: no learned limit is below ${this.floor})` : ''
    const advice = `make it permanent with 'maxTools: ${stored.maxTools}' in ${where}`
    if (!stored.lowered) {
      return {
        learned: false,
        model,
        observed: named,
        limit: inForce(stored.maxTools),
        previous: stored.maxTools,
        reason: `a limit of ${stored.maxTools} (not above ${learnt}) was already learned for ${model}`,
        advice,
      }
    }
    this.deps.log.log('warn', 'model.tool_limit_learned', {
      tenant,
      model,
      maxTools: stored.maxTools,
      named,
      previous,
      requestedToolCount: req.requestedToolCount,
      expiresAt: iso(now + this.settings.ttlMs),
      advice,
    })
    return {
      learned: true,
      model,
      observed: named,
      limit: inForce(stored.maxTools),
      ...(previous !== undefined ? { previous } : {}),
      expiresAt: iso(now + this.settings.ttlMs),
      advice: `${advice}${raised}`,
    }
  }
}
