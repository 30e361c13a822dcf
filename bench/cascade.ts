/**
 * bench/cascade — what the cascade costs over the bare storage requests it is built on, measured
 * side by side in one run on one dynalite (loopback only):
 *
 *   cascade lookup  ServerToolService.lookup of a project-layer tool that also exists in the tenant
 *                   layer (so the BatchGetItem returns two items), caches warm
 *      vs           one raw GetItem of the same item                               goal ≤ 1.3×
 *   200-tool listing listAll / listViews over 100 tenant + 100 project tools (+ bundled, built-ins)
 *      vs           two raw Query calls in parallel (one per layer, as the cascade issues them)
 *
 * Samples of the operation and its floor alternate (ABBA…), so drift and GC hit both alike; the
 * statistic is the median. Run with `npm run bench` or `npx tsx bench/cascade.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { buildDeps } from '../functions/deps'
import { startEmulators } from '../functions/emulators'
import { SERVER_TOOLS_PREFIX, serverToolPath } from '../lib/config/server-tool'
import { scopeOf } from '../lib/documents/ports'
import { StampedDocumentCache } from '../lib/documents/stamped-cache'
import { systemClock } from '../lib/runtime/clock'
import { S3BlobStore } from '../lib/stores/aws/blob-store'
import { destroyAwsClients, makeAwsClients } from '../lib/stores/aws/clients'
import { DynamoDocumentStore } from '../lib/stores/aws/document-store'
import { documentsTableSpec, ensureBucket, ensureTable } from '../lib/stores/aws/provision'
import { rawBatchGetItems, rawGetItem, rawQueryPage } from '../lib/stores/aws/raw-probes'
import { DynamoTenantStampStore } from '../lib/stores/aws/tenant-stamp-store'
import { newWriteId } from '../lib/stores/aws/write-ids'

export interface Stats {
  name: string
  n: number
  p50: number
  p90: number
  p99: number
}

export interface Ratio {
  name: string
  value: number
  goal?: number
}

export interface CascadeBenchResult {
  stats: Stats[]
  ratios: Ratio[]
  /** Lines for the runner's closing summary. */
  summary: string[]
}

export interface CascadeBenchOptions {
  /** Time budget per measured group, after warm-up (default 5 s). */
  budgetMs?: number
  /** Sample cap per operation (defaults: 4000 for lookups, 600 for listings). */
  maxSamples?: number
  log?: (line: string) => void
}

const TABLE = 'bench-documents'
const BUCKET = 'bench-blobs'
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
const LISTED_PER_LAYER = 100

const tool = (description: string, labels: string[] = []) =>
  `type: doc_lookup\ndescription: ${description}\nlabels: [${labels.join(', ')}]\nparameters:\n  path: documents/getting-started.md\n`

