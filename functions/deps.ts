/**
 * Composition: builds the domain once per cold start from a store and settings. The only place
 * that decides which adapters, factories and built-ins make up the service.
 */

import type { AuditStore } from '../lib/audit/ports'
import { AuditRecorder } from '../lib/audit/recorder'
import type { RefusalDigestLimits } from '../lib/audit/refusal-digest'
import { offThreadValidation } from '../lib/config/argument-validation'
import { type OffThreadYaml, offThreadYaml, type YamlWorkerSettings } from '../lib/config/yaml-parsing'
import { type BundledFile, BundledLayer } from '../lib/documents/bundled'
import { DocumentCascade } from '../lib/documents/cascade'
import type { DocumentStore } from '../lib/documents/ports'
import { type DocumentCheck, DocumentService } from '../lib/documents/service'
import { StampedDocumentCache } from '../lib/documents/stamped-cache'
import type { AllowList } from '../lib/egress/allow-list'
import { type Egress, lazyEgress } from '../lib/egress/lazy'
import { OwnEndpoints } from '../lib/egress/own-endpoints'
import { checkTenantAllowListDocument, documentTenantAllowList } from '../lib/egress/tenant-allow-list'
import { tracedEgress } from '../lib/egress/traced'
import { wireClients } from '../lib/llm'
import { tracedWires } from '../lib/llm/traced'
import { checkMcpServerDocument, createMcpRuntime } from '../lib/mcp'
import { checkModelCatalogDocument } from '../lib/models/documents'
import { QuotaLimiter, QuotaRuleSource, reportedTokens, TOKEN_REPORTING_TYPES } from '../lib/quotas/limiter'
import type { QuotaCounterStore } from '../lib/quotas/ports'
import { checkQuotaDocument } from '../lib/quotas/rules'
import { checkSurfaceDocument } from '../lib/recipes/documents'
import type { ProcessStore } from '../lib/recipes/ports'
import type { Clock } from '../lib/runtime/clock'
import { systemClock } from '../lib/runtime/clock'
import { deferred, once } from '../lib/runtime/deferred'
import { FAIR_GATE_DEFAULTS, FairGate, type FairGateLimits } from '../lib/runtime/fair-gate'
import type { Logger } from '../lib/runtime/logger'
import { silentLogger } from '../lib/runtime/logger'
import { type Metrics, noopMetrics } from '../lib/runtime/metrics'
import { noopTracer, type Tracer } from '../lib/runtime/tracer'
import type { SandboxSettings } from '../lib/sandbox'
import { type LazySandbox, lazySandbox } from '../lib/sandbox/lazy'
import { tracedSandbox } from '../lib/sandbox/traced'
import { MemorySecretStore } from '../lib/secrets/memory'
import type { SecretStore } from '../lib/secrets/ports'
import { DynamoAuditStore } from '../lib/stores/aws/audit-store'
import { S3BlobStore } from '../lib/stores/aws/blob-store'
import { type AwsClients, makeAwsClients } from '../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../lib/stores/aws/document-store'
import { ReadBatcher } from '../lib/stores/aws/dynamo/read-batcher'
import type { AwsCredentials } from '../lib/stores/aws/dynamo/sigv4'
import { DynamoObservedLimitStore } from '../lib/stores/aws/observed-limit-store'
import { DynamoProcessStore } from '../lib/stores/aws/process-store'
import { DynamoQuotaCounterStore } from '../lib/stores/aws/quota-store'
import { DynamoTenantStampStore } from '../lib/stores/aws/tenant-stamp-store'
import { DynamoToolUsageStore } from '../lib/stores/aws/tool-usage-store'
import { newWriteId } from '../lib/stores/aws/write-ids'
import { MemoryAuditStore } from '../lib/stores/memory/audit-store'
import { MemoryDocumentStore } from '../lib/stores/memory/document-store'
import { MemoryQuotaCounterStore } from '../lib/stores/memory/quota-store'
import { MemoryTenantStampStore } from '../lib/stores/memory/tenant-stamp-store'
import { MemoryToolUsageStore } from '../lib/stores/memory/tool-usage-store'
import type { ObservedLimitStore } from '../lib/surface/limits'
import type { SurfaceSettings } from '../lib/surface/surface'
import { executeJavascriptTool } from '../lib/tools/builtins/execute_javascript'
import { META_BUILTINS } from '../lib/tools/builtins/meta'
import { whoamiTool } from '../lib/tools/builtins/whoami'
import type { Tool, ToolFactory } from '../lib/tools/contracts'
import { type AfterCallEvent, ToolDispatcher } from '../lib/tools/dispatcher'
import { BuiltinRegistry, FactoryRegistry } from '../lib/tools/registry'
import { ServerToolService } from '../lib/tools/service'
import { docLookupFactory } from '../lib/tools/types/doc_lookup'
import { McpToolFactory } from '../lib/tools/types/mcp'
import { McpServerToolFactory } from '../lib/tools/types/mcp_server'
import { PromptTemplateFactory } from '../lib/tools/types/prompt_template'
import { RestToolFactory } from '../lib/tools/types/rest'
import { RestApiToolFactory } from '../lib/tools/types/rest_api'
import { ScriptedToolFactory } from '../lib/tools/types/scripted'
import type { ToolUsageStore } from '../lib/usage/ports'
import { UsageService } from '../lib/usage/service'
import { lazyConsoleAssets } from './console-assets'
import { bundledDefaults } from './defaults'
import type { AppDeps } from './http/app-deps'
import { auditContext, requestContext } from './http/request-context'
import type { AuthSettings } from './http/token-verifier'
import type { AgentSurface } from './surface-deps'

