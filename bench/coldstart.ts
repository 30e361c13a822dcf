/**
 * `npm run bench -- coldstart`: the Lambda cold start, measured on the API bundle built the way
 * sst.config.ts builds it (scripts/lambda-bundle.ts: esbuild ESM, minified, node22, the
 * createRequire banner, splitting as configured, the QuickJS packages beside it) against a floor
 * built the same way: bare Hono + one DynamoDB GetItem (bench/fixtures/bare-lambda.ts).
 *
 * Each sample is a fresh `node` process that imports the bundle and answers one request against
 * the emulators: for the service an authenticated tool call on an inline tool document (cascade
 * read, YAML + schema validation, the tool run, the usage write), for the floor one GetItem. Both
 * run in the invoke mode the service is deployed with, response streaming, under the runtime
 * stand-in scripts/lambda-streaming-runtime.mjs; a response is complete when its stream ends.
 * Samples interleave service and floor so machine noise hits both alike. Printed: bundle sizes,
 * the import / first request split, and the ratio of cold start (import + first response, from
 * inside the process, so node's own start is left out on both sides) — goal ≤ 1.3× — and of the
 * first invocation's end, which for the service includes the usage write after the response.
 * `idle` is the event loop's idle time from the import to the first response: all that work moved
 * into the waits for the stores could win (on loopback ~1 ms; the cold start is CPU-bound).
 *
 * COLDSTART_CPU_PROF=<dir> writes a V8 CPU profile of every sample's import and first response (node:inspector
 * in the process, sampling every COLDSTART_CPU_PROF_INTERVAL µs, default 100; the profiler's own cost is in that
 * run's figures) to <dir>/service, <dir>/floor and <dir>/baseline,
 * to see which modules the cold start compiles and evaluates; with COLDSTART_UNMINIFIED=1 the
 * bundles keep esbuild's `// <module path>` comments, so samples can be attributed to modules.
 * COLDSTART_ROUNDS sets the rounds (default 30); COLDSTART_SAMPLES=<file> appends every round's
 * two samples to <file> as JSON lines, to see the spread behind the medians.
 * COLDSTART_BASELINE=<dir>: another checkout of this repository (e.g. `git worktree add <dir> main`,
 * with node_modules reachable from it) is built with this tree's config and packages and sampled in
 * the same rounds, interleaved: the A/B of a change, printed as service / baseline.
 */
import { execFile } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { startEmulators } from '../functions/emulators'
import { ALL_SCOPES, issueToken } from '../functions/http/auth'
import { serverToolPath } from '../lib/config/server-tool'
import { checkDocumentText } from '../lib/config/text-hygiene'
import { scopeOf } from '../lib/documents/ports'
import { auditTableSpec } from '../lib/stores/aws/audit-store'
import { S3BlobStore } from '../lib/stores/aws/blob-store'
import { destroyAwsClients, makeAwsClients } from '../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../lib/stores/aws/document-store'
import { observedLimitsTableSpec } from '../lib/stores/aws/observed-limit-store'
import { processesTableSpec } from '../lib/stores/aws/process-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../lib/stores/aws/provision'
import { quotaCountersTableSpec } from '../lib/stores/aws/quota-store'
import { rawPutItem } from '../lib/stores/aws/raw-probes'
import { toolUsageTableSpec } from '../lib/stores/aws/tool-usage-store'
import { buildApiLikeSst, bundleLikeSst, evaluateSstConfig, loadedAtStart, ROOT } from '../scripts/lambda-bundle'

// medians of 30: on this noisy 2-core VM, 12 rounds moved the ratio by ±0.05 between runs
const ROUNDS = Number(process.env.COLDSTART_ROUNDS ?? 30)
const STREAMING_RUNTIME = pathToFileURL(join(ROOT, 'scripts/lambda-streaming-runtime.mjs')).href
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
const SECRET = 'coldstart-bench-secret'
/** The audit log's table: not a link (sst.config.ts passes its name as AUDIT_TABLE). */
const AUDIT_TABLE = 'cs-audit'
const TABLES = {
  Documents: 'cs-documents',
  ToolUsage: 'cs-tool-usage',
  Processes: 'cs-processes',
  ObservedLimits: 'cs-observed-limits',
  QuotaCounters: 'cs-quota-counters',
}
const BUCKET = 'cs-blobs'

