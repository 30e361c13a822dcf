/**
 * Classification per turn (spec §13, §14.2): buckets primary / deferred / activated, then the
 * budget triage over primary ∪ activated by whole families in tiers. Pure and deterministic:
 * identical input → identical output (every order is total).
 */
import { jsonBytes } from '../config/expansion-budget'
import { ServerToolsError } from '../errors'
import type { ProcessRecord } from '../recipes/ports'
import type { Tool } from '../tools/contracts'
import { familyOf, isFloor, RuleMatcher } from './families'
import { wireName } from './formats'

/** The endpoint's limits beyond the count (the catalog's profile, strictest over the chain). */
export interface EndpointLimits {
  /** A tool whose name and aliases are all longer is demoted with its family. */
  maxToolNameLength?: number
  /** The manifest's tools (name, description, input schema as JSON) stay within this many bytes. */
  maxSchemaBytes?: number
}

/** Why a family left the manifest: the count, a name the endpoint refuses, or the schema bytes. */
export type DemotionReason = 'count' | 'nameLength' | 'schemaBytes'

const measured = new WeakMap<Tool, number>()
/** A tool's JSON bytes as the endpoint counts them, measured once per tool object (stops at `cap`). */
export function toolBytes(t: Tool, cap: number): number {
  const known = measured.get(t)
  if (known !== undefined) return known
  const bytes = jsonBytes({ name: t.name, description: t.description, input_schema: t.inputSchema }, cap)
  if (bytes <= cap) measured.set(t, bytes)
  return bytes
}

export type Bucket = 'primary' | 'deferred' | 'activated'

/**
 * Triage tiers, most important first (spec §14.2; 0 = the floor, never demoted). `handwritten` is
 * the spec's "Built-in: handwritten Server Tools" class — every single tool that is not a pack
 * sub-tool, a tenant's or project's own as much as one shipped in the code. It is not named
 * `builtin`: that word is the code layer (a tool's `source`), and a tenant's tool is not in it.
 */
export const TIER = { floor: 0, activated: 1, keep: 2, add: 3, handwritten: 4, pack: 5, dropFirst: 6 } as const

export interface ClassifyInput {
  /** Visible tools (allowed ∩ resolvable, the floor included), any order. */
  tools: readonly Tool[]
  process: Pick<ProcessRecord, 'promoted' | 'added' | 'deferred' | 'keep' | 'dropFirst' | 'activations' | 'activationTtlMs'>
  now: number
  /** At most this many activations keep their class (the most recent ones). */
  maxActivated: number
  /** The endpoint limit (min over the chain); undefined = no known limit. */
  limit?: number
  /** Slots held back for the engine's own action tool. */
  reserve: number
  /** Measured demand per tool name (0 when absent). */
  demand?: ReadonlyMap<string, number>
  /** Skill tools for this turn (spec §14.2 withAdditional): primary, ranked as keep, split off their family. */
  extraKeep?: ReadonlySet<string>
  /** Name length and schema size the endpoint accepts; absent = none known. */
  endpoint?: EndpointLimits
}

export interface BudgetFacts {
  limit: number | null
  reserved: number
  effective: number | null
  demoted: number
  demotedFamilies: string[]
  /** Families demoted for a reason other than the count (present only when there are some). */
  demotedFor?: Record<string, Exclude<DemotionReason, 'count'>>
  /** The manifest's bytes as maxSchemaBytes counts them (present only when the endpoint has that limit). */
  schemaBytes?: number
  maxSchemaBytes?: number
}

export interface DemotedGroup {
  family: string
  tier: number
  names: string[]
  reason: DemotionReason
}

export type TierName = keyof typeof TIER
const TIER_NAMES = Object.fromEntries(Object.entries(TIER).map(([k, v]) => [v, k])) as Record<number, TierName>

/** One triage unit as the turn treated it: kept, demoted, or never triaged (deferred, grouped by family). */
export interface FamilyGroup {
  family: string
  /** Alphabetical. */
  names: string[]
  status: 'kept' | 'demoted' | 'deferred'
  /** The triage tier; for deferred groups the tier they would rank in once activated. */
  tier: TierName
  /** Demoted for a reason other than the count. */
  reason?: Exclude<DemotionReason, 'count'>
}

export interface Turn {
  /** The tools array: alphabetical whatever the ranking. */
  manifest: Tool[]
  /** Deferred tools minus this turn's demoted ones, alphabetical (the static discovery block). */
  deferred: Tool[]
  /** Exactly this turn's demoted tools, alphabetical (the dynamic block). */
  demoted: Tool[]
  /** Demoted groups in demotion order (for the logs). */
  demotedGroups: DemotedGroup[]
  bucket: ReadonlyMap<string, Bucket>
  /** Activations that count this turn (fresh and within the cap), name → timestamp. */
  activeActivations: ReadonlyMap<string, number>
  inManifest: ReadonlySet<string>
  budget: BudgetFacts
  /** Every visible tool's group: the floor and kept groups in rank order, then demoted in demotion order, then deferred by family. */
  groups: FamilyGroup[]
}