export interface CoreOptions {
  store: DocumentStore
  jwtSecret: string
  /** The other token settings: identity provider, lifetime cap, public base URL (default: HS256 only, 30 days). */
  auth?: Omit<AuthSettings, 'jwtSecret'>
  bundledFiles?: BundledFile[]
  log?: Logger
  clock?: Clock
  /** Extra types and built-ins (tests prove packs with a factory of their own). */
  extraFactories?: ToolFactory[]
  extraBuiltins?: Tool[]
  /** Processes and learned tool limits (default: in memory; share them to model several containers). */
  processStore?: ProcessStore
  observedLimitStore?: ObservedLimitStore
  /** Agent-surface settings: budget reserve (TOOL_BUDGET_RESERVE, default 1), activation cap, process lifetime. */
  surface?: Partial<SurfaceSettings>
  /** Where usage counts go (default: in memory). */
  usageStore?: ToolUsageStore
  /** false: the usage counter does not listen (benches measure its cost). Default true. */
  countUsage?: boolean
  /** The one outbound HTTP client (default: nothing but public addresses, plus each tenant's egress/allow.yaml). */
  egress?: Egress
  /** Tenant secrets for `${secret:NAME}` (default: in memory). */
  secrets?: SecretStore
  /** The deployment egress allow-list (EGRESS_ALLOW_HOSTS / EGRESS_ALLOW_CIDRS); default: none. */
  egressAllow?: AllowList
  /** The service's own listeners, which no tool may call whatever the allow-lists say. */
  ownEndpoints?: OwnEndpoints
  /**
   * Sandbox limits for scripted tools and execute_javascript (memory default 32 MiB:
   * SANDBOX_MEMORY_MB) and where scripts run (SANDBOX_ISOLATION; default `worker`).
   */
  sandbox?: SandboxSettings
  /** The YAML parse workers: texts over 2 KiB are parsed there (lib/config/yaml-parsing.ts). */
  yaml?: YamlWorkerSettings
  /** Spans and metrics (default: neither; functions/observability builds them from the environment). */
  observability?: AppDeps['observability']
  /** Where audit entries go (default: in memory). */
  auditStore?: AuditStore
  /** AUDIT_RETENTION_DAYS (default 365); the entry's TTL. */
  auditRetentionDays?: number
  /** 0: audit entries are written only at explicit flushes (the Lambda edge; tests). Default 250 ms. */
  auditFlushDelayMs?: number
  /** How many entries refusals may cost a window (default REFUSAL_DIGEST_LIMITS; lib/audit/refusal-digest.ts). */
  auditRefusals?: RefusalDigestLimits
  /** The fair-share gate's limits (default FAIR_GATE_DEFAULTS; docs/reference/limits.md); false: no gate (FAIR_SHARE=off). */
  fairShare?: Partial<FairGateLimits> | false
  /** Shared quota counters (default: in memory, so one container's view). */
  quotaStore?: QuotaCounterStore
}