interface Sample {
  /** CPU time (user + system) of import + first response: what the busy machine disturbs least */
  cpu: number
  /** CPU time of the import alone: the rest of `cpu` is the first request's. */
  cpuImport: number
  import: number
  first: number
  /** Import to the end of the first invocation, which goes on after the response (the usage write). */
  end: number
  /** The same request again in the same process (to its response): what the first one paid beyond this was its cold part. */
  second: number
  total: number
  status: number
  /** Node's built-in modules loaded by the first response (process.moduleLoadList), the runtime stand-in's included. */
  builtins: number
  /** Event-loop idle time from the import to the first response: the waits that other work could fill. */
  idle: number
}

export async function benchColdstart() {
  const dir = mkdtempSync(join(tmpdir(), 'server-tools-coldstart-'))
  const emulators = await startEmulators({ s3Directory: join(dir, 's3') })
  const clients = makeAwsClients({
    region: 'us-east-1',
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
    credentials: CREDENTIALS,
  })
  try {
    const cfg = await evaluateSstConfig()
    if (process.env.COLDSTART_UNMINIFIED)
      for (const f of cfg.byKind('sst.aws.Function'))
        f.args.nodejs = { ...f.args.nodejs, minify: false, esbuild: { minifyIdentifiers: true } }
    const serviceDir = join(dir, 'service')
    const bareDir = join(dir, 'bare')
    const service = await buildApiLikeSst(cfg, serviceDir)
    const bare = await bundleLikeSst(service.fn, join(ROOT, 'bench/fixtures/bare-lambda.ts'), bareDir, 'bare')
    const baselineRoot = process.env.COLDSTART_BASELINE
    const baselineDir = join(dir, 'baseline')
    const baseline = baselineRoot ? await buildApiLikeSst(cfg, baselineDir, baselineRoot) : undefined

    // the stores: the service's tables and bucket, one inline tool document, one item for the floor
    await Promise.all([
      ensureTable(clients.dynamo, documentsTableSpec(TABLES.Documents)),
      ensureTable(clients.dynamo, toolUsageTableSpec(TABLES.ToolUsage)),
      ensureTable(clients.dynamo, processesTableSpec(TABLES.Processes)),
      ensureTable(clients.dynamo, observedLimitsTableSpec(TABLES.ObservedLimits)),
      ensureTable(clients.dynamo, quotaCountersTableSpec(TABLES.QuotaCounters)),
      ensureTable(clients.dynamo, documentsTableSpec('bare')),
      ensureTable(clients.dynamo, auditTableSpec(AUDIT_TABLE)),
      ensureBucket(clients.s3, BUCKET),
    ])
    const store = new DynamoDocumentStore({
      dynamo: clients.dynamo,
      tableName: TABLES.Documents,
      blobs: new S3BlobStore({ s3: clients.s3, bucket: BUCKET }),
    })
    const tool =
      'type: doc_lookup\ndescription: Read the team handbook.\nlabels: [docs]\nparameters:\n  path: documents/getting-started.md\n'
    // stored as the API stores it: with the JSON form of its data, computed by the write-time check
    const path = serverToolPath('handbook')
    await store.put({ key: { scope: scopeOf('bench', 'p1'), path }, body: tool, json: checkDocumentText(path, tool).json, actor: 'bench' })
    await rawPutItem(clients.dynamo, 'bare', { scope: 'bench', path: 'handbook', body: tool })

    const token = await issueToken(
      SECRET,
      { tenant: 'bench', sub: 'bench', scope: ALL_SCOPES.join(' '), expiresInSeconds: 3600 },
      Math.floor(Date.now() / 1000),
    )
    const common = {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      DYNAMODB_ENDPOINT: emulators.dynamoEndpoint,
      LOG_LEVEL: 'error',
    }
    const serviceEnv = {
      ...common,
      LAMBDA_TASK_ROOT: serviceDir,
      S3_ENDPOINT: emulators.s3Endpoint,
      // no SSM emulator: a stray secret read goes to a closed loopback port, never out
      SSM_ENDPOINT: 'http://127.0.0.1:9',
      AUTH_JWT_SECRET: SECRET,
      // as deployed: the audit table, EMF metrics on stdout, tracing configured off (no OTEL_* variable)
      AUDIT_TABLE,
      SST_RESOURCE_App: JSON.stringify({ name: 'server-tools', stage: 'bench' }),
      ...Object.fromEntries(
        Object.entries(TABLES).map(([k, v]) => [`SST_RESOURCE_${k}`, JSON.stringify({ name: v, type: 'sst.aws.Dynamo' })]),
      ),
      SST_RESOURCE_Blobs: JSON.stringify({ name: BUCKET, type: 'sst.aws.Bucket' }),
    }
    const bareEnv = { ...common, LAMBDA_TASK_ROOT: bareDir, BARE_TABLE: 'bare' }
    const serviceEvent = functionUrlEvent('POST', '/brain/bench/projects/p1/tools/handbook/invoke', token, '{"params":{}}')
    const bareEvent = functionUrlEvent('POST', '/items/handbook', token, '{}')

    const samples = { service: [] as Sample[], bare: [] as Sample[], baseline: [] as Sample[] }
    for (let i = 0; i < ROUNDS + 1; i++) {
      const s = await probe(service.outfile, service.exported, serviceEvent, serviceEnv, serviceDir)
      const b = await probe(bare.outfile, 'handler', bareEvent, bareEnv, bareDir)
      const a =
        baseline &&
        (await probe(baseline.outfile, baseline.exported, serviceEvent, { ...serviceEnv, LAMBDA_TASK_ROOT: baselineDir }, baselineDir))
      if (s.status !== 200 || b.status !== 200 || (a && a.status !== 200))
        throw new Error(`a cold start did not answer 200 (service ${s.status}, floor ${b.status}${a ? `, baseline ${a.status}` : ''})`)
      // the first round warms the OS file cache for both; it is not counted
      if (i > 0) samples.service.push(s), samples.bare.push(b), a && samples.baseline.push(a)
      if (i > 0 && process.env.COLDSTART_SAMPLES)
        appendFileSync(process.env.COLDSTART_SAMPLES, `${JSON.stringify({ service: s, floor: b })}\n`)
    }

    const svc = loadedAtStart(service.metafile, service.outfile)
    const floor = loadedAtStart(bare.metafile, bare.outfile)
    const lazyKib =
      Object.entries(service.metafile.outputs)
        .filter(([f]) => f.endsWith('.mjs'))
        .reduce((n, [, o]) => n + o.bytes / 1024, 0) - svc.kib
    const row = (name: string, bundle: string, s: Sample[]) =>
      `${name.padEnd(34)} ${bundle.padStart(22)} ${fmt(median(s.map((x) => x.import)))} ${fmt(median(s.map((x) => x.first)))} ${fmt(median(s.map((x) => x.import + x.first)))} ${fmt(median(s.map((x) => x.import + x.end)))} ${fmt(median(s.map((x) => x.total)))} ${fmt(median(s.map((x) => x.cpu)))} ${fmt(median(s.map((x) => x.cpuImport)))} ${fmt(median(s.map((x) => x.second)))} ${fmt(median(s.map((x) => x.idle)))}`
    const serviceCold = median(samples.service.map((x) => x.import + x.first))
    const bareCold = median(samples.bare.map((x) => x.import + x.first))
    const ratio = serviceCold / bareCold
    const endRatio = median(samples.service.map((x) => x.import + x.end)) / median(samples.bare.map((x) => x.import + x.end))
    const cpuRatio = median(samples.service.map((x) => x.cpu)) / median(samples.bare.map((x) => x.cpu))
    const [low, high] = bootstrapInterval(
      samples.service.map((x) => x.import + x.first),
      samples.bare.map((x) => x.import + x.first),
    )
    // CPU moves less than wall time on a shared machine: its interval says whether a goal was shown
    const [cpuLow, cpuHigh] = bootstrapInterval(
      samples.service.map((x) => x.cpu),
      samples.bare.map((x) => x.cpu),
    )
    const lines = [
      `cold start, ${ROUNDS} fresh node processes each, interleaved (medians, ms)`,
      `${''.padEnd(34)} ${'at start/files + lazy'.padStart(22)} ${'import'.padStart(8)} ${'1st req'.padStart(8)} ${'cold'.padStart(8)} ${'inv. end'.padStart(8)} ${'proc→res'.padStart(8)} ${'cpu'.padStart(8)} ${'cpu imp.'.padStart(8)} ${'2nd req'.padStart(8)} ${'idle'.padStart(8)}`,
      row('service: tool call (inline doc)', `${svc.kib.toFixed(0)} KiB/${svc.files} + ${lazyKib.toFixed(0)} KiB`, samples.service),
      row('floor: Hono + DynamoDB GetItem', `${floor.kib.toFixed(0)} KiB/${floor.files}`, samples.bare),
      ...(baseline
        ? [
            row(
              'baseline (COLDSTART_BASELINE)',
              `${loadedAtStart(baseline.metafile, baseline.outfile).kib.toFixed(0)} KiB`,
              samples.baseline,
            ),
            `service / baseline: ${(serviceCold / median(samples.baseline.map((x) => x.import + x.first))).toFixed(3)}× wall, ${(median(samples.service.map((x) => x.cpu)) / median(samples.baseline.map((x) => x.cpu))).toFixed(3)}× CPU; baseline / floor: ${(median(samples.baseline.map((x) => x.cpu)) / median(samples.bare.map((x) => x.cpu))).toFixed(2)}× CPU`,
          ]
        : []),
      `cold start (import + first response) service / floor: ${ratio.toFixed(2)}× wall (95 % of resampled rounds ${low.toFixed(2)}–${high.toFixed(2)}×), ${cpuRatio.toFixed(2)}× CPU (${cpuLow.toFixed(2)}–${cpuHigh.toFixed(2)}×) (goal ≤ 1.3×; issue 24: ≤ 0.9× with tracing off)`,
      `to the end of the first invocation (the service's usage write comes after its response): ${endRatio.toFixed(2)}×`,
      `node built-in modules loaded by the first response: service ${median(samples.service.map((x) => x.builtins))}, floor ${median(samples.bare.map((x) => x.builtins))}`,
    ]
    process.stdout.write(`${lines.join('\n')}\n`)
    return {
      summary: [
        `coldstart: ${ratio.toFixed(2)}× wall (resampled ${low.toFixed(2)}–${high.toFixed(2)}×), ${cpuRatio.toFixed(2)}× CPU (${cpuLow.toFixed(2)}–${cpuHigh.toFixed(2)}×), the bare Hono + GetItem floor (goal ≤ 1.3); loaded at start ${svc.kib.toFixed(0)} KiB in ${svc.files} files (+${lazyKib.toFixed(0)} KiB lazy) vs ${floor.kib.toFixed(0)} KiB in ${floor.files}`,
      ],
    }
  } finally {
    destroyAwsClients(clients)
    await emulators.close()
    // COLDSTART_CPU_PROF keeps the bundles, so the profiles can be read against them
    if (process.env.COLDSTART_CPU_PROF) process.stdout.write(`bundles kept in ${dir}\n`)
    else rmSync(dir, { recursive: true, force: true })
  }
}

