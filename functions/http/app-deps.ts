// What the HTTP layer is built from. A module of its own so that the route modules can name it
// without importing functions/http/app.ts, which imports them all.

import type { AuditStore } from '../../lib/audit/ports'
import type { AuditRecorder } from '../../lib/audit/recorder'
import type { YamlParsing } from '../../lib/config/yaml'
import type { DocumentService } from '../../lib/documents/service'
import type { QuotaLimiter } from '../../lib/quotas/limiter'
import type { QuotaCounterStore } from '../../lib/quotas/ports'
import type { ProcessService } from '../../lib/recipes/spawn'
import type { Clock } from '../../lib/runtime/clock'
import type { AsyncMethods } from '../../lib/runtime/deferred'
import type { FairGate } from '../../lib/runtime/fair-gate'
import type { Logger } from '../../lib/runtime/logger'
import type { Metrics } from '../../lib/runtime/metrics'
import type { Tracer } from '../../lib/runtime/tracer'
import type { SecretStore } from '../../lib/secrets/ports'
import type { ObservedLimits } from '../../lib/surface/limits'
import type { SurfaceService } from '../../lib/surface/surface'
import type { ToolDispatcher } from '../../lib/tools/dispatcher'
import type { ServerToolService } from '../../lib/tools/service'
import type { UsageService } from '../../lib/usage/service'
import type { ConsoleAsset } from './console/routes'
import type { AuthSettings } from './token-verifier'

export interface AppDeps {
  tools: ServerToolService
  documents: DocumentService
  dispatcher: ToolDispatcher
  /** Usage counting (already listening on the dispatcher), demand for the triage, insights. */
  usage: UsageService
  /** Quota admission (already asked by the dispatcher) and its shared counters, for GET /quotas. */
  quotas: { limiter: QuotaLimiter; store: QuotaCounterStore }
  /** Spawn and look up processes (recipes, engines, frozen allowed lists). */
  processes: AsyncMethods<ProcessService>
  /** Per-turn manifests and tool calls through a process's surface. */
  surface: AsyncMethods<SurfaceService>
  /** Endpoint tool limits learned from rejections. */
  observedLimits: AsyncMethods<ObservedLimits>
  /** Tenant secrets, write-only over HTTP, read by tools for `${secret:NAME}`. */
  secrets: SecretStore
  /** HS256 secret, identity provider, token lifetime cap, public base URL (functions/settings.ts). */
  auth: AuthSettings
  /** The console's browser files (functions/console-assets.ts reads them from disk on first use). */
  consoleAssets: () => Map<string, ConsoleAsset>
  /** Code the HTTP layer loads on first use; the composition root says how (functions/lazy/*). */
  modules: HttpModules
  /** Spans and metrics (functions/observability); `ready()` loads the tracer the first request needs. */
  observability: { tracer: Tracer; metrics: Metrics; ready(): Promise<void> | undefined }
  /** The audit log: entries recorded during a request, written after it (flush), read by GET /audit. */
  audit: { recorder: AuditRecorder; store: AuditStore }
  log: Logger
  clock: Clock
  /**
   * Admits each tenant's requests by its share of the main thread (lib/runtime/fair-gate.ts). On
   * Lambda a container serves one request at a time, so it never holds one there. Absent: none (FAIR_SHARE=off).
   */
  fairShare?: FairGate
  /** Where tenant YAML is parsed: bodies and documents over a few KiB in a worker pool (lib/config/yaml-pool.ts). */
  yaml: YamlParsing
}

/**
 * What the HTTP layer loads on first use: the OpenAPI document, the MCP endpoint's protocol half
 * and the console's pages. The composition root supplies the loaders (functions/lazy/*), so this
 * code lands in the one chunk all lazily loaded code shares (functions/lazy/shared.ts).
 */
export interface HttpModules {
  openapi(): Promise<Pick<typeof import('./openapi'), 'openApiDocument'>>
  mcpProtocol(): Promise<McpProtocol>
  consolePages(): Promise<Pick<typeof import('./console/pages'), 'renderPage'>>
}

/** The protocol half: lib/surface/mcp-server.ts, mcp-modern.ts and the v2 SDK's web-standard transport (loaded by AppDeps.modules). */
export type McpProtocol = typeof import('../../lib/surface/mcp-server') &
  typeof import('../../lib/surface/mcp-modern') &
  Pick<typeof import('@modelcontextprotocol/server'), 'WebStandardStreamableHTTPServerTransport'>
