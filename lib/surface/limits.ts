/**
 * Learned tool limits (spec §14.1 "self-correction on drift"): an endpoint that rejects a tools
 * array says how many it takes; the number is persisted (minimum ever seen, per tenant and
 * `instance/model`), so every Lambda container learns from one rejection.
 */
import { invalidInput } from '../errors'
import { parseModelRef } from '../models/documents'
import type { SurfaceDocuments } from '../recipes/catalog'
import type { Clock } from '../runtime/clock'
import { iso } from '../runtime/clock'
import type { Logger } from '../runtime/logger'

/**
 * The key a learned limit is stored under: `instance/model` trimmed and lower-cased, so a backend
 * (or a recipe) that spells the model `GLM-5` still gets the limit learned for `glm-5`.
 */
export const endpointKey = (endpoint: string) => endpoint.trim().toLowerCase()

export interface ObservedLimitRecord {
  tenant: string
  /** `instance/model`; adapters key it with endpointKey. */
  endpoint: string
  maxTools: number
  observedAt: string
  requestedToolCount?: number
  errorMessage?: string
}

export interface ObservedLimitStore {
  /**
   * Keeps the minimum: stores `record` when no limit is stored or the stored one is larger
   * (atomically — a concurrent larger value never overwrites a smaller one). Returns the limit
   * stored afterwards and whether this call lowered it.
   */
  lower(record: ObservedLimitRecord): Promise<{ maxTools: number; lowered: boolean }>
  /**
   * The stored limits of the given endpoints (absent ones left out), in one round trip. Endpoints
   * match by endpointKey; the map is keyed by the endpoints as given.
   */
  getMany(tenant: string, endpoints: readonly string[]): Promise<Map<string, number>>
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
  reason?: string
  advice?: string
}

export class ObservedLimits {
  constructor(private readonly deps: { store: ObservedLimitStore; documents: SurfaceDocuments; log: Logger; clock: Clock }) {}

  /** Learned limits for a chain's entries (absent = nothing learned). */
  forChain(tenant: string, chain: readonly string[]): Promise<Map<string, number>> {
    return chain.length ? this.deps.store.getMany(tenant, chain) : Promise.resolve(new Map())
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
      this.deps.store.getMany(tenant, [model]),
    ])
    const entry = catalog.entries[0]
    const previous = learnedBefore.get(model)
    const inForce = (learned: number | undefined) => {
      const values = [entry.catalog, learned].filter((v): v is number => v !== undefined)
      return values.length ? Math.min(...values) : null
    }
    const where = `models/${ref.instance}/${ref.model}.yaml (or models/${ref.instance}/_provider.yaml for every model of '${ref.instance}')`
    const parsed = parseToolLimitRejection(req.errorMessage)
    if (!parsed.recognised) {
      return {
        learned: false,
        model,
        limit: inForce(previous),
        ...(previous !== undefined ? { previous } : {}),
        reason: `the error message is not a tool-count rejection this service recognises; if the endpoint limits tools, set maxTools for this model in ${where}`,
      }
    }
    if (parsed.maxTools === undefined) {
      const asked = req.requestedToolCount !== undefined ? ` (it was sent ${req.requestedToolCount})` : ''
      return {
        learned: false,
        model,
        limit: inForce(previous),
        ...(previous !== undefined ? { previous } : {}),
        reason: `the endpoint rejected the tools array${asked} but did not name its maximum; set maxTools for this model in ${where}`,
      }
    }
    const observed = parsed.maxTools
    const stored = await this.deps.store.lower({
      tenant,
      endpoint: model,
      maxTools: observed,
      observedAt: iso(this.deps.clock.now()),
      ...(req.requestedToolCount !== undefined ? { requestedToolCount: req.requestedToolCount } : {}),
      errorMessage: req.errorMessage.slice(0, 1000),
    })
    const advice = `make it permanent with 'maxTools: ${stored.maxTools}' in ${where}`
    if (!stored.lowered) {
      return {
        learned: false,
        model,
        observed,
        limit: inForce(stored.maxTools),
        previous: stored.maxTools,
        reason: `a limit of ${stored.maxTools} (not above ${observed}) was already learned for ${model}`,
        advice,
      }
    }
    this.deps.log.log('warn', 'model.tool_limit_learned', {
      tenant,
      model,
      maxTools: stored.maxTools,
      previous,
      requestedToolCount: req.requestedToolCount,
      advice,
    })
    return { learned: true, model, observed, limit: inForce(stored.maxTools), ...(previous !== undefined ? { previous } : {}), advice }
  }
}
