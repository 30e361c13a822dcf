/**
 * bench/console — the web console's page weight and server time per page, in one run:
 *
 *   weight   per page: its HTML shell + console.js + console.css + favicon.svg, raw and as gzip
 *            on the wire (the bytes the app itself sends to a client that accepts gzip)
 *            goal: < 100 KB gzipped per page, everything included
 *   time     per page, through `app.request` in this process (no sockets):
 *              served  GET /console/<page> with accept-encoding: gzip (the shell is rendered once
 *                      per container, so this is routing + headers + compression)
 *              render  the JSX shell rendered from scratch (what the first request pays)
 *            each as a ratio to GET /health measured in the same rounds (the floor: routing and
 *            a JSON body). Rounds alternate the order so drift hits every variant alike; a ratio
 *            is the median of per-round ratios.
 *
 * The data a page shows is fetched afterwards from the JSON API with the user's token; its size
 * is the API's and is not counted here.
 *
 * Run with `npm run bench -- console`.
 */
import { performance } from 'node:perf_hooks'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { type PageId, renderPage } from '../functions/http/console/pages'

const PAGES: { page: PageId; path: string }[] = [
  { page: 'signin', path: '/console' },
  { page: 'tools', path: '/console/tools' },
  { page: 'tool', path: '/console/tool' },
  { page: 'agent', path: '/console/agent' },
  { page: 'usage', path: '/console/usage' },
]
const WEIGHT_GOAL_BYTES = 100 * 1024

export interface ConsoleBenchOptions {
  rounds?: number
  /** Requests per variant per round. */
  perRound?: number
  log?: (line: string) => void
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

export async function benchConsole(opts: ConsoleBenchOptions = {}) {
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`))
  const rounds = opts.rounds ?? 15
  const perRound = opts.perRound ?? 400
  const app = createApp(createMemoryDeps())
  const gzip = { 'accept-encoding': 'gzip' }
  const wire = async (path: string, headers: Record<string, string> = {}) => {
    const res = await app.request(path, { headers })
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`)
    return (await res.arrayBuffer()).byteLength
  }

  // ── weight ──
  const html = await (await app.request('/console/tools')).text()
  const assetPaths = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'))
  let assetsRaw = 0
  let assetsGz = 0
  for (const a of assetPaths) {
    assetsRaw += await wire(a)
    assetsGz += await wire(a, gzip)
  }
  log(`console page weight (shell + ${assetPaths.map((a) => a.replace(/^\/console\/assets\/|\?.*$/g, '')).join(' + ')}):`)
  log('  page       html raw   html gz   assets raw  assets gz   total raw   total gz   goal < 100 KB gz')
  const weights: { page: string; raw: number; gz: number }[] = []
  for (const { page, path } of PAGES) {
    const raw = await wire(path)
    const gz = await wire(path, gzip)
    weights.push({ page, raw: raw + assetsRaw, gz: gz + assetsGz })
    log(
      `  ${page.padEnd(9)}${kb(raw).padStart(9)}${kb(gz).padStart(10)}${kb(assetsRaw).padStart(12)}${kb(assetsGz).padStart(11)}${kb(raw + assetsRaw).padStart(12)}${kb(gz + assetsGz).padStart(11)}   ${gz + assetsGz < WEIGHT_GOAL_BYTES ? 'met' : 'MISSED'}`,
    )
  }

  // ── time ──
  const time = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now()
    for (let i = 0; i < perRound; i++) await fn()
    return ((performance.now() - t0) * 1000) / perRound // µs per request
  }
  const floor = async () => (await app.request('/health')).arrayBuffer()
  const variants = [
    { name: 'floor', run: floor },
    ...PAGES.flatMap(({ page, path }) => [
      { name: `served ${page}`, run: async () => (await app.request(path, { headers: gzip })).arrayBuffer() },
      { name: `render ${page}`, run: () => renderPage(page, { script: '/s.js', style: '/s.css', icon: '/i.svg' }) },
    ]),
  ]
  for (const v of variants) await time(v.run) // warm-up: JIT, first renders
  const ratios = new Map<string, number[]>()
  const micros = new Map<string, number[]>()
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...variants].reverse() : variants
    const us = new Map<string, number>()
    for (const v of order) us.set(v.name, await time(v.run))
    for (const v of variants) {
      if (!micros.has(v.name)) micros.set(v.name, [])
      micros.get(v.name)!.push(us.get(v.name)!)
      if (v.name === 'floor') continue
      if (!ratios.has(v.name)) ratios.set(v.name, [])
      ratios.get(v.name)!.push(us.get(v.name)! / us.get('floor')!)
    }
  }
  log(
    `server time per page (${rounds} rounds × ${perRound} requests, app.request in process; floor = GET /health, ${median(micros.get('floor')!).toFixed(1)} µs):`,
  )
  log('  page       served (gzip)          render from scratch')
  const summary: string[] = []
  for (const { page } of PAGES) {
    const served = median(ratios.get(`served ${page}`)!)
    const render = median(ratios.get(`render ${page}`)!)
    log(
      `  ${page.padEnd(9)}${`${served.toFixed(2)}× floor`.padStart(14)} (${median(micros.get(`served ${page}`)!).toFixed(1)} µs)${`${render.toFixed(2)}× floor`.padStart(16)} (${median(micros.get(`render ${page}`)!).toFixed(1)} µs)`,
    )
  }
  const heaviest = weights.reduce((a, b) => (b.gz > a.gz ? b : a))
  summary.push(
    `console: heaviest page ${heaviest.page} ${kb(heaviest.gz)} gzipped (${kb(heaviest.raw)} raw) incl. script and CSS — goal < 100 KB ${heaviest.gz < WEIGHT_GOAL_BYTES ? 'met' : 'MISSED'}`,
  )
  summary.push(
    `console: served page ${Math.max(...PAGES.map((p) => median(ratios.get(`served ${p.page}`)!))).toFixed(2)}× GET /health at most; a shell rendered from scratch ${Math.max(...PAGES.map((p) => median(ratios.get(`render ${p.page}`)!))).toFixed(2)}× at most`,
  )
  for (const l of summary) log(l)
  return { weights, summary }
}
