/**
 * Composition of the agent surface (recipes, processes, manifest, learned limits) — kept beside
 * deps.ts so the composition root only wires it in. Also reads its deployment settings from the
 * environment (edge only).
 */
import type { BundledLayer } from '../lib/documents/bundled'
import type { DocumentCascade } from '../lib/documents/cascade'
import type { DocumentStore } from '../lib/documents/ports'
import { SurfaceDocuments } from '../lib/recipes/catalog'
import type { ProcessStore } from '../lib/recipes/ports'
import { ProcessService } from '../lib/recipes/spawn'
import type { Clock } from '../lib/runtime/clock'
import type { Logger } from '../lib/runtime/logger'
import { MemoryObservedLimitStore } from '../lib/stores/memory/observed-limit-store'
import { MemoryProcessStore } from '../lib/stores/memory/process-store'
import { ObservedLimits, type ObservedLimitStore } from '../lib/surface/limits'
import { DEFAULT_SURFACE_SETTINGS, type DemandSource, SurfaceService, type SurfaceSettings } from '../lib/surface/surface'
import { invokeToolTool } from '../lib/tools/builtins/invoke_tool'
import { toolDescriptionTool } from '../lib/tools/builtins/tool_description'
import { toolListTool } from '../lib/tools/builtins/tool_list'
import type { ServerToolService } from '../lib/tools/service'

/** The meta-tools: registered as built-ins and resolved by the process surface itself. */
export const META_BUILTINS = [toolListTool, toolDescriptionTool, invokeToolTool]

export interface AgentSurfaceOptions {
  store: DocumentStore
  cascade: DocumentCascade
  bundled: BundledLayer
  tools: ServerToolService
  log: Logger
  clock: Clock
  processStore?: ProcessStore
  observedLimitStore?: ObservedLimitStore
  settings?: Partial<SurfaceSettings>
  demand?: DemandSource
}

export interface AgentSurface {
  processes: ProcessService
  surface: SurfaceService
  observedLimits: ObservedLimits
  surfaceDocuments: SurfaceDocuments
}

export function buildAgentSurface(o: AgentSurfaceOptions): AgentSurface {
  const settings = { ...DEFAULT_SURFACE_SETTINGS, ...definedOnly(o.settings ?? {}) }
  const surfaceDocuments = new SurfaceDocuments({ store: o.store, cascade: o.cascade, bundled: o.bundled })
  const store = o.processStore ?? new MemoryProcessStore()
  const observedLimits = new ObservedLimits({ store: o.observedLimitStore ?? new MemoryObservedLimitStore(), documents: surfaceDocuments, log: o.log, clock: o.clock })
  const processes = new ProcessService({ tools: o.tools, documents: surfaceDocuments, processes: store, clock: o.clock, log: o.log, processTtlMs: settings.processTtlMs })
  const surface = new SurfaceService({
    tools: o.tools,
    documents: surfaceDocuments,
    processes,
    store,
    limits: observedLimits,
    metaTools: META_BUILTINS,
    log: o.log,
    clock: o.clock,
    settings,
    ...(o.demand ? { demand: o.demand } : {}),
  })
  return { processes, surface, observedLimits, surfaceDocuments }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** `TOOL_BUDGET_RESERVE` (slots kept free for the engine's own action tool; default 1). */
export function surfaceSettingsFromEnv(env: Record<string, string | undefined> = process.env): Partial<SurfaceSettings> {
  const raw = env.TOOL_BUDGET_RESERVE
  if (raw === undefined || raw === '') return {}
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 64) throw new Error(`TOOL_BUDGET_RESERVE must be a whole number from 0 to 64, got '${raw}'`)
  return { reserve: n }
}
