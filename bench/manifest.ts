/**
 * bench/manifest — the per-turn manifest of a 340-tool project (272 singletons, 3 packs × 20,
 * 8 built-ins) with a budget of 128, served by the real app (auth, process read, cascade
 * listing, classification, triage, discovery blocks, rendering) against a plain Hono route
 * serving the same bytes precomputed (as a string, encoded per request; also pre-encoded, the
 * stricter floor now that the manifest route serves its memoised body's bytes), and against
 * hello-world — measured side by side in one run, in-process (`app.request`), batches alternating
 * so drift and GC hit all alike.
 *
 *   goal: manifest ≥ 0.5× the plain route's requests/s
 *
 * Run with `npm run bench` or `npx tsx bench/manifest.ts`.
 */

import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { Hono } from 'hono'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { authenticate, issueToken } from '../functions/http/auth'
import { success } from '../lib/calls/outcome'
import type { Tool, ToolFactory } from '../lib/tools/contracts'

const SECRET = 'bench-only-secret'
const SINGLETONS = 272
const PACKS = 3
const PACK_SIZE = 20
const BATCH = 25

/** A pack type for the bench: `ops` sub-tools with a small schema each. */
const benchPackFactory: ToolFactory<{ ops: string[] }> = {
  typeId: 'bench_pack',
  kind: 'pack',
  parametersSchema: { type: 'object', required: ['ops'], properties: { ops: { type: 'array', items: { type: 'string' } } } },
  async create(config) {
    return config.parameters.ops.map((op) => ({
      localName: op,
      description: `Run ${op} against the ${config.name} account. Returns the upstream JSON.`,
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string', description: 'Record id' }, limit: { type: 'integer', minimum: 1 } },
        additionalProperties: false,
      },
      searchHint: `${config.name} ${op}`,
      async invoke(params) {
        return success({ op, params })
      },
    }))
  },
}

const builtin = (name: string): Tool => ({
  name,
  description: `Built-in ${name} for the bench.`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
  labels: ['bench'],
  primary: true,
  deferred: false,
  source: 'builtin',
  typeId: 'builtin',
  async invoke() {
    return success(name)
  },
})

/** whoami + tool_list + tool_description + invoke_tool are the other four of the eight. */
// with the service's own five (whoami, execute_javascript, tool_list, tool_description, invoke_tool): 8 built-ins
const EXTRA_BUILTINS = ['bench_clock', 'bench_echo', 'bench_search'].map(builtin)

export interface ManifestBenchResult {
  summary: string[]
}

