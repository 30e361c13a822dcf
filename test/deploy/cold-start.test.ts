/**
 * The Lambda cold start loads only what a request needs. The API is bundled the way SST builds
 * it (scripts/lambda-bundle.ts, splitting on), then every output that holds a heavy module — the
 * MCP SDK (v2: server, client, core) and zod, any of the AWS SDK (S3, SSM, the credential chain: DynamoDB goes through our own client), the sandbox, the LLM wire clients, the tool types'
 * runtimes and the egress client — is replaced by a module that throws, and Ajv and yaml
 * (required from node_modules on demand) are left out of the package: documents written through
 * the API and the bundled defaults carry the JSON form of their data, so reading them parses no
 * YAML.
 * A fresh node process then imports the handler and serves a spawn and a manifest request
 * against the emulators: any of those modules evaluated on that path fails the request.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { auditTableSpec } from '../../lib/stores/aws/audit-store'
import { observedLimitsTableSpec } from '../../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../../lib/stores/aws/provision'
import { quotaCountersTableSpec } from '../../lib/stores/aws/quota-store'
import { toolUsageTableSpec } from '../../lib/stores/aws/tool-usage-store'
import { buildApiLikeSst, evaluateSstConfig, externalImportsAtStart, loadedAtStart } from '../../scripts/lambda-bundle'
import { awsTestClients, TEST_CREDENTIALS, TEST_REGION, uniqueSuffix } from '../support/aws'
import { tokenFor } from '../support/http'
import { decodeTraceRequest } from '../support/otlp-protobuf'

/** Source modules a spawn + manifest must never evaluate (matched against esbuild's input paths). */
const HEAVY: RegExp[] = [
  // required on demand from node_modules (RUNTIME_PACKAGES), so bundled means loaded at start
  /node_modules\/re2js\//,
  /node_modules\/@modelcontextprotocol\/sdk\//,
  // the v2 SDK: the MCP endpoint and the mcp / mcp_server tool types load it on first use
  /node_modules\/@modelcontextprotocol\/(server|client|core)\//,
  /node_modules\/zod\//,
  /node_modules\/@aws-sdk\//,
  /node_modules\/@smithy\//,
  /^lib\/sandbox\/(quickjs|engines|in-process|execute)\.ts$/,
  // the YAML parse workers: loaded by the first text over 2 KiB, never by a read
  /^lib\/config\/yaml-pool\.ts$/,
  /^lib\/llm\/(openai|anthropic)\.ts$/,
  /^lib\/tools\/types\/runtime\//,
  /^lib\/egress\/(client|guard|connector)\.ts$/,
  // tracing configured off: neither the OpenTelemetry API nor its SDK is evaluated
  /node_modules\/@opentelemetry\//,
  /^functions\/observability\/(otel-(sdk|tracer|metrics)|context-manager|id-generator|encoded-batch-processor|otlp-span-encoder|export-thread)\.ts$/,
]
/** What a tool call (outside any process) must not evaluate either: the agent surface. */
const AGENT_SURFACE = [/^functions\/surface-deps\.ts$/, /^lib\/surface\/surface\.ts$/, /^lib\/recipes\/spawn\.ts$/]
const SECRET = `cold-start-test-${uniqueSuffix()}`

let dir: string
let outfile: string
let atStart: { kib: number; files: number }
let externalAtStart: string[]
let poisoned: string[]
let env: Record<string, string>