export async function benchCascade(opts: CascadeBenchOptions = {}): Promise<CascadeBenchResult> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const budgetMs = opts.budgetMs ?? 5_000
  const s3Directory = mkdtempSync(join(tmpdir(), 'server-tools-bench-s3-'))
  const emulators = await startEmulators({ s3Directory })
  const clients = makeAwsClients({
    region: 'us-east-1',
    credentials: CREDENTIALS,
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
  })
  try {
    await Promise.all([ensureTable(clients.dynamo, documentsTableSpec(TABLE)), ensureBucket(clients.s3, BUCKET)])
    const store = new DynamoDocumentStore({
      dynamo: clients.dynamo,
      tableName: TABLE,
      blobs: new S3BlobStore({ s3: clients.s3, bucket: BUCKET }),
    })
    const { tools } = buildDeps({ store, jwtSecret: 'bench-only' })
    // the same lookups as the service makes them inside a request: through the per-container
    // cache, whose only storage request is the tenant stamp read once per request
    let request: object | undefined
    const stamps = new DynamoTenantStampStore({ dynamo: clients.dynamo, tableName: TABLE, shard: 0 })
    let stampReads = 0
    const countedStamps = {
      ...stamps,
      read: (t: string) => (stampReads++, stamps.read(t)),
      begin: stamps.begin.bind(stamps),
      end: stamps.end.bind(stamps),
    }
    const cached = new StampedDocumentCache({ store, stamps: countedStamps, request: () => request, clock: systemClock, newWriteId })
    const { tools: cachedTools } = buildDeps({ store: cached, jwtSecret: 'bench-only' })
    const actor = { actor: 'bench' }

    // ── data ──
    await tools.put('acme', '_tenant', 'order_help', tool('Tenant-wide order help', ['support']), actor)
    await tools.put('acme', 'shop', 'order_help', tool('Shop order help', ['support', 'shop']), actor)
    const names = (layer: string) => Array.from({ length: LISTED_PER_LAYER }, (_, i) => `${layer}_tool_${String(i).padStart(3, '0')}`)
    for (const [project, list] of [
      ['_tenant', names('tenant')],
      ['big', names('project')],
    ] as const) {
      for (let i = 0; i < list.length; i += 20) {
        await Promise.all(list.slice(i, i + 20).map((n) => tools.put('bulk', project, n, tool(`Listed tool ${n}`, ['bulk']), actor)))
      }
    }

    const lookupKey = { scope: scopeOf('acme', 'shop'), path: serverToolPath('order_help') }
    const lookup = async () => {
      const t = await tools.lookup('acme', 'shop', 'order_help')
      if (t?.source !== 'project') throw new Error(`lookup resolved to ${t?.source ?? 'nothing'}, expected the project layer`)
    }
    const requestLookup = async () => {
      request = {}
      try {
        const t = await cachedTools.lookup('acme', 'shop', 'order_help')
        if (t?.source !== 'project') throw new Error(`cached lookup resolved to ${t?.source ?? 'nothing'}, expected the project layer`)
      } finally {
        request = undefined
      }
    }
    const getItem = async () => {
      if (!(await rawGetItem(clients.dynamo, TABLE, lookupKey))) throw new Error('raw GetItem found nothing')
    }
    // Diagnostic floor: the request the cascade actually sends (project + tenant keys, both present).
    const batchKeys = [lookupKey, { scope: scopeOf('acme', '_tenant'), path: serverToolPath('order_help') }]
    const batchGet = async () => {
      if ((await rawBatchGetItems(clients.dynamo, TABLE, batchKeys)).length !== 2)
        throw new Error('raw BatchGetItem did not return both layers')
    }
    const expectedListed = 2 * LISTED_PER_LAYER
    const twoQueries = async () => {
      const pages = await Promise.all(
        [scopeOf('bulk', '_tenant'), scopeOf('bulk', 'big')].map((scope) =>
          rawQueryPage(clients.dynamo, TABLE, { name: 'scope', value: scope }, { name: 'path', prefix: SERVER_TOOLS_PREFIX }),
        ),
      )
      const items = pages[0].items.length + pages[1].items.length
      if (items !== expectedListed || pages.some((p) => p.more))
        throw new Error(`raw Query returned ${items} items${pages.some((p) => p.more) ? ' and more pages' : ''}`)
    }
    const listAll = async () => {
      const { tools: all } = await tools.listAll('bulk', 'big')
      if (all.length < expectedListed) throw new Error(`listAll returned ${all.length} tools`)
    }
    const listViews = async () => {
      const { tools: views } = await tools.listViews('bulk', 'big')
      if (views.length < expectedListed) throw new Error(`listViews returned ${views.length} views`)
    }

    // ── one round trip per lookup (the design's promise), counted on the store ──
    await lookup()
    const before = store.roundTrips
    for (let i = 0; i < 50; i++) await lookup()
    const tripsPerLookup = (store.roundTrips - before) / 50
    await requestLookup()
    const [storeBefore, stampsBefore] = [store.roundTrips, stampReads]
    for (let i = 0; i < 50; i++) await requestLookup()
    const tripsPerRequestLookup = (store.roundTrips - storeBefore + stampReads - stampsBefore) / 50

    // ── measurements ──
    const [lookupStats, getItemStats, batchStats, requestStats] = await measure(
      [lookup, getItem, batchGet, requestLookup],
      [
        'cascade lookup (project over tenant)',
        'raw GetItem',
        'raw BatchGetItem, 2 keys (diagnostic)',
        'cascade lookup in a request (cached)',
      ],
      {
        budgetMs,
        maxSamples: opts.maxSamples ?? 4_000,
        warmup: 300,
      },
    )
    const [listAllStats, listViewsStats, queryStats] = await measure(
      [listAll, listViews, twoQueries],
      ['listAll, 200 tools', 'listViews, 200 tools', 'raw Query x2 (parallel)'],
      {
        budgetMs,
        maxSamples: opts.maxSamples ?? 600,
        warmup: 40,
      },
    )

    const stats = [getItemStats, batchStats, lookupStats, requestStats, queryStats, listAllStats, listViewsStats]
    const ratios: Ratio[] = [
      { name: 'cascade lookup p50 / raw GetItem p50', value: lookupStats.p50 / getItemStats.p50, goal: 1.3 },
      { name: 'cascade lookup in a request (stamp + cache) p50 / raw GetItem p50', value: requestStats.p50 / getItemStats.p50, goal: 1.3 },
      { name: 'cascade lookup p50 / raw BatchGetItem(2 keys) p50', value: lookupStats.p50 / batchStats.p50 },
      { name: 'listAll (200 tools) p50 / 2x raw Query p50', value: listAllStats.p50 / queryStats.p50 },
      { name: 'listViews (200 tools) p50 / 2x raw Query p50', value: listViewsStats.p50 / queryStats.p50 },
    ]
    const ratioLine = (r: Ratio) =>
      `${r.name} = ${r.value.toFixed(2)}x${r.goal !== undefined ? ` (goal <= ${r.goal})${r.value <= r.goal ? '' : '  MISSED'}` : ''}`

    log('')
    log(`bench/cascade — dynalite on ${emulators.dynamoEndpoint}, Node ${process.version}, medians of interleaved samples`)
    log(
      `machine: ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (client and dynalite share one event loop; a busy machine widens the spread)`,
    )
    log('')
    log(table(stats))
    log('')
    log(
      `DynamoDB round trips per cascade lookup: ${tripsPerLookup.toFixed(2)}; per request's lookup through the cache: ${tripsPerRequestLookup.toFixed(2)} (the stamp)`,
    )
    for (const r of ratios) log(ratioLine(r))
    log('')
    return { stats, ratios, summary: ratios.map((r) => `cascade: ${ratioLine(r)}`) }
  } finally {
    destroyAwsClients(clients)
    await emulators.close()
    rmSync(s3Directory, { recursive: true, force: true })
  }
}