export async function benchManifest(opts: { budgetMs?: number; log?: (line: string) => void } = {}): Promise<ManifestBenchResult> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const budgetMs = opts.budgetMs ?? 6_000
  const deps = createMemoryDeps({
    jwtSecret: SECRET,
    extraFactories: [benchPackFactory],
    extraBuiltins: EXTRA_BUILTINS,
    bundledFiles: [
      { path: 'engines/default.yaml', body: 'description: unrestricted\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
      { path: 'models/bench/_provider.yaml', body: 'wireType: openai\nmaxTools: 128\n' },
      { path: 'documents/manual.md', body: '# Manual\n' },
    ],
  })
  const actor = { actor: 'bench' }
  const families = [
    'doc',
    'file',
    'exec',
    'mail',
    'calendar',
    'crm',
    'ticket',
    'wiki',
    'sheet',
    'chat',
    'build',
    'deploy',
    'metrics',
    'billing',
    'user',
    'search',
    'note',
  ]
  for (let i = 0; i < SINGLETONS; i++) {
    const family = families[i % families.length]
    const name = `${family}_op${String(i).padStart(3, '0')}`
    const primary = i % 2 === 0
    const body = `type: doc_lookup\ndescription: ${family} operation ${i}. Reads the ${family} manual section ${i} and answers with it.\nprimary: ${primary}\nlabels: [${family}]\n${i % 5 === 0 ? `searchHint: ${family} lookup ${i}\n` : ''}${i % 7 === 0 ? `promptHint: Use ${family} tools for ${family} questions.\n` : ''}parameters:\n  path: documents/manual.md\n`
    await deps.tools.put('acme', 'shop', name, body, actor)
  }
  for (let p = 0; p < PACKS; p++) {
    const ops = Array.from({ length: PACK_SIZE }, (_, i) => `op${String(i).padStart(2, '0')}`)
    await deps.tools.put(
      'acme',
      'shop',
      `pack${p}`,
      `type: bench_pack\ndescription: Pack ${p}\nprimary: true\npromptHint: Pack ${p} speaks to account ${p}.\nparameters:\n  ops: [${ops.join(', ')}]\n`,
      actor,
    )
  }
  const app = createApp(deps)
  const token = await issueToken(
    SECRET,
    { tenant: 'acme', sub: 'bench', scope: 'tools:read tools:invoke', expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const headers = { authorization: `Bearer ${token}` }
  const spawned = await app.request('/brain/acme/projects/shop/processes', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ models: ['bench/model'] }),
  })
  const proc = (await spawned.json()) as { id: string; allowed: string[] }
  const path = `/brain/acme/projects/shop/processes/${proc.id}/manifest?format=openai`
  const first = await app.request(path, { headers })
  const bytes = await first.text()
  const manifest = JSON.parse(bytes) as { tools: unknown[]; budget: { limit: number; demoted: number; demotedFamilies: string[] } }
  const visible =
    proc.allowed.length +
    2 /* the floor, allowed regardless */ -
    proc.allowed.filter((n) => n === 'tool_list' || n === 'tool_description').length
  if (visible !== SINGLETONS + PACKS * PACK_SIZE + 8)
    throw new Error(`bench project has ${visible} tools, expected 340 (272 singletons, 3 packs x 20, 8 built-ins)`)
  log(
    `manifest bench: ${visible} tools visible, ${manifest.tools.length} in the manifest (limit ${manifest.budget.limit}, ${manifest.budget.demoted} demoted in ${manifest.budget.demotedFamilies.length} families), ${bytes.length} bytes`,
  )

  const serveBytes = (c: { body: (b: string, s: 200, h: Record<string, string>) => Response }) =>
    c.body(bytes, 200, { 'content-type': 'application/json; charset=utf-8' })
  const plain = new Hono().get('/manifest', serveBytes)
  // the stricter floor: the same body already UTF-8 encoded, as the manifest route now serves its memoised body
  const encoded = new TextEncoder().encode(bytes)
  const plainEncoded = new Hono().get('/manifest', (c) => c.body(encoded, 200, { 'content-type': 'application/json; charset=utf-8' }))
  // the same bytes behind the same bearer-JWT check the real route has (verification is not what is measured)
  const plainAuthed = new Hono().use('/brain/:tenant/*', authenticate({ jwtSecret: SECRET })).get('/brain/:tenant/manifest', serveBytes)
  const hello = new Hono().get('/hello', (c) => c.text('hello'))

  const cases = [
    { name: 'manifest (full app)', run: async () => (await app.request(path, { headers })).text() },
    { name: 'plain route, same bytes', run: async () => (await plain.request('/manifest')).text() },
    { name: 'plain route + same auth', run: async () => (await plainAuthed.request('/brain/acme/manifest', { headers })).text() },
    { name: 'plain route, pre-encoded', run: async () => (await plainEncoded.request('/manifest')).text() },
    { name: 'hello-world route', run: async () => (await hello.request('/hello')).text() },
  ]
  for (const c of cases) for (let i = 0; i < 200; i++) await c.run() // warm-up
  const perOp: number[][] = cases.map(() => [])
  const deadline = performance.now() + budgetMs
  let rounds = 0
  while (performance.now() < deadline && rounds < 2_000) {
    const order = rounds % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i)
    for (const i of order) {
      const t0 = performance.now()
      for (let k = 0; k < BATCH; k++) await cases[i].run()
      perOp[i].push((performance.now() - t0) / BATCH)
    }
    rounds++
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const rps = perOp.map((xs) => 1000 / median(xs))
  for (let i = 0; i < cases.length; i++)
    log(
      `  ${cases[i].name.padEnd(26)} ${rps[i].toFixed(0).padStart(8)} req/s  (median ${(median(perOp[i]) * 1000).toFixed(1)} µs/request, ${perOp[i].length} batches of ${BATCH})`,
    )
  const vsPlain = rps[0] / rps[1]
  const vsAuthed = rps[0] / rps[2]
  const vsEncoded = rps[0] / rps[3]
  const vsHello = rps[0] / rps[4]
  const verdict = (r: number) => (r >= 0.5 ? 'goal ≥ 0.5× met' : 'goal ≥ 0.5× NOT met')
  const summary = [
    `manifest: ${rps[0].toFixed(0)} req/s = ${vsPlain.toFixed(2)}× the plain route serving the same ${bytes.length} bytes (${verdict(vsPlain)}); ${vsAuthed.toFixed(2)}× that route behind the same JWT check (${verdict(vsAuthed)}); ${vsEncoded.toFixed(2)}× the plain route serving it pre-encoded; ${vsHello.toFixed(2)}× hello-world`,
  ]
  for (const line of summary) log(line)
  return { summary }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchManifest().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      process.exit(1)
    },
  )
}
