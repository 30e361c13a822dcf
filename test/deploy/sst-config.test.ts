/**
 * sst.config.ts, evaluated against stand-ins for SST's globals (`$config`, `sst.*`, `$app`, …):
 * the `sst` CLI cannot run here, so this test is what keeps the deployment in step with the code.
 * It checks the declared table keys against the TableSpecs in lib/stores/aws, the handler against
 * functions/, the links against every `Resource.X` the functions read, the environment against every
 * `requiredEnv('X')`, copyFiles against defaults/, and builds the function the way SST would
 * (esbuild, ESM, the config's banner) and loads that bundle in a fresh node process.
 */
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STORE_CALL_DEADLINE_MS } from '../../functions/settings'
import { YAML_WORKER_MARK } from '../../lib/config/yaml-pool'
import { DEFAULT_LIMITS } from '../../lib/sandbox/limits'
import { WORKER_MARK, type WorkerSetup } from '../../lib/sandbox/worker'
import type { TableSpec } from '../../lib/stores/aws/provision'
import {
  buildApiLikeSst,
  bundleLikeSst,
  CONFIG_PATH,
  Component,
  type EvaluatedConfig,
  evaluateSstConfig,
  outputHolding,
  ROOT,
  splitHandler,
} from '../../scripts/lambda-bundle'

/** The stand-in for the Lambda runtime's response streaming, imported by fresh node processes. */
const STREAMING_RUNTIME = new URL('../../scripts/lambda-streaming-runtime.mjs', import.meta.url).href

const PINNED_SST = '4.17.1'
/** Node runtimes AWS Lambda runs and DESIGN.md allows. */
const LAMBDA_NODE_RUNTIMES = ['nodejs20.x', 'nodejs22.x']

interface Evaluated extends EvaluatedConfig {
  one: (kind: string, name: string) => Component
}

async function evaluateConfig(): Promise<Evaluated> {
  const cfg = await evaluateSstConfig()
  const one = (kind: string, name: string) => {
    const found = cfg.components.filter((c) => c.kind === kind && c.name === name)
    expect(found, `exactly one ${kind} named ${name}`).toHaveLength(1)
    return found[0]
  }
  return { ...cfg, one }
}

// ────────── what the code expects ──────────

function tsFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry)
    if (statSync(full).isDirectory()) out.push(...tsFiles(full))
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(full)
  }
  return out
}

const stripComments = (src: string) => src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1')

/** Every `Resource.X` read in functions/**, with where it is read. */
function resourcesReadByFunctions(): Map<string, string[]> {
  const reads = new Map<string, string[]>()
  for (const file of tsFiles(join(ROOT, 'functions'))) {
    const lines = stripComments(readFileSync(file, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\bResource\.(\w+)/g)) {
        const at = `${relative(ROOT, file)}:${i + 1}`
        reads.set(m[1], [...(reads.get(m[1]) ?? []), at])
      }
    })
  }
  return reads
}