const byName = (a: Tool, b: Tool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

interface Group {
  key: string
  family: string
  members: Tool[]
  tier: number
  recency: number
  demand: number
}

export function classify(input: ClassifyInput): Turn {
  const p = input.process
  const promoted = new Set(p.promoted)
  const added = new Set(p.added)
  const deferForced = new Set(p.deferred)
  const keep = new RuleMatcher(p.keep)
  const dropFirst = new RuleMatcher(p.dropFirst)
  const extra = input.extraKeep ?? new Set<string>()
  const tools = [...input.tools].sort(byName)

  // Fresh activations, most recent first; only the newest maxActivated keep their class.
  const fresh: [string, number][] = []
  for (const t of tools) {
    const at = p.activations[t.name]
    if (at !== undefined && input.now - at < p.activationTtlMs && !isFloor(t.name)) fresh.push([t.name, at])
  }
  fresh.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  const freshAt = new Map(fresh)
  const active = new Map(fresh.slice(0, Math.max(0, input.maxActivated)))

  const bucket = new Map<string, Bucket>()
  const floor: Tool[] = []
  const candidates: Tool[] = []
  const deferred: Tool[] = []
  for (const t of tools) {
    if (isFloor(t.name)) {
      bucket.set(t.name, 'primary')
      floor.push(t)
      continue
    }
    let b: Bucket
    if (promoted.has(t.name) || extra.has(t.name)) b = 'primary'
    else if (deferForced.has(t.name)) b = 'deferred'
    else b = t.primary && !t.deferred ? 'primary' : 'deferred'
    if (b === 'deferred' && freshAt.has(t.name)) b = 'activated'
    bucket.set(t.name, b)
    if (b === 'deferred') deferred.push(t)
    else candidates.push(t)
  }

  const tierOf = (t: Tool): number => {
    if (active.has(t.name)) return TIER.activated
    if (keep.matches(t.name) || extra.has(t.name)) return TIER.keep
    if (dropFirst.matches(t.name)) return TIER.dropFirst
    if (bucket.get(t.name) === 'activated') return TIER.dropFirst // a stale activation: lost its class
    if (added.has(t.name)) return TIER.add
    return t.pack || t.name.includes('__') ? TIER.pack : TIER.handwritten
  }

  const budget: BudgetFacts = { limit: input.limit ?? null, reserved: 0, effective: null, demoted: 0, demotedFamilies: [] }
  const limit = input.limit
  if (limit !== undefined && floor.length > limit) {
    throw new ServerToolsError(
      'BUDGET_TOO_SMALL',
      `the model chain allows ${limit} tool${limit === 1 ? '' : 's'}, but the capability floor alone needs ${floor.length} (${floor.map((t) => t.name).join(', ')}); raise maxTools in the model catalog`,
      { limit, floor: floor.length, floorTools: floor.map((t) => t.name) },
    )
  }

  // Groups: whole families, except tools a keep/dropFirst entry (by name or prefix) or a skill names.
  const groups = new Map<string, Group>()
  for (const t of candidates) {
    const split = keep.splits(t.name) || dropFirst.splits(t.name) || extra.has(t.name)
    const family = split ? t.name : familyOf(t.name)
    const key = split ? `=${t.name}` : family
    let g = groups.get(key)
    if (!g) groups.set(key, (g = { key, family, members: [], tier: Infinity, recency: -Infinity, demand: 0 }))
    g.members.push(t)
    g.tier = Math.min(g.tier, tierOf(t))
    const at = freshAt.get(t.name)
    if (at !== undefined) g.recency = Math.max(g.recency, at)
    g.demand += input.demand?.get(t.name) ?? 0
  }
  const ranked = [...groups.values()].sort(
    (a, b) =>
      a.tier - b.tier ||
      b.recency - a.recency ||
      b.demand - a.demand ||
      (a.family < b.family ? -1 : a.family > b.family ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  )
  const floorGroups: FamilyGroup[] = floor.map((t) => ({ family: t.name, names: [t.name], status: 'kept', tier: 'floor' }))
  const groupOf = (g: Group, status: FamilyGroup['status']): FamilyGroup => ({
    family: g.family,
    names: g.members.map((t) => t.name).sort(),
    status,
    tier: TIER_NAMES[g.tier],
  })
  const deferredGroups = (): FamilyGroup[] => {
    const byFamily = new Map<string, { names: string[]; tier: number }>()
    for (const t of deferred) {
      const family = familyOf(t.name)
      let g = byFamily.get(family)
      if (!g) byFamily.set(family, (g = { names: [], tier: Infinity }))
      g.names.push(t.name)
      g.tier = Math.min(g.tier, tierOf(t))
    }
    return [...byFamily.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([family, g]) => ({ family, names: g.names, status: 'deferred', tier: TIER_NAMES[g.tier] }))
  }

  const endpoint = input.endpoint ?? {}
  const maxName = endpoint.maxToolNameLength
  const maxBytes = endpoint.maxSchemaBytes
  if (limit === undefined && maxName === undefined && maxBytes === undefined) {
    const manifest = [...floor, ...candidates].sort(byName)
    return {
      manifest,
      deferred,
      demoted: [],
      demotedGroups: [],
      bucket,
      activeActivations: active,
      inManifest: new Set(manifest.map((t) => t.name)),
      budget,
      groups: [...floorGroups, ...ranked.map((g) => groupOf(g, 'kept')), ...deferredGroups()],
    }
  }

  // The reserve never gives way to the floor: the engine's action tool goes on the wire beside the
  // manifest, so a floor that fits only by eating the reserve is a request the provider rejects.
  const reserved = limit === undefined ? 0 : Math.max(0, input.reserve)
  const effective = limit === undefined ? Infinity : limit - reserved
  if (limit !== undefined && floor.length > effective) {
    throw new ServerToolsError(
      'BUDGET_TOO_SMALL',
      `the model chain allows ${limit} tool${limit === 1 ? '' : 's'} (maxTools) and ${reserved} ${reserved === 1 ? 'is' : 'are'} reserved for the engine's own action tool, but the capability floor alone needs ${floor.length} (${floor.map((t) => t.name).join(', ')}); raise maxTools in the model catalog or lower the reserve`,
      { limit, reserved, floor: floor.length, floorTools: floor.map((t) => t.name) },
    )
  }
  budget.effective = limit === undefined ? null : effective
  budget.reserved = reserved

  // the name the renderings send (formats.ts wireName) must fit, not merely some alias
  const nameFits = (t: Tool) => {
    if (maxName === undefined) return true
    const sent = wireName(t, 64)
    return sent !== undefined && sent.length <= maxName
  }
  const unnamable = floor.filter((t) => !nameFits(t))
  if (unnamable.length)
    throw new ServerToolsError(
      'BUDGET_TOO_SMALL',
      `the model chain accepts tool names of at most ${maxName} characters (maxToolNameLength), but the capability floor needs ${unnamable.map((t) => t.name).join(', ')}; raise maxToolNameLength in the model catalog`,
      { maxToolNameLength: maxName, floorTools: unnamable.map((t) => t.name) },
    )
  // bytes are measured up to the limit plus one, so a schema of any size costs at most that
  const cap = maxBytes === undefined ? 0 : maxBytes + 1
  const bytesOf = (tools: readonly Tool[]) => {
    let sum = 0
    for (const t of tools) {
      sum += toolBytes(t, cap)
      if (sum > cap) return cap
    }
    return sum
  }
  let bytesRoom = maxBytes === undefined ? Infinity : maxBytes - bytesOf(floor)
  if (bytesRoom < 0)
    throw new ServerToolsError(
      'BUDGET_TOO_SMALL',
      `the model chain accepts ${maxBytes} bytes of tool definitions (maxSchemaBytes), but the capability floor alone takes more; raise maxSchemaBytes in the model catalog`,
      { maxSchemaBytes: maxBytes, floorTools: floor.map((t) => t.name) },
    )

  let room = effective - floor.length
  const kept: Tool[] = [...floor]
  const demoted: Tool[] = []
  const demotedGroups: DemotedGroup[] = []
  const keptGroups: FamilyGroup[] = []
  const demotedFamilyGroups: FamilyGroup[] = []
  const demotedFor: Record<string, Exclude<DemotionReason, 'count'>> = {}
  for (const g of ranked) {
    // a whole family goes: a family the model sees half of is worse than one it must discover
    const reason: DemotionReason | undefined = !g.members.every(nameFits)
      ? 'nameLength'
      : g.members.length > room
        ? 'count'
        : maxBytes !== undefined && bytesOf(g.members) > bytesRoom
          ? 'schemaBytes'
          : undefined
    if (reason === undefined) {
      room -= g.members.length
      if (maxBytes !== undefined) bytesRoom -= bytesOf(g.members)
      kept.push(...g.members)
      keptGroups.push(groupOf(g, 'kept'))
    } else {
      demoted.push(...g.members)
      demotedGroups.push({ family: g.family, tier: g.tier, names: g.members.map((t) => t.name), reason })
      demotedFamilyGroups.push(reason === 'count' ? groupOf(g, 'demoted') : { ...groupOf(g, 'demoted'), reason })
      if (reason !== 'count') demotedFor[g.family] = reason
    }
  }
  budget.demoted = demoted.length
  budget.demotedFamilies = demotedGroups.map((g) => g.family)
  if (Object.keys(demotedFor).length) budget.demotedFor = demotedFor
  if (maxBytes !== undefined) {
    budget.maxSchemaBytes = maxBytes
    budget.schemaBytes = maxBytes - bytesRoom
  }
  const manifest = kept.sort(byName)
  return {
    manifest,
    deferred,
    demoted: demoted.sort(byName),
    demotedGroups,
    bucket,
    activeActivations: active,
    inManifest: new Set(manifest.map((t) => t.name)),
    budget,
    groups: [...floorGroups, ...keptGroups, ...demotedFamilyGroups, ...deferredGroups()],
  }
}