/** Builds the API like SST into `into`, replaces every output holding one of `heavy` by a module that throws, removes Ajv and yaml. */
async function poisonedBuild(
  into: string,
  heavy: RegExp[],
): Promise<{ outfile: string; poisoned: string[]; atStart: { kib: number; files: number }; externalAtStart: string[] }> {
  const built = await buildApiLikeSst(await evaluateSstConfig(), into)
  const atStart = loadedAtStart(built.metafile, built.outfile)
  const externalAtStart = externalImportsAtStart(built.metafile, built.outfile)
  const found: string[] = []
  for (const [output, meta] of Object.entries(built.metafile.outputs)) {
    const inputs = Object.keys(meta.inputs).filter((input) => heavy.some((h) => h.test(input)))
    if (!inputs.length || !output.endsWith('.mjs')) continue
    expect(resolve(output), `the entry itself holds ${inputs.join(', ')}`).not.toBe(built.outfile)
    writeFileSync(resolve(output), `throw new Error(${JSON.stringify(`evaluated at cold start: ${inputs.slice(0, 3).join(', ')}`)});\n`)
    found.push(...inputs)
  }
  for (const pkg of ['ajv', 'yaml', 're2js']) rmSync(join(into, 'node_modules', pkg), { recursive: true, force: true })
  return { outfile: built.outfile, poisoned: found, atStart, externalAtStart }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'server-tools-cold-start-'))
  ;({ outfile, poisoned, atStart, externalAtStart } = await poisonedBuild(dir, HEAVY))

  const suffix = uniqueSuffix()
  const tables = {
    Documents: `cs-docs-${suffix}`,
    ToolUsage: `cs-usage-${suffix}`,
    Processes: `cs-proc-${suffix}`,
    ObservedLimits: `cs-limits-${suffix}`,
    QuotaCounters: `cs-quotas-${suffix}`,
  }
  const clients = awsTestClients()
  await Promise.all([
    ensureTable(clients.dynamo, documentsTableSpec(tables.Documents)),
    ensureTable(clients.dynamo, toolUsageTableSpec(tables.ToolUsage)),
    ensureTable(clients.dynamo, processesTableSpec(tables.Processes)),
    ensureTable(clients.dynamo, observedLimitsTableSpec(tables.ObservedLimits)),
    ensureTable(clients.dynamo, quotaCountersTableSpec(tables.QuotaCounters)),
    ensureTable(clients.dynamo, auditTableSpec(`cs-audit-${suffix}`)),
    ensureBucket(clients.s3, `cs-blobs-${suffix}`),
  ])
  env = {
    PATH: process.env.PATH ?? '',
    LAMBDA_TASK_ROOT: dir,
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    S3_ENDPOINT: inject('s3Endpoint'),
    SSM_ENDPOINT: 'http://127.0.0.1:9',
    AUTH_JWT_SECRET: SECRET,
    AUDIT_TABLE: `cs-audit-${suffix}`,
    LOG_LEVEL: 'error',
    SST_RESOURCE_App: JSON.stringify({ name: 'server-tools', stage: 'test' }),
    ...Object.fromEntries(
      Object.entries(tables).map(([k, v]) => [`SST_RESOURCE_${k}`, JSON.stringify({ name: v, type: 'sst.aws.Dynamo' })]),
    ),
    SST_RESOURCE_Blobs: JSON.stringify({ name: `cs-blobs-${suffix}`, type: 'sst.aws.Bucket' }),
  }
}, 60_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Imports the handler in a fresh process and sends the requests in order; `{ID}` is the spawned process. */
async function coldStart(
  requests: { method: string; path: string; body?: unknown }[],
  bundle = outfile,
  extraEnv: Record<string, string> = {},
): Promise<{ status: number; body: string }[]> {
  const { answers } = await coldStartWithOutput(requests, bundle, extraEnv)
  return answers
}

async function coldStartWithOutput(
  requests: { method: string; path: string; body?: unknown }[],
  bundle = outfile,
  extraEnv: Record<string, string> = {},
): Promise<{ answers: { status: number; body: string }[]; stdout: string; undici: boolean }> {
  const token = await tokenFor('acme', undefined, 'alice@example.test', SECRET)
  const probe = `
    const { installLambdaRuntime, invokeStreaming } = await import(${JSON.stringify(new URL('../../scripts/lambda-streaming-runtime.mjs', import.meta.url).href)});
    installLambdaRuntime();
    const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
    const out = [];
    let id = '';
    for (const r of ${JSON.stringify(requests)}) {
      const path = r.path.replace('{ID}', id);
      const event = { version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', body: r.body === undefined ? undefined : JSON.stringify(r.body), isBase64Encoded: false,
        headers: { host: 'x.lambda-url.us-east-1.on.aws', authorization: 'Bearer ${token}', 'content-type': 'application/json' },
        requestContext: { domainName: 'x.lambda-url.us-east-1.on.aws', http: { method: r.method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, requestId: 'r', routeKey: '$default', stage: '$default', time: '', timeEpoch: 0 } };
      const { response, done } = invokeStreaming(handler, event, { awsRequestId: 'r', functionName: 'f' });
      const res = await response;
      await done;
      const body = res.body.toString('utf8');
      if (res.statusCode === 201) id = JSON.parse(body).id;
      out.push({ status: res.statusCode, body });
    }
    // whether Node's undici was loaded (the first real Headers, Request or Response loads it)
    process.stdout.write('\\n@@undici@@' + process.moduleLoadList.includes('NativeModule internal/deps/undici/undici'));
    process.stdout.write('\\n@@answer@@' + JSON.stringify(out));
    process.exit(0);`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
    cwd: dir,
    env: { ...env, ...extraEnv },
    timeout: 20_000,
  })
  // the service may log to stdout (a request that fails is logged); the answer comes last
  const answers = JSON.parse(stdout.slice(stdout.lastIndexOf('@@answer@@') + '@@answer@@'.length))
  return { answers, stdout, undici: stdout.includes('@@undici@@true') }
}