/**
 * Runs the operations round-robin (order reversed every round) until the budget or the sample cap
 * is reached, after a warm-up; returns one Stats per operation.
 */
async function measure(
  ops: (() => Promise<void>)[],
  names: string[],
  opts: { budgetMs: number; maxSamples: number; warmup: number },
): Promise<Stats[]> {
  for (let i = 0; i < opts.warmup; i++) for (const op of ops) await op()
  const samples = ops.map(() => [] as number[])
  const deadline = performance.now() + opts.budgetMs
  for (let round = 0; round < opts.maxSamples && (performance.now() < deadline || round < 50); round++) {
    const order = round % 2 === 0 ? ops.map((_, i) => i) : ops.map((_, i) => ops.length - 1 - i)
    for (const i of order) {
      const t0 = performance.now()
      await ops[i]()
      samples[i].push(performance.now() - t0)
    }
  }
  return samples.map((s, i) => stats(names[i], s))
}

function stats(name: string, samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
  return { name, n: sorted.length, p50: q(0.5), p90: q(0.9), p99: q(0.99) }
}

function table(rows: Stats[]): string {
  const width = Math.max(...rows.map((r) => r.name.length), 'operation'.length)
  const num = (v: number) => v.toFixed(3).padStart(9)
  const lines = [`${'operation'.padEnd(width)}  ${'p50 ms'.padStart(9)}${'p90 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'n'.padStart(7)}`]
  for (const r of rows) lines.push(`${r.name.padEnd(width)}  ${num(r.p50)}${num(r.p90)}${num(r.p99)}${String(r.n).padStart(7)}`)
  return lines.join('\n')
}

// `npx tsx bench/cascade.ts` runs this bench alone.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchCascade().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      process.exit(1)
    },
  )
}
