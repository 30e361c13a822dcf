/**
 * Composition of the agent surface (recipes, processes, manifest, learned limits) — kept beside
 * deps.ts, which imports it on the first request that needs it (a process, a manifest, MCP,
 * learned limits, usage insights): a cold start that serves a tool call never loads this code.
 */
import './lazy/shared' // one shared chunk for all lazily loaded code: see there
import type { BundledLayer } from '../lib/documents/bundled'
import type { DocumentCascade } from '../lib/documents/cascade'
import type { DocumentStore } from '../lib/documents/ports'
import { SurfaceDocuments } from '../lib/recipes/catalog'
import type { ProcessStore } from '../lib/recipes/ports'
import { ProcessService } from '../lib/recipes/spawn'
import { DEFAULT_SPAWN_RATE, SpawnRate } from '../lib/recipes/spawn-rate'
import type { Clock } from '../lib/runtime/clock'
import { once } from '../lib/runtime/deferred'
import type { Logger } from '../lib/runtime/logger'
import { MemoryObservedLimitStore } from '../lib/stores/memory/observed-limit-store'
import { MemoryProcessStore } from '../lib/stores/memory/process-store'
import { type ObservedLimitStore, ObservedLimits } from '../lib/surface/limits'
import { DEFAULT_SURFACE_SETTINGS, type DemandSource, SurfaceService, type SurfaceSettings } from '../lib/surface/surface'
import { executeCodeTool } from '../lib/tools/builtins/execute_code'
import { META_BUILTINS } from '../lib/tools/builtins/meta'
import type { ServerToolService } from '../lib/tools/service'
import type { ScriptSandbox } from '../lib/tools/types/scripted'
import type { RoleSurfaceLookup } from '../lib/usage/service'
import { roleSurfaceLookup } from './usage-deps'

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
  /** Code mode's sandbox: the one the container's scripts run in. */
  sandbox?: ScriptSandbox
}

export interface AgentSurface {
  processes: ProcessService
  surface: SurfaceService
  observedLimits: ObservedLimits
  surfaceDocuments: SurfaceDocuments
  /** What each role's processes are offered (usage insights). */
  roleSurfaces: RoleSurfaceLookup
}

export function buildAgentSurface(o: AgentSurfaceOptions): AgentSurface {
  const settings = { ...DEFAULT_SURFACE_SETTINGS, ...definedOnly(o.settings ?? {}) }
  const surfaceDocuments = new SurfaceDocuments({ store: o.store, cascade: o.cascade, bundled: o.bundled })
  const store = o.processStore ?? new MemoryProcessStore()
  const observedLimits = new ObservedLimits({
    store: o.observedLimitStore ?? new MemoryObservedLimitStore(),
    documents: surfaceDocuments,
    log: o.log,
    clock: o.clock,
    settings: definedOnly({ minimum: settings.learnedLimitMinimum, ttlMs: settings.learnedLimitTtlMs }),
  })
  const processes = new ProcessService({
    tools: o.tools,
    documents: surfaceDocuments,
    processes: store,
    clock: o.clock,
    log: o.log,
    processTtlMs: settings.processTtlMs,
    ...(settings.mcpSessionIdleMs !== undefined ? { mcpSessionIdleMs: settings.mcpSessionIdleMs } : {}),
    spawnRate: new SpawnRate({ ...DEFAULT_SPAWN_RATE, ...settings.spawnRate }, o.clock),
    ...(o.store.freshen ? { freshen: (tenant: string) => o.store.freshen?.(tenant) ?? Promise.resolve() } : {}),
  })
  const surface = new SurfaceService({
    tools: o.tools,
    documents: surfaceDocuments,
    processes,
    store,
    limits: observedLimits,
    metaTools: META_BUILTINS,
    ...(o.sandbox
      ? { codeTool: executeCodeTool({ sandbox: o.sandbox, stripTypes: once(async () => (await import('./lazy/typescript')).stripTypes) }) }
      : {}),
    log: o.log,
    clock: o.clock,
    settings,
    ...(o.demand ? { demand: o.demand } : {}),
  })
  return { processes, surface, observedLimits, surfaceDocuments, roleSurfaces: roleSurfaceLookup({ processes, surface, log: o.log }) }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}