describe('the Lambda cold start', () => {
  it('keeps the MCP SDK (v2 server and client), zod, the AWS SDK, the sandbox, the LLM clients, the tool runtimes and the egress client out of the handler entry', () => {
    for (const heavy of [
      /@modelcontextprotocol\/server\//,
      /@modelcontextprotocol\/client\//,
      /zod/,
      /client-s3/,
      /client-ssm/,
      /credential-provider-node/,
      /lib\/sandbox\/quickjs/,
      /lib\/config\/yaml-pool/,
      /lib\/llm\/openai/,
      /lib\/tools\/types\/runtime\/rest\.ts/,
      /lib\/egress\/client/,
      /@opentelemetry\/api\//,
      /@opentelemetry\/sdk-trace-base/,
      /@opentelemetry\/exporter-trace-otlp-http/,
    ]) {
      expect(
        poisoned.some((p) => heavy.test(p)),
        `${heavy} is bundled somewhere`,
      ).toBe(true)
    }
  })

  it('loads few files at start: the code the entry shares with lazily loaded modules is one chunk (functions/lazy/shared.ts)', () => {
    // 3 since the stores use their own DynamoDB client (11 with the SDK's; the floor of
    // bench/coldstart.ts loads 9); every file is a module load at each cold start. More means a
    // lazily loaded module that does not import functions/lazy/shared.ts.
    expect(atStart.files).toBeLessThanOrEqual(3)
  })

  it('imports no Node built-in whose ES module facade runs its getters (node:process, node:fs) at start', () => {
    // A facade reads every export of the built-in: node:process's creates stdin and stdout,
    // loads process.report and builds allowedNodeEnvironmentFlags, node:fs's loads fs.promises —
    // 4–5 ms and ~1.5 ms CPU of every cold start. Take them with `require` (createRequire)
    // (functions/sst-resource.ts). The check sees the imports: it fails on a start set that has them.
    expect(externalAtStart.length, 'the start set imports built-ins (node:crypto at least)').toBeGreaterThan(0)
    expect(externalAtStart.filter((path) => /^(node:)?(process|fs)$/.test(path))).toEqual([])
  })

  it("serves a tool call and a refusal without loading Node's undici: the Lambda entry's Headers and Response stand in (functions/http/light-fetch.ts)", async () => {
    const { answers, undici } = await coldStartWithOutput([
      { method: 'POST', path: '/brain/acme/projects/p1/tools/whoami/invoke', body: { params: {} } },
      { method: 'POST', path: '/brain/acme/projects/p1/tools/no-such-tool/invoke', body: { params: {} } },
    ])
    expect(answers.map((a) => a.status)).toEqual([200, 200])
    expect(JSON.parse(answers[1].body)).toMatchObject({ isError: true })
    expect(JSON.parse(answers[0].body)).toMatchObject({ isError: false })
    expect(undici).toBe(false)
  })

  it('imports the handler and serves a spawn and a manifest request without evaluating any of them, Ajv or yaml', async () => {
    const [spawn, manifest] = await coldStart([
      { method: 'POST', path: '/brain/acme/projects/p1/processes', body: { recipe: 'default' } },
      { method: 'GET', path: '/brain/acme/projects/p1/processes/{ID}/manifest' },
    ])
    expect(spawn.status, spawn.body).toBe(201)
    expect(manifest.status, manifest.body).toBe(200)
    expect(JSON.parse(manifest.body).tools.map((t: { name: string }) => t.name)).toContain('tool_list')
  })

  it('imports the handler without building an Intl formatter or comparing by locale (the first loads ICU locale data)', async () => {
    // every constructor of Intl and every built-in that makes one behind the scenes, counted while the handler is imported
    const probe = `
      const { installLambdaRuntime } = await import(${JSON.stringify(new URL('../../scripts/lambda-streaming-runtime.mjs', import.meta.url).href)});
      installLambdaRuntime();
      const used = [];
      for (const name of Object.getOwnPropertyNames(Intl)) {
        const C = Intl[name];
        if (typeof C !== 'function') continue;
        Intl[name] = new Proxy(C, { construct: (t, a, n) => (used.push('Intl.' + name), Reflect.construct(t, a, n)), apply: (t, th, a) => (used.push('Intl.' + name), Reflect.apply(t, th, a)) });
      }
      for (const [proto, names] of [[Number.prototype, ['toLocaleString']], [BigInt.prototype, ['toLocaleString']], [Date.prototype, ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']], [String.prototype, ['localeCompare', 'toLocaleUpperCase', 'toLocaleLowerCase']], [Array.prototype, ['toLocaleString']]]) {
        for (const name of names) {
          const f = proto[name];
          proto[name] = function (...a) { used.push(name); return f.apply(this, a); };
        }
      }
      await import(${JSON.stringify(pathToFileURL(outfile).href)});
      process.stdout.write(JSON.stringify(used));
      process.exit(0);`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { cwd: dir, env, timeout: 30_000 })
    expect(JSON.parse(stdout.trimEnd().split('\n').pop() ?? '')).toEqual([])
  })

  it('serves a tool call without evaluating the agent surface either', async () => {
    const toolDir = mkdtempSync(join(tmpdir(), 'server-tools-cold-start-tool-'))
    try {
      const built = await poisonedBuild(toolDir, [...HEAVY, ...AGENT_SURFACE])
      expect(built.poisoned).toEqual(expect.arrayContaining(['functions/surface-deps.ts', 'lib/surface/surface.ts']))
      const [call, spawn] = await coldStart(
        [
          { method: 'POST', path: '/brain/acme/projects/p1/tools/whoami/invoke', body: { params: {} } },
          { method: 'POST', path: '/brain/acme/projects/p1/processes', body: { recipe: 'default' } },
        ],
        built.outfile,
      )
      expect(call.status, call.body).toBe(200)
      expect(JSON.parse(call.body)).toMatchObject({ isError: false })
      // and it would notice: the spawn needs the surface, whose module was replaced (a 500, logged)
      expect(spawn.status).toBe(500)
    } finally {
      rmSync(toolDir, { recursive: true, force: true })
    }
  }, 60_000)

  it('would notice: a script run reaches the sandbox, whose module was replaced, and fails', async () => {
    const [call] = await coldStart([
      { method: 'POST', path: '/brain/acme/projects/p1/tools/execute_javascript/invoke', body: { params: { code: '1 + 1' } } },
    ])
    expect(call.body).toContain('evaluated at cold start')
  })

  it('with OTEL_EXPORTER_OTLP_ENDPOINT at a collector, the bundled handler exports its spans before the invocation ends: the export thread runs from the bundle', async () => {
    const bodies: Buffer[] = []
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        if (req.url === '/v1/traces') bodies.push(Buffer.concat(chunks))
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
      })
    })
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()))
    const bundleDir = mkdtempSync(join(tmpdir(), 'server-tools-cold-start-otel-'))
    try {
      const built = await poisonedBuild(bundleDir, [])
      const [call] = await coldStart(
        [{ method: 'POST', path: '/brain/acme/projects/p1/tools/whoami/invoke', body: { params: {} } }],
        built.outfile,
        { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}` },
      )
      expect(call.status, call.body).toBe(200)
      const names = bodies.flatMap((b) =>
        decodeTraceRequest(b).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name))),
      )
      expect(names).toEqual(expect.arrayContaining(['execute_tool whoami', 'POST /brain/:tenant/projects/:project/tools/:name/invoke']))
    } finally {
      rmSync(bundleDir, { recursive: true, force: true })
      await new Promise((r) => collector.close(r))
    }
  }, 60_000)

  it('would notice: with OTEL_EXPORTER_OTLP_ENDPOINT set, the first request loads the OpenTelemetry SDK, whose module was replaced, and serves on without it', async () => {
    const { answers, stdout } = await coldStartWithOutput(
      [{ method: 'POST', path: '/brain/acme/projects/p1/tools/whoami/invoke', body: { params: {} } }],
      outfile,
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
    )
    expect(answers[0].status, answers[0].body).toBe(200)
    const failed = stdout.split('\n').filter((l) => l.includes('"tracing.unavailable"'))
    expect(failed).toHaveLength(1)
    expect(failed[0]).toContain('evaluated at cold start')
  })
})