/** The app's dependencies, plus the sandbox itself: its stats are the operational view of scripts (and what the hostile tests watch). */
export type BuiltDeps = AppDeps & { sandbox: LazySandbox; yaml: OffThreadYaml; validation: ReturnType<typeof offThreadValidation> }

export function buildDeps(opts: CoreOptions): BuiltDeps {
  const log = opts.log ?? silentLogger
  const clock = opts.clock ?? systemClock
  const observability = opts.observability ?? { tracer: noopTracer, metrics: noopMetrics, ready: () => undefined }
  const { tracer, metrics }: { tracer: Tracer; metrics: Metrics } = observability
  const auditStore = opts.auditStore ?? new MemoryAuditStore()
  const recorder = new AuditRecorder({
    store: auditStore,
    clock,
    log,
    metrics,
    retentionDays: opts.auditRetentionDays,
    flushDelayMs: opts.auditFlushDelayMs,
    refusals: opts.auditRefusals,
  })
  // refusals inside a tool call (egress, sandbox) answer the caller 200 with a tool error: they are audited where they happen
  const denied = (tenant: string, action: string, target: string, reason: string) =>
    recorder.record({ tenant, ...auditContext(), action, target, outcome: 'denied', reason })
  const bundled = new BundledLayer(opts.bundledFiles ?? bundledDefaults())
  const cascade = new DocumentCascade(opts.store, bundled)
  // the tool types' runtimes hold the client's code too: whatever sends first loads both, at once.
  // Every loader here is once(): a dynamic import() resolves its specifier on every call (through a
  // loader hook's worker under tsx: ~0.5 ms a request), so only the first call may import.
  const runtimes = once(() => import('./lazy/tool-runtimes'))
  const egress = tracedEgress(
    opts.egress ??
      lazyEgress(runtimes, {
        allow: opts.egressAllow,
        ownEndpoints: opts.ownEndpoints,
        tenantAllowList: documentTenantAllowList(opts.store, { log }),
        log,
      }),
    tracer,
    (r) => denied(r.tenant, 'egress.refused', `host:${r.host}`, r.reason),
  )
  const secrets = opts.secrets ?? new MemorySecretStore()
  const mcp = createMcpRuntime({ egress, secrets, log, clock, tracer, load: once(() => import('./lazy/mcp-connections')) })
  // one sandbox per container, created by the first script: its code and WASM never load at cold start
  const { isolation = 'worker', ...sandboxOptions } = opts.sandbox ?? {}
  const sandbox = tracedSandbox(
    lazySandbox(
      once(() => import('./lazy/sandbox')),
      isolation,
      sandboxOptions,
    ),
    tracer,
    metrics,
    (r) => denied(r.tenant, 'sandbox.refused', `projects/${r.project}/sandbox`, r.reason),
  )
  // tenant YAML over a few KiB is parsed in worker threads, whose code loads with the first such text
  const yaml = offThreadYaml(
    once(() => import('./lazy/yaml-pool')),
    opts.yaml,
  )
  const factories = new FactoryRegistry([
    docLookupFactory,
    new ScriptedToolFactory({ sandbox }),
    new McpToolFactory(mcp, runtimes),
    new McpServerToolFactory(mcp, runtimes),
    new PromptTemplateFactory({
      egress,
      secrets,
      wires: tracedWires(
        wireClients(egress, { openai: once(() => import('./lazy/openai')), anthropic: once(() => import('./lazy/anthropic')) }),
        tracer,
      ),
      load: runtimes,
    }),
    new RestToolFactory({ http: egress, secrets, load: runtimes }),
    new RestApiToolFactory({ http: egress, secrets, load: runtimes, yaml }),
    ...(opts.extraFactories ?? []),
  ])
  const builtins = new BuiltinRegistry([whoamiTool, executeJavascriptTool(sandbox), ...META_BUILTINS, ...(opts.extraBuiltins ?? [])])
  const tools = new ServerToolService({ store: opts.store, cascade, bundled, factories, builtins, log, clock, yaml })
  // a call's validation past its first slice runs in the same workers (lib/config/argument-validation.ts)
  const validation = offThreadValidation(yaml.workers)
  const dispatcher = new ToolDispatcher(log, { tracer, metrics, clock }, validation)
  const quotaStore = opts.quotaStore ?? new MemoryQuotaCounterStore()
  const quotas = new QuotaLimiter({
    rules: new QuotaRuleSource(
      cascade,
      clock,
      log,
      opts.store.generation && ((t) => opts.store.generation?.(t) ?? Promise.resolve(undefined)),
    ),
    store: quotaStore,
    clock,
  })
  dispatcher.setAdmission(
    async (caller, tool, prepared) => {
      const subject = { role: caller.role, tool: tool.name, type: tool.typeId, labels: tool.labels }
      const r = await quotas.admit(caller, subject, prepared as ReturnType<typeof quotas.prepare> | undefined)
      return r && { message: r.message, retryAfterSeconds: r.retryAfterSeconds, reason: `quota:${r.rule.layer}/${r.rule.index + 1}` }
    },
    (caller) => quotas.prepare(caller),
  )
  // model tokens are charged from what the provider reported, after the call (limiter.ts)
  const chargeTokens = ({ caller, tool, outcome }: AfterCallEvent) => {
    if (!TOKEN_REPORTING_TYPES.has(tool.typeId)) return
    const tokens = reportedTokens(outcome.content)
    if (tokens > 0)
      quotas
        .charge(caller, { role: caller.role, tool: tool.name, type: tool.typeId, labels: tool.labels }, tokens)
        .catch((e) =>
          log.log('warn', 'quotas.charge_failed', { tenant: caller.tenant, tool: tool.name, tokens, error: (e as Error).message }),
        )
  }
  dispatcher.addListener({
    afterCall: chargeTokens,
    afterDelegate: chargeTokens,
    // a capacity refusal is audited where the sandbox refused it (sandbox.refused)
    refused: ({ caller, tool, refusal }) => {
      if (refusal.class === 'quota') denied(caller.tenant, 'quota.refused', `projects/${caller.project}/tools/${tool.name}`, refusal.reason)
    },
  })
  const usage = new UsageService({
    store: opts.usageStore ?? new MemoryToolUsageStore(),
    clock,
    log,
    surfaces: async (t, p, r) => (await agent()).roleSurfaces(t, p, r),
  })
  if (opts.countUsage !== false) dispatcher.addListener(usage.counter)
  // The agent surface (processes, manifests, MCP sessions, learned limits) is built, and its code
  // loaded, by the first request that needs it: a cold start serving a tool call never pays for it.
  const agent: () => Promise<AgentSurface> = once(async () =>
    (await import('./surface-deps')).buildAgentSurface({
      store: opts.store,
      cascade,
      bundled,
      tools,
      log,
      clock,
      processStore: opts.processStore,
      observedLimitStore: opts.observedLimitStore,
      settings: opts.surface,
      demand: { demand: (tenant, project, role) => usage.demand.toolDemand(tenant, project, role) },
      sandbox,
    }),
  )
  return {
    tools,
    documents: new DocumentService(
      opts.store,
      cascade,
      allChecks(
        (path, body) => {
          const tool = tools.checkWrite(path, body)
          return tool && !tool.ok ? tool.issues : []
        },
        checkSurfaceDocument,
        checkMcpServerDocument,
        checkModelCatalogDocument,
        checkTenantAllowListDocument,
        checkQuotaDocument,
      ),
      yaml,
    ),
    processes: deferred(async () => (await agent()).processes),
    surface: deferred(async () => (await agent()).surface),
    observedLimits: deferred(async () => (await agent()).observedLimits),
    dispatcher,
    usage,
    quotas: { limiter: quotas, store: quotaStore },
    secrets,
    auth: { ...opts.auth, jwtSecret: opts.jwtSecret },
    consoleAssets: lazyConsoleAssets(),
    // the HTTP layer's lazily loaded modules, as wrappers that share the one lazy chunk (./lazy/shared.ts)
    modules: {
      openapi: once(() => import('./lazy/openapi')),
      mcpProtocol: once(() => import('./lazy/mcp-protocol')),
      consolePages: once(() => import('./lazy/console-pages')),
    },
    observability,
    audit: { recorder, store: auditStore },
    log,
    clock,
    ...(opts.fairShare === false
      ? {}
      : { fairShare: new FairGate(systemGateClock, mainThreadBusy, { ...FAIR_GATE_DEFAULTS, ...opts.fairShare }) }),
    sandbox,
    yaml,
    validation,
  }
}