let probes = 0

/** One fresh node process: import the bundle, answer one event, report where the time went. */
async function probe(outfile: string, exported: string, event: unknown, env: Record<string, string>, cwd: string): Promise<Sample> {
  // The runtime's part (the awslambda global, the response stream) is in place before the
  // handler is imported, as in Lambda; the clock starts at the import.
  // COLDSTART_CPU_PROF: the profiler runs from the import to the first response only (node:inspector
  // in the process), so the profile is the cold start's, not node's own start or the exit
  const profiler = `
    async function startProfile() {
      const { Session } = await import('node:inspector/promises');
      const { writeFileSync } = await import('node:fs');
      const session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.COLDSTART_PROFILE_INTERVAL) || 100 });
      await session.post('Profiler.start');
      return { stop: async () => { const { profile } = await session.post('Profiler.stop'); writeFileSync(process.env.COLDSTART_PROFILE_TO, JSON.stringify(profile)); session.disconnect(); } };
    }`
  const code = `${process.env.COLDSTART_CPU_PROF ? profiler : ''}
    const { installLambdaRuntime, invokeStreaming } = await import(${JSON.stringify(STREAMING_RUNTIME)});
    installLambdaRuntime();
    const profile = process.env.COLDSTART_PROFILE_TO && await startProfile();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const e0 = performance.eventLoopUtilization();
    const m = await import(${JSON.stringify(pathToFileURL(outfile).href)});
    const t1 = performance.now();
    const ci = process.cpuUsage(c0);
    const first = invokeStreaming(m[${JSON.stringify(exported)}], ${JSON.stringify(event)}, { awsRequestId: 'bench', functionName: 'bench' });
    const res = await first.response;
    const t2 = performance.now();
    const c = process.cpuUsage(c0);
    const idle = performance.eventLoopUtilization(e0).idle;
    if (profile) await profile.stop();
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).length;
    await first.done;
    const tEnd = performance.now();
    const second = invokeStreaming(m[${JSON.stringify(exported)}], ${JSON.stringify(event)}, { awsRequestId: 'bench-2', functionName: 'bench' });
    await second.response;
    const t3 = performance.now();
    await second.done;
    process.stdout.write(JSON.stringify({ import: t1 - t0, first: t2 - t1, end: tEnd - t1, second: t3 - tEnd, total: t2, cpu: (c.user + c.system) / 1000, cpuImport: (ci.user + ci.system) / 1000, status: res.statusCode, builtins, idle }));
    process.exit(0);`
  const profileDir =
    process.env.COLDSTART_CPU_PROF && join(process.env.COLDSTART_CPU_PROF, { bare: 'floor' }[basename(cwd)] ?? basename(cwd))
  if (profileDir) mkdirSync(profileDir, { recursive: true })
  const profileEnv = profileDir
    ? {
        COLDSTART_PROFILE_TO: join(profileDir, `${(probes++).toString().padStart(3, '0')}.cpuprofile`),
        COLDSTART_PROFILE_INTERVAL: process.env.COLDSTART_CPU_PROF_INTERVAL ?? '100',
      }
    : {}
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
    cwd,
    env: { ...env, ...profileEnv },
    timeout: 30_000,
  })
  // the function's own EMF metric lines (as in Lambda) come first; the sample is the last line
  return JSON.parse(stdout.trimEnd().split('\n').pop() ?? '') as Sample
}

function functionUrlEvent(method: string, path: string, token: string, body: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { host: 'bench.lambda-url.us-east-1.on.aws', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requestContext: {
      domainName: 'bench.lambda-url.us-east-1.on.aws',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: 'bench',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    body,
    isBase64Encoded: false,
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * How far the ratio of medians moves when the rounds are resampled (with replacement, 2,000
 * times, the service and floor samples of a round kept together): the 2.5th and 97.5th
 * percentiles. A run whose interval straddles the goal has not shown it either way.
 */
function bootstrapInterval(service: number[], floor: number[]): [number, number] {
  // mulberry32, seeded: the same samples give the same interval
  let seed = 1
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const ratios: number[] = []
  for (let i = 0; i < 2000; i++) {
    const picks = service.map(() => Math.floor(random() * service.length))
    ratios.push(median(picks.map((p) => service[p])) / median(picks.map((p) => floor[p])))
  }
  ratios.sort((a, b) => a - b)
  return [ratios[Math.floor(ratios.length * 0.025)], ratios[Math.floor(ratios.length * 0.975)]]
}
const fmt = (ms: number) => `${ms.toFixed(0).padStart(6)}ms`
