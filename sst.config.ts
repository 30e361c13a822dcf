/// <reference path="./.sst/platform/config.d.ts" />
/**
 * Deployment: SST v3+ config, written for and pinned to sst@4.17.1 (package.json devDependencies,
 * exact pin; `npm run deploy` = `sst deploy`). Evaluated by test/deploy/sst-config.test.ts against
 * stand-ins for SST's globals, which asserts that the keys, handler, links and files below match
 * what lib/stores/aws and functions/ expect.
 *
 * Runtime code reads what is declared here only in functions/: linked names via `Resource.<Name>`
 * (functions/api.ts) and settings via environment variables.
 */

/**
 * ESM bundles of the AWS SDK call `require('node:https')` etc.; esbuild's ESM output has no
 * `require`, so without this banner the function fails at cold start with
 * "Dynamic require of node:https is not supported".
 */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);"

/**
 * Loaded at run time from node_modules rather than bundled, required synchronously on first need,
 * so they cost the cold start nothing: ajv-formats' format checks only for a schema with a
 * `format` the interpreter validates (lib/config/schema-interpreter.ts; Ajv itself validates
 * nothing any more and stays as ajv-formats' dependency); `yaml` only for a write, a document stored without the
 * JSON form of its data, or an issue that needs a line number (lib/config/yaml.ts); re2js only
 * for a tenant-written `pattern` (lib/config/patterns.ts).
 */
const RUNTIME_PACKAGES = ['ajv', 'ajv-formats', 'yaml', 're2js']

const QUICKJS_PACKAGES = [
  'quickjs-emscripten',
  'quickjs-emscripten-core',
  '@jitl/quickjs-ffi-types',
  '@jitl/quickjs-wasmfile-release-sync',
  '@jitl/quickjs-wasmfile-release-asyncify',
  '@jitl/quickjs-wasmfile-debug-sync',
  '@jitl/quickjs-wasmfile-debug-asyncify',
]

/** Optional token settings passed from the deploying shell to the function when set (docs/guide/auth-and-tokens.md). */
const AUTH_SETTINGS = [
  'AUTH_MAX_TOKEN_LIFETIME_SECONDS',
  'AUTH_JWKS_URL',
  'AUTH_ISSUER',
  'AUTH_AUDIENCE',
  'AUTH_ALGORITHMS',
  'AUTH_TENANT_CLAIM',
  'AUTH_SCOPE_CLAIM',
  'AUTH_JWKS_REFRESH_SECONDS',
  'AUTH_AUTHORIZATION_SERVERS',
  'PUBLIC_BASE_URL',
]

/** The standard OpenTelemetry variables passed on to the function when the deploying shell sets them. */
const OTEL_SETTINGS = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_SDK_DISABLED',
  'AWS_LAMBDA_EXEC_WRAPPER',
]