/** performance.now() and unref'd timers: a waiting request's socket keeps the process up, not the gate. */
const systemGateClock = {
  now: () => performance.now(),
  after(ms: number, fn: () => void) {
    const timer = setTimeout(fn, ms)
    timer.unref?.()
    return () => clearTimeout(timer)
  },
}

/** The event loop's busy time so far: one native read, no hooks. */
const mainThreadBusy = { busyMs: () => performance.eventLoopUtilization().active }

/** Everything in memory: unit and HTTP tests, and benches. */
export function createMemoryDeps(opts: Partial<CoreOptions> = {}): BuiltDeps & { store: MemoryDocumentStore } {
  const store = (opts.store as MemoryDocumentStore | undefined) ?? new MemoryDocumentStore(opts.clock)
  return { ...buildDeps({ jwtSecret: 'test-secret-please-change', ...opts, store }), store }
}

export interface AwsDepsConfig {
  documentsTable: string
  toolUsageTable: string
  processesTable: string
  observedLimitsTable: string
  surface?: Partial<SurfaceSettings>
  bucket: string
  /** The audit table (AUDIT_TABLE on Lambda); absent: the audit log stays in memory. */
  auditTable?: string
  /** The quota counters table (QUOTAS_TABLE on Lambda); absent: counters stay in the container. */
  quotasTable?: string
  auditRetentionDays?: number
  auditFlushDelayMs?: number
  /** AUDIT_REFUSAL_WINDOW_SECONDS, as limits (default REFUSAL_DIGEST_LIMITS). */
  auditRefusals?: RefusalDigestLimits
  observability?: AppDeps['observability']
  jwtSecret: string
  auth?: Omit<AuthSettings, 'jwtSecret'>
  region: string
  /** Configured endpoints (emulators, a proxy, DynamoDB Local); omitted in AWS. */
  dynamoEndpoint?: string
  s3Endpoint?: string
  /** AWS_USE_FIPS_ENDPOINT / AWS_USE_DUALSTACK_ENDPOINT for DynamoDB (storeSettingsFromEnv). */
  useFips?: boolean
  useDualStack?: boolean
  /** The longest one DynamoDB call may take, retries included. */
  storeCallDeadlineMs?: number
  /**
   * This process is the documents table's only writer: `npm start`'s embedded dynalite, whose
   * LevelDB it holds locked. The tenant stamps then live in its memory, not in the table: a request
   * checks them and a write marks them without a store round trip (docs/decisions.md, "tenant
   * stamps in memory under npm start"). Never for tables another process may write (Lambda).
   */
  soleDocumentsWriter?: boolean
  /**
   * Audit entries written 25 to a BatchWriteItem (DynamoAuditStore `batchWrites`): `npm start`'s
   * embedded dynalite only, where no IAM policy keeps the table append-only and the store's work
   * runs on this process's cores. Never on AWS (the policy grants PutItem and Query only).
   */
  auditBatchWrites?: boolean
  /** Absent: the SDK's default credential chain, loaded on first use. */
  credentials?: AwsCredentials
  /** DynamoDB's own, where they differ (`npm start`'s embedded dynalite). */
  dynamoCredentials?: AwsCredentials
  log?: Logger
  clock?: Clock
  bundledFiles?: BundledFile[]
  /** SSM-backed in Lambda, an encrypted file under DATA_DIR for `npm start`. */
  secrets: SecretStore
  egressAllow?: AllowList
  /** Listeners of the runtime and the HTTP port; the emulator endpoints above are added to them. */
  ownEndpoints?: OwnEndpoints
  sandbox?: SandboxSettings
  fairShare?: CoreOptions['fairShare']
}