/** Every `requiredEnv('X')` in a file: the variables it cannot start without. */
function requiredEnvOf(file: string): string[] {
  return [...stripComments(readFileSync(file, 'utf8')).matchAll(/requiredEnv\(\s*['"](\w+)['"]\s*\)/g)].map((m) => m[1])
}

/** Every exported `<name>TableSpec` in lib/stores/aws/**, keyed by the SST component name it implies. */
async function tableSpecs(): Promise<Map<string, TableSpec>> {
  const specs = new Map<string, TableSpec>()
  for (const file of tsFiles(join(ROOT, 'lib/stores/aws'))) {
    const src = readFileSync(file, 'utf8')
    const names = [...src.matchAll(/export\s+(?:const|function)\s+(\w+)TableSpec\b/g)].map((m) => m[1])
    if (!names.length) continue
    const mod = (await import(pathToFileURL(file).href)) as Record<string, (name: string) => TableSpec>
    for (const n of names) specs.set(n[0].toUpperCase() + n.slice(1), mod[`${n}TableSpec`](`${n}-table`))
  }
  return specs
}

const SST_FIELD_TYPE: Record<string, 'S' | 'N' | 'B'> = { string: 'S', number: 'N', binary: 'B' }

// ────────── the tests ──────────

let cfg: Evaluated
let api: Component

beforeAll(async () => {
  cfg = await evaluateConfig()
  const functions = cfg.byKind('sst.aws.Function')
  expect(functions.map((f) => f.name)).toContain('Api')
  api = cfg.one('sst.aws.Function', 'Api')
})

describe('sst.config.ts', () => {
  it('names the pinned sst version in a comment, and package.json pins exactly that version, which is the one installed', () => {
    const source = readFileSync(CONFIG_PATH, 'utf8')
    expect(source).toContain(`sst@${PINNED_SST}`)
    expect(source.startsWith('/// <reference path="./.sst/platform/config.d.ts" />')).toBe(true)
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    expect(pkg.devDependencies.sst).toBe(PINNED_SST)
    expect(JSON.parse(readFileSync(join(ROOT, 'node_modules/sst/package.json'), 'utf8')).version).toBe(PINNED_SST)
  })

  it('declares an AWS app that keeps its data when the production stage is removed', () => {
    expect(cfg.app({ stage: 'production' })).toMatchObject({ name: 'server-tools', home: 'aws', removal: 'retain' })
    expect(cfg.app({ stage: 'alice' })).toMatchObject({ name: 'server-tools', home: 'aws', removal: 'remove' })
  })

  it('declares the Documents table with the hash and range keys of documentsTableSpec', async () => {
    const { documentsTableSpec } = await import('../../lib/stores/aws/provision')
    const spec = documentsTableSpec('x')
    const table = cfg.one('sst.aws.Dynamo', 'Documents')
    expect(table.args.primaryIndex).toEqual({ hashKey: spec.hashKey.name, rangeKey: spec.rangeKey?.name })
    expect(SST_FIELD_TYPE[table.args.fields[spec.hashKey.name]]).toBe(spec.hashKey.type)
    expect(SST_FIELD_TYPE[table.args.fields[spec.rangeKey!.name]]).toBe(spec.rangeKey!.type)
  })

  it('declares one table per TableSpec in lib/stores/aws, with the same keys and TTL attribute, and no table without a spec', async () => {
    const specs = await tableSpecs()
    expect([...specs.keys()]).toContain('Documents')
    const declared = cfg.byKind('sst.aws.Dynamo')
    expect(declared.map((t) => t.name).sort()).toEqual([...specs.keys()].sort())
    for (const [name, spec] of specs) {
      const table = cfg.one('sst.aws.Dynamo', name)
      const keys = [spec.hashKey, ...(spec.rangeKey ? [spec.rangeKey] : [])]
      expect(table.args.primaryIndex, `${name} primaryIndex`).toEqual({
        hashKey: spec.hashKey.name,
        ...(spec.rangeKey ? { rangeKey: spec.rangeKey.name } : {}),
      })
      for (const k of keys) expect(SST_FIELD_TYPE[table.args.fields?.[k.name]], `${name}.${k.name} type`).toBe(k.type)
      expect(table.args.ttl, `${name} ttl`).toBe(spec.ttlAttribute)
    }
  })

  it('declares the Blobs bucket', () => {
    cfg.one('sst.aws.Bucket', 'Blobs')
  })

  it('points the API at a handler file in functions/ that exports `handler`', async () => {
    const [file, exported] = splitHandler(api.args.handler)
    expect(exported).toBe('handler')
    expect(existsSync(join(ROOT, `${file}.ts`)), `${file}.ts exists`).toBe(true)
    const result = await build({
      entryPoints: [join(ROOT, `${file}.ts`)],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'node',
      packages: 'external',
      logLevel: 'silent',
    })
    const out = Object.values(result.metafile!.outputs)[0]
    expect(out.exports).toContain('handler')
  })

  it('schedules the orphan blob sweep: a daily Cron whose handler exports `handler` and is linked to what it reads', async () => {
    const cron = cfg.one('sst.aws.Cron', 'BlobSweep')
    expect(cron.args.schedule).toBe('rate(1 day)')
    const [file, exported] = splitHandler(cron.args.function.handler)
    expect([file, exported]).toEqual(['functions/sweep', 'handler'])
    const source = stripComments(readFileSync(join(ROOT, `${file}.ts`), 'utf8'))
    const reads = [...new Set([...source.matchAll(/\bResource\.(\w+)/g)].map((m) => m[1]))].sort()
    const linked = (cron.args.function.link as Component[]).map((l) => l.name).sort()
    expect(reads).toEqual(['Blobs', 'Documents'])
    expect(linked).toEqual(reads)
    expect(LAMBDA_NODE_RUNTIMES).toContain(cron.args.function.runtime)
    expect(Number(/^(\d+) minutes$/.exec(cron.args.function.timeout)?.[1])).toBeLessThanOrEqual(15)
  })

  it('links every resource that functions/ reads through Resource.X', () => {
    const reads = resourcesReadByFunctions()
    expect([...reads.keys()]).toEqual(expect.arrayContaining(['Documents', 'Blobs']))
    const linked = (api.args.link as unknown[]).map((l) => (l instanceof Component ? l.name : String(l)))
    const missing = [...reads].filter(([name]) => !linked.includes(name)).map(([name, at]) => `Resource.${name} (read at ${at.join(', ')})`)
    expect(missing, 'read via Resource but not linked to the Api function').toEqual([])
  })

  it('gives the API every environment variable its entry point requires, the JWT secret from sst.Secret', () => {
    const [file] = splitHandler(api.args.handler)
    const required = requiredEnvOf(join(ROOT, `${file}.ts`))
    expect(required).toContain('AUTH_JWT_SECRET')
    expect(Object.keys(api.args.environment ?? {})).toEqual(expect.arrayContaining(required))
    const secret = cfg.one('sst.Secret', 'AuthJwtSecret')
    expect(api.args.environment.AUTH_JWT_SECRET).toBe(secret.value)
  })

  it('grants the API every SSM action the secret store sends, on the /server-tools/ parameters, when the entry point uses it', () => {
    const [file] = splitHandler(api.args.handler)
    if (!/createSsmSecretStore|SsmSecretStore/.test(stripComments(readFileSync(join(ROOT, `${file}.ts`), 'utf8')))) return
    const storeSource = stripComments(readFileSync(join(ROOT, 'lib/stores/aws/secret-store.ts'), 'utf8'))
    // operations are sent by name (the SDK loads on first use): this.send('GetParameters', …)
    const sent = [...new Set([...storeSource.matchAll(/this\.send\(\s*'(\w+)'/g)].map((m) => `ssm:${m[1]}`))]
    expect(sent.length).toBeGreaterThan(0)
    const granted = ((api.args.permissions ?? []) as { actions: string[]; resources: string[] }[]).filter((p) =>
      p.resources.some((r) => /:parameter\/server-tools\/\*$/.test(r)),
    )
    expect(granted.flatMap((p) => p.actions)).toEqual(expect.arrayContaining(sent))
  })

  it('lets the API append to and read the audit table, and nothing else: no update, no delete, not linked', () => {
    const audit = cfg.one('sst.aws.Dynamo', 'Audit')
    // a link grants dynamodb:* on the table: the audit table must not be one
    expect((api.args.link as Component[]).map((l) => l.name)).not.toContain('Audit')
    expect(api.args.environment.AUDIT_TABLE).toBe(audit.name)
    const grants = (api.args.permissions ?? []) as { actions: string[]; resources: string[] }[]
    const onAudit = grants.filter((p) => p.resources.some((r) => r === audit.arn || r.startsWith(`${audit.arn}/`) || r === '*'))
    const actions = onAudit.flatMap((p) => p.actions)
    expect(actions.sort()).toEqual(['dynamodb:PutItem', 'dynamodb:Query'])
    // nor any wildcard that would reach it some other way
    for (const p of grants)
      for (const a of p.actions)
        expect(
          /^dynamodb:(\*|Update|Delete|BatchWrite|PartiQL|TransactWrite)/.test(a) && p.resources.some((r) => /\*/.test(r)),
          `${a} on ${p.resources}`,
        ).toBe(false)
    // and the adapter sends only what is granted: BatchWriteItem (batchPutItems) only with
    // `batchWrites`, which npm start's embedded store turns on and the Lambda entry never does
    const source = stripComments(readFileSync(join(ROOT, 'lib/stores/aws/audit-store.ts'), 'utf8'))
    const sent = [...new Set([...source.matchAll(/this\.db\.(\w+)[<(]/g)].map((m) => m[1]))].sort()
    expect(sent).toEqual(['batchPutItems', 'putItem', 'query'])
    expect(source).toMatch(/if \(opts\.batchWrites\) this\.appendMany =/)
    const lambda = stripComments(readFileSync(join(ROOT, 'functions/api.ts'), 'utf8'))
    expect(lambda).toMatch(/createAwsDeps\(/)
    expect(lambda).not.toMatch(/auditBatchWrites|batchWrites/)
  })

  it('copies defaults/ into the function package where functions/defaults.ts looks for it', () => {
    expect(api.args.copyFiles).toEqual(expect.arrayContaining([{ from: 'defaults', to: 'defaults' }]))
    expect(statSync(join(ROOT, 'defaults')).isDirectory()).toBe(true)
    expect(readFileSync(join(ROOT, 'functions/defaults.ts'), 'utf8')).toMatch(/LAMBDA_TASK_ROOT[\s\S]*'defaults'/)
  })

  it('copies the console assets into the function package where functions/console-assets.ts looks for them', () => {
    expect(api.args.copyFiles).toEqual(
      expect.arrayContaining([{ from: 'functions/http/console/assets', to: 'functions/http/console/assets' }]),
    )
    expect(readFileSync(join(ROOT, 'functions/console-assets.ts'), 'utf8')).toMatch(
      /LAMBDA_TASK_ROOT[\s\S]*'functions\/http\/console\/assets'/,
    )
  })

  it('runs on a Node.js runtime that AWS Lambda supports', () => {
    expect(LAMBDA_NODE_RUNTIMES).toContain(api.args.runtime)
  })

  it('bundles as ESM with the createRequire banner', () => {
    expect(api.args.nodejs.format ?? 'esm').toBe('esm')
    expect(api.args.nodejs.banner).toMatch(/import\s*\{\s*createRequire\s*\}\s*from\s*['"](node:)?module['"]/)
    expect(api.args.nodejs.banner).toMatch(/const require = createRequire\(import\.meta\.url\)/)
  })

  it('sets memory and a timeout within Lambda limits', () => {
    const mb = Number(/^(\d+) MB$/.exec(api.args.memory)?.[1])
    expect(mb).toBeGreaterThanOrEqual(128)
    expect(mb).toBeLessThanOrEqual(10240)
    const seconds = Number(/^(\d+) seconds?$/.exec(api.args.timeout)?.[1])
    expect(seconds).toBeGreaterThanOrEqual(1)
    expect(seconds).toBeLessThanOrEqual(900)
  })

  it('gives one DynamoDB call, retries included, at most a third of the function timeout', () => {
    const seconds = Number(/^(\d+) seconds?$/.exec(api.args.timeout)?.[1])
    expect(STORE_CALL_DEADLINE_MS).toBeLessThanOrEqual((seconds * 1000) / 3)
    expect(readFileSync(join(ROOT, 'functions/api.ts'), 'utf8')).toMatch(/storeCallDeadlineMs: STORE_CALL_DEADLINE_MS/)
  })

  it('streams the responses of the handler it points at (invoke mode RESPONSE_STREAM for a Function URL)', async () => {
    // the entry exports an awslambda.streamifyResponse handler, which a buffered URL cannot call
    const [file] = splitHandler(api.args.handler)
    expect(readFileSync(join(ROOT, `${file}.ts`), 'utf8')).toMatch(/streamingLambdaHandler\(/)
    expect(api.args.streaming).toBe(true)
    expect(api.args.url).toBeTruthy()
  })

  it('exposes the API over a Function URL or an ApiGatewayV2 route and returns its URL as an output', () => {
    const gateways = cfg.byKind('sst.aws.ApiGatewayV2')
    if (gateways.length) {
      expect(gateways[0].routes.length).toBeGreaterThan(0)
      expect(Object.values(cfg.outputs)).toContain(gateways[0].url)
    } else {
      expect(api.args.url).toBeTruthy()
      expect(Object.values(cfg.outputs)).toContain(api.url)
    }
  })
})

describe('the API bundle built the way SST builds it', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'server-tools-bundle-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('loads in a fresh node process with its copied files and answers a request', async () => {
    const { outfile, exported, metafile } = await buildApiLikeSst(cfg, dir)
    // the sandbox is a chunk of its own, loaded on the first script (never at cold start)
    const sandboxChunk = outputHolding(metafile, 'lib/sandbox/quickjs.ts')
    expect(sandboxChunk).toBeDefined()
    expect(sandboxChunk).not.toBe(outfile)
    // so are the YAML parse workers (lib/config/yaml-pool.ts), loaded by the first long text
    const yamlChunk = outputHolding(metafile, 'lib/config/yaml-pool.ts')
    expect(yamlChunk).toBeDefined()
    expect(yamlChunk).not.toBe(outfile)

    // What Lambda + SST provide: the task root, the links, the environment. No request leaves the process.
    const env = {
      PATH: process.env.PATH ?? '',
      LAMBDA_TASK_ROOT: dir,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bundle-test',
      AWS_SECRET_ACCESS_KEY: 'bundle-test',
      SST_RESOURCE_App: JSON.stringify({ name: 'server-tools', stage: 'test' }),
      ...Object.fromEntries(
        (api.args.link as Component[]).map((l) => [
          `SST_RESOURCE_${l.name}`,
          JSON.stringify({ name: `${l.name.toLowerCase()}-bundle-test`, type: l.kind }),
        ]),
      ),
      ...Object.fromEntries(Object.keys(api.args.environment ?? {}).map((k) => [k, k === 'LOG_LEVEL' ? 'error' : `bundle-test-${k}`])),
    }
    const workerSetup: WorkerSetup = { [WORKER_MARK]: true, limits: DEFAULT_LIMITS, useSyncBuild: true }
    const probe = `
      // the Lambda runtime's part: the awslambda global and the response stream
      const { installLambdaRuntime, invokeStreaming } = await import(${JSON.stringify(STREAMING_RUNTIME)});
      installLambdaRuntime();
      const m = await import(${JSON.stringify(pathToFileURL(outfile).href)});
      const handler = m[${JSON.stringify(exported)}];
      const h = async (event, context) => {
        const { response, done } = invokeStreaming(handler, event, context);
        const res = await response;
        await done;
        return { statusCode: res.statusCode, headers: res.headers, body: res.body.toString('utf8') };
      };
      const event = { version: '2.0', routeKey: '$default', rawPath: '/health', rawQueryString: '', headers: { host: 'x.lambda-url.us-east-1.on.aws' },
        requestContext: { domainName: 'x.lambda-url.us-east-1.on.aws', http: { method: 'GET', path: '/health', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 't' }, requestId: 'r', routeKey: '$default', stage: '$default', time: '', timeEpoch: 0 },
        isBase64Encoded: false };
      const res = await h(event, {});
      // the console: server-rendered JSX and an asset read from the copied files
      const page = await h({ ...event, rawPath: '/console/tools', requestContext: { ...event.requestContext, http: { ...event.requestContext.http, path: '/console/tools' } } }, {});
      const src = /src="([^"?]+)/.exec(page.body)[1];
      const asset = await h({ ...event, rawPath: src, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, path: src } } }, {});
      const consoleOk = page.statusCode === 200 && /script-src 'self'/.test(page.headers['content-security-policy']) && asset.statusCode === 200 && asset.body.includes('sessionStorage');
      // the sandbox's WASM loads from the installed packages, not from the bundle
      const q = await import('quickjs-emscripten');
      const vm = (await q.getQuickJS()).newContext();
      const sum = vm.dump(vm.unwrapResult(vm.evalCode('5 + 7')));
      // Ajv is required from beside the bundle when a schema needs it (lib/config/json-schema.ts)
      const { createRequire } = await import('node:module');
      const ajv = typeof createRequire(${JSON.stringify(pathToFileURL(outfile).href)})('ajv').default;
      // the sandbox's workers are its chunk evaluated again in a worker thread (lib/sandbox/quickjs.ts):
      // drive one through its protocol, with a host call answered from here
      const { Worker } = await import('node:worker_threads');
      const w = new Worker(new URL(${JSON.stringify(pathToFileURL(sandboxChunk!).href)}), { workerData: ${JSON.stringify(workerSetup)}, execArgv: [] });
      const sandboxed = await new Promise((resolve, reject) => {
        w.on('error', reject);
        w.on('message', (m) => {
          if (m.t === 'host') w.postMessage({ t: 'answer', id: m.id, callId: m.callId, answer: { json: JSON.stringify({ isError: false, content: JSON.parse(m.call.params) }) } });
          if (m.t === 'done') resolve(m.result.value);
        });
        w.postMessage({ t: 'run', id: 1, req: { source: 'vance.tools.call("echo", { n: a }).n + 1', inputs: '{"a":41}', timeoutMs: 5000, host: { context: { tenant: 't', project: 'p' }, depth: 0 } } });
      });
      await w.terminate();
      // a YAML parse worker is its chunk evaluated again too: it answers data with the positions of its nodes
      const yw = new Worker(new URL(${JSON.stringify(pathToFileURL(yamlChunk!).href)}), { workerData: { ${JSON.stringify(YAML_WORKER_MARK)}: true }, execArgv: [] });
      const parsed = await new Promise((resolve, reject) => {
        yw.on('error', reject);
        yw.on('message', (m) => {
          if (m.t === 'ready') yw.postMessage({ id: 1, text: 'a:\\n  b: [1, 2]\\n' });
          if (m.t === 'done') resolve({ data: m.answer.data, lines: [...m.answer.positions.line] });
        });
      });
      await yw.terminate();
      process.stdout.write(JSON.stringify({ type: typeof handler, status: res.statusCode, body: res.body, consoleOk, sum, ajv, sandboxed, parsed }));`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
      cwd: dirname(outfile),
      env,
      timeout: 20_000,
    })
    // the function's metrics (EMF) and logs share stdout: the probe's answer is the last line
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      type: 'function',
      status: 200,
      body: JSON.stringify({ ok: true }),
      consoleOk: true,
      sum: 12,
      ajv: 'function',
      sandboxed: 42,
      parsed: { data: { a: { b: [1, 2] } }, lines: [1, 2, 2, 2, 2] },
    })
  })
})

describe('the sandbox bundled the same way', () => {
  it('starts its workers from the bundle: host calls answered, a run past its deadline terminated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-tools-sandbox-bundle-'))
    try {
      const { outfile } = await bundleLikeSst(api, join(ROOT, 'lib/sandbox/index.ts'), dir, 'sandbox')
      const probe = `
        const { QuickJsSandbox } = await import(${JSON.stringify(pathToFileURL(outfile).href)});
        const sandbox = new QuickJsSandbox({ maxStatements: 1e12, asyncEngines: 2 });
        const tools = { call: async (name, p) => ({ isError: false, content: p }), delegate: async () => ({ isError: false, content: null }), list: async () => ['echo'], has: async () => true };
        const host = { tools, context: { tenant: 't', project: 'p' }, depth: 0 };
        const [hostile, plain] = await Promise.all([
          sandbox.run({ source: 'function f() { try { f() } catch (e) { f() } }\\nf()', timeoutMs: 300 }),
          sandbox.run({ source: 'a + b', inputs: { a: 5, b: 7 } }),
        ]);
        const sibling = await sandbox.run({ source: 'vance.tools.call("echo", { n: a }).n + 1', inputs: { a: 41 }, host });
        process.stdout.write(JSON.stringify({ hostile: hostile.error, plain: plain.value, sibling: sibling.value }));`
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
        timeout: 20_000,
      })
      expect(JSON.parse(stdout)).toEqual({ hostile: 'TIMEOUT', plain: 12, sibling: 42 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