export default $config({
  app(input) {
    return {
      name: 'server-tools',
      home: 'aws',
      removal: input?.stage === 'production' ? 'retain' : 'remove',
      protect: input?.stage === 'production',
    }
  },

  async run() {
    // ── Tables ──────────────────────────────────────────────────────────────────────────────
    // One block per table. The key names must equal the TableSpec in lib/stores/aws (the test
    // compares them). Every table here is linked to the API and readable as Resource.<Name>.name.
    const tables = {
      // documentsTableSpec: `scope` (`<tenant>#<project>`) + `path`
      Documents: new sst.aws.Dynamo('Documents', {
        fields: { scope: 'string', path: 'string' },
        primaryIndex: { hashKey: 'scope', rangeKey: 'path' },
      }),
      // toolUsageTableSpec: `scope` + `roleTool` (`<role>#<tool>`); totals never expire, only the
      // calls-per-day rows carry `expiresAt`
      ToolUsage: new sst.aws.Dynamo('ToolUsage', {
        fields: { scope: 'string', roleTool: 'string' },
        primaryIndex: { hashKey: 'scope', rangeKey: 'roleTool' },
        ttl: 'expiresAt',
      }),
      // processesTableSpec: `scope` + `id`; spawned processes expire through `expiresAt`
      Processes: new sst.aws.Dynamo('Processes', {
        fields: { scope: 'string', id: 'string' },
        primaryIndex: { hashKey: 'scope', rangeKey: 'id' },
        ttl: 'expiresAt',
      }),
      // observedLimitsTableSpec: `tenant` + `endpoint`; tool limits learned from rejections, expiring through `expiresAt`
      ObservedLimits: new sst.aws.Dynamo('ObservedLimits', {
        fields: { tenant: 'string', endpoint: 'string' },
        primaryIndex: { hashKey: 'tenant', rangeKey: 'endpoint' },
        ttl: 'expiresAt',
      }),
      // quotaCountersTableSpec: `tenant` + `counter` (`<layer>|<rule id>|<window kind>|<window start>`);
      // one row per quota rule and window, leased in slices (lib/quotas/limiter.ts), expiring through `expiresAt`
      QuotaCounters: new sst.aws.Dynamo('QuotaCounters', {
        fields: { tenant: 'string', counter: 'string' },
        primaryIndex: { hashKey: 'tenant', rangeKey: 'counter' },
        ttl: 'expiresAt',
      }),
      // Next table: one more entry like these (its keys from its TableSpec); it is linked below.
    }

    // ── Audit log (lib/stores/aws/audit-store.ts, auditTableSpec): `tenant` + `id`, TTL on `expiresAt`.
    // Not linked: a link grants every DynamoDB action on the table. The function gets its name as
    // AUDIT_TABLE and may only append (PutItem; the adapter's condition keeps an entry from being
    // overwritten) and read (Query): no UpdateItem, DeleteItem or BatchWriteItem (which can delete).
    // Retention: AUDIT_RETENTION_DAYS (default 365) sets each entry's TTL.
    const audit = new sst.aws.Dynamo('Audit', {
      fields: { tenant: 'string', id: 'string' },
      primaryIndex: { hashKey: 'tenant', rangeKey: 'id' },
      ttl: 'expiresAt',
    })

    // ── Bucket: document bodies over the inline limit (lib/stores/aws/blob-store.ts) ──────────
    const blobs = new sst.aws.Bucket('Blobs')

    // ── Secrets: `sst secret set AuthJwtSecret <value> --stage <stage>` ──────────────────────
    const authJwtSecret = new sst.Secret('AuthJwtSecret')

    // ── The API ──────────────────────────────────────────────────────────────────────────────
    // A Function URL rather than ApiGatewayV2: the app does its own routing and JWT auth (Hono),
    // so a gateway would add a hop, a cost per request and a hard 29 s integration timeout
    // (tool invocations call upstreams) and give nothing we use. Both deliver the same payload
    // format 2.0 event, so switching later (custom domain, throttling, WAF) changes this block
    // and, as the gateway must then stream too (its response transfer mode STREAM), nothing else.
    const api = new sst.aws.Function('Api', {
      handler: 'functions/api.handler',
      runtime: 'nodejs22.x',
      architecture: 'arm64', // pure JS + WASM dependencies, no native modules
      memory: '1024 MB', // CPU scales with memory; YAML/ajv at cold start and the sandbox want it
      timeout: '30 seconds',
      url: true,
      // Invoke mode RESPONSE_STREAM (functions/http/lambda-streaming.ts): the client has its answer
      // when the stream ends; the usage counts are written after that, within the invocation.
      streaming: true,
      link: [...Object.values(tables), blobs],
      // Tenant secrets (lib/stores/aws/secret-store.ts): SecureString parameters under /server-tools/.
      // The default aws/ssm key decrypts for any principal allowed to read the parameter via SSM.
      permissions: [
        {
          actions: ['ssm:GetParameter', 'ssm:GetParameters', 'ssm:GetParametersByPath', 'ssm:PutParameter', 'ssm:DeleteParameter'],
          resources: ['arn:aws:ssm:*:*:parameter/server-tools/*'],
        },
        // the audit log: append and read, nothing else (see the table above)
        { actions: ['dynamodb:PutItem', 'dynamodb:Query'], resources: [audit.arn] },
      ],
      environment: {
        AUTH_JWT_SECRET: authJwtSecret.value,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
        AUDIT_TABLE: audit.name,
        ...(process.env.AUDIT_RETENTION_DAYS ? { AUDIT_RETENTION_DAYS: process.env.AUDIT_RETENTION_DAYS } : {}),
        // Tracing (docs/operations/observability.md): off unless the deploying shell sets the
        // standard OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT of a collector; the SDK then
        // loads with the first request. The alternative is the ADOT Lambda layer: add
        //   layers: ['arn:aws:lambda:<region>:901920570463:layer:aws-otel-nodejs-arm64-ver-1-30-2:1'],
        // and AWS_LAMBDA_EXEC_WRAPPER: '/opt/otel-handler' here; the code then sends its spans
        // through @opentelemetry/api to the layer's SDK (mode `api`) and loads no SDK of its own.
        ...Object.fromEntries(OTEL_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name] as string])),
        // CloudWatch EMF metrics on stdout (METRICS=off turns them off)
        ...(process.env.METRICS ? { METRICS: process.env.METRICS } : {}),
        // Deployment egress allow-list (functions/api.ts → deploymentAllowList); from the deploying
        // shell or .env, omitted when unset.
        ...(process.env.EGRESS_ALLOW_HOSTS ? { EGRESS_ALLOW_HOSTS: process.env.EGRESS_ALLOW_HOSTS } : {}),
        ...(process.env.EGRESS_ALLOW_CIDRS ? { EGRESS_ALLOW_CIDRS: process.env.EGRESS_ALLOW_CIDRS } : {}),
        // Token settings (functions/settings.ts → authSettingsFromEnv, docs/guide/auth-and-tokens.md), the
        // same way: the identity provider, the lifetime cap, the public base URL.
        ...Object.fromEntries(AUTH_SETTINGS.filter((name) => process.env[name]).map((name) => [name, process.env[name] as string])),
      },
      // The bundled layer is read from disk at cold start: $LAMBDA_TASK_ROOT/defaults.
      // the bundled layer, and the web console's script and style sheet (functions/console-assets.ts)
      copyFiles: [
        { from: 'defaults', to: 'defaults' },
        { from: 'functions/http/console/assets', to: 'functions/http/console/assets' },
      ],
      nodejs: {
        format: 'esm',
        banner: ESM_REQUIRE_BANNER,
        minify: true,
        // Code behind a dynamic import() (MCP, S3, SSM, OpenAPI, LLM clients, the sandbox) becomes
        // chunks beside the handler, loaded on first use instead of compiled at every cold start.
        splitting: true,
        // The QuickJS builds locate their .wasm files beside their own modules at run time; bundled,
        // those files would be missing. SST installs these packages (and Ajv, see RUNTIME_PACKAGES)
        // into the function instead.
        install: [...QUICKJS_PACKAGES, ...RUNTIME_PACKAGES],
      },
    })

    // ── The orphan sweep (functions/sweep.ts, lib/stores/aws/blob-sweep.ts) ──────────────────
    // Deletes document bodies no item points at any more (a write whose answer was lost leaves
    // the blob it replaced); blobs younger than an hour are never touched. Off the request path.
    new sst.aws.Cron('BlobSweep', {
      schedule: 'rate(1 day)',
      function: {
        handler: 'functions/sweep.handler',
        runtime: 'nodejs22.x',
        architecture: 'arm64',
        memory: '512 MB',
        timeout: '15 minutes',
        link: [tables.Documents, blobs],
        environment: { LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
        nodejs: { format: 'esm', banner: ESM_REQUIRE_BANNER, minify: true },
      },
    })

    return {
      api: api.url,
    }
  },
})