/** Production composition: DynamoDB + S3 adapters; their clients built once per cold start. */
export function createAwsDeps(config: AwsDepsConfig): AppDeps & { clients: AwsClients } {
  const clients = makeAwsClients({
    region: config.region,
    dynamoEndpoint: config.dynamoEndpoint,
    s3Endpoint: config.s3Endpoint,
    useFips: config.useFips,
    useDualStack: config.useDualStack,
    storeCallDeadlineMs: config.storeCallDeadlineMs,
    credentials: config.credentials,
    dynamoCredentials: config.dynamoCredentials,
    tracer: config.observability?.tracer,
    metrics: config.observability?.metrics,
  })
  const clock = config.clock ?? systemClock
  const blobs = new S3BlobStore({ s3: clients.s3, bucket: config.bucket, tracer: config.observability?.tracer })
  // what a turn reads in the same tick goes out as one BatchGetItem: the process and the tenant
  // stamp; a call's tool and its quota rules
  const reads = new ReadBatcher(clients.dynamo)
  // what turns read from the documents table is kept per container while the tenant's stamp,
  // read once per request, says nothing changed (lib/documents/stamped-cache.ts); a sole writer
  // marks every write itself, so its own memory is where the stamps are
  const store = new StampedDocumentCache({
    store: new DynamoDocumentStore({ dynamo: clients.dynamo, tableName: config.documentsTable, blobs, clock, reads }),
    stamps: config.soleDocumentsWriter
      ? new MemoryTenantStampStore()
      : new DynamoTenantStampStore({ dynamo: clients.dynamo, tableName: config.documentsTable, reads }),
    request: () => requestContext.current(),
    clock,
    newWriteId,
    log: config.log,
  })
  const usageStore = new DynamoToolUsageStore({ dynamo: clients.dynamo, tableName: config.toolUsageTable })
  const processStore = new DynamoProcessStore({ dynamo: clients.dynamo, tableName: config.processesTable, reads })
  const observedLimitStore = new DynamoObservedLimitStore({ dynamo: clients.dynamo, tableName: config.observedLimitsTable })
  const auditStore = config.auditTable
    ? new DynamoAuditStore({ dynamo: clients.dynamo, tableName: config.auditTable, batchWrites: config.auditBatchWrites })
    : undefined
  const quotaStore = config.quotasTable ? new DynamoQuotaCounterStore({ dynamo: clients.dynamo, tableName: config.quotasTable }) : undefined
  // stores that run beside the service (dynalite, s3rver) trust whoever reaches them: never a tool
  const ownEndpoints = config.ownEndpoints ?? new OwnEndpoints()
  for (const endpoint of [config.dynamoEndpoint, config.s3Endpoint]) if (endpoint) ownEndpoints.add(endpoint)
  return {
    ...buildDeps({
      store,
      usageStore,
      processStore,
      observedLimitStore,
      surface: config.surface,
      secrets: config.secrets,
      egressAllow: config.egressAllow,
      ownEndpoints,
      sandbox: config.sandbox,
      fairShare: config.fairShare,
      observability: config.observability,
      auditStore,
      quotaStore,
      auditRetentionDays: config.auditRetentionDays,
      auditFlushDelayMs: config.auditFlushDelayMs,
      auditRefusals: config.auditRefusals,
      jwtSecret: config.jwtSecret,
      auth: config.auth,
      log: config.log,
      clock,
      bundledFiles: config.bundledFiles,
    }),
    clients,
  }
}

/** Several features' write-time document checks as one; a problem two of them report is listed once. */
function allChecks(...checks: DocumentCheck[]): DocumentCheck {
  return (path, body) => {
    const seen = new Set<string>()
    return checks
      .flatMap((check) => check(path, body))
      .filter((i) => {
        const key = `${i.pointer ?? ''}|${i.line ?? ''}|${i.column ?? ''}|${i.message}`
        return !seen.has(key) && seen.add(key) !== undefined
      })
  }
}
