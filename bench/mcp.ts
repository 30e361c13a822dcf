/**
 * bench/mcp — the MCP endpoint against the REST routes it mirrors, in one run, in-process
 * (`app.request`), batches alternating so drift and GC hit all alike:
 *
 *   MCP tools/list            vs  GET …/manifest?format=mcp       goal ≥ 0.8×
 *   MCP tools/call whoami     vs  POST …/tool-calls whoami         goal ≥ 0.8×
 *
 * and beside them the same two on MCP 2026-07-28 (stateless: `_meta` and the mirrored headers on
 * every request, no session; the project URL resolves the caller's process per request).
 *
 * Both sides do the same work the same way (auth, process read, surface, triage); the MCP side
 * adds JSON-RPC parsing, the SDK's per-request Server and transport, and (tools/call) the event
 * stream. The project: 120 tools (60 primary) in 12 families, a model allowing 48.
 *
 * Run with `npm run bench -- mcp` or `npx tsx bench/mcp.ts`.
 */
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { issueToken } from '../functions/http/auth'

const SECRET = 'bench-only-secret'
const TOOLS = 120
const BATCH = 25
const GOAL = 0.8

export async function benchMcp(opts: { budgetMs?: number; log?: (line: string) => void } = {}): Promise<{ summary: string[] }> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`${line}\n`))
  const budgetMs = opts.budgetMs ?? 8_000
  const deps = createMemoryDeps({
    jwtSecret: SECRET,
    bundledFiles: [
      { path: 'engines/default.yaml', body: 'description: unrestricted\n' },
      { path: 'recipes/default.yaml', body: 'engine: default\n' },
      { path: 'models/bench/_provider.yaml', body: 'wireType: openai\nmaxTools: 48\n' },
      { path: 'documents/manual.md', body: '# Manual\n' },
    ],
  })
  const families = ['doc', 'file', 'mail', 'calendar', 'crm', 'ticket', 'wiki', 'sheet', 'chat', 'build', 'deploy', 'billing']
  for (let i = 0; i < TOOLS; i++) {
    const family = families[i % families.length]
    const labels = i % 3 === 0 ? '[read-only]' : i % 3 === 1 ? '[write, side-effect]' : '[write, destructive]'
    const body = `type: doc_lookup\ndescription: ${family} operation ${i}. Reads the ${family} manual section ${i} and answers with it.\nprimary: ${i % 2 === 0}\nlabels: ${labels}\nparameters:\n  path: documents/manual.md\n`
    await deps.tools.put('acme', 'shop', `${family}_op${String(i).padStart(3, '0')}`, body, { actor: 'bench' })
  }
  const app = createApp(deps)
  const token = await issueToken(
    SECRET,
    { tenant: 'acme', sub: 'bench', scope: 'tools:read tools:invoke', expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const auth = { authorization: `Bearer ${token}` }
  const base = '/brain/acme/projects/shop'

  // One MCP session (= process) serves both sides, so both read the same process and surface.
  const init = await app.request(`${base}/mcp?model=bench/model`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  })
  const session = init.headers.get('mcp-session-id')
  if (init.status !== 200 || !session) throw new Error(`initialize failed: ${init.status} ${await init.text()}`)
  const mcpHeaders = {
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-11-25',
  }
  const rpc = (body: unknown) => app.request(`${base}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(body) })
  const listBody = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  const callBody = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }
  const restCall = JSON.stringify({ name: 'whoami', params: {} })
  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const modern = (method: string, params: Record<string, unknown>, name?: string) => {
    const headers = {
      ...auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name ? { 'mcp-name': name } : {}),
    }
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method, params: { _meta: META, ...params } })
    return () => app.request(`${base}/mcp?model=bench/model`, { method: 'POST', headers, body })
  }
  const modernList = modern('tools/list', {})
  const modernCall = modern('tools/call', { name: 'whoami', arguments: {} }, 'whoami')
  const modernDiscover = modern('server/discover', {})
  const modernRoundTrip = await Promise.all([modernDiscover(), modernList(), modernCall()].map(async (r) => (await r).status))
  if (modernRoundTrip.some((s) => s !== 200)) throw new Error(`MCP 2026-07-28 round trip failed: ${modernRoundTrip}`)

  // Same answers on both sides before anything is timed.
  const listed = ((await (await rpc(listBody)).json()) as { result: { tools: { name: string }[] } }).result.tools
  const manifest = (await (await app.request(`${base}/processes/${session}/manifest?format=mcp`, { headers: auth })).json()) as {
    tools: { name: string }[]
    budget: unknown
  }
  if (listed.map((t) => t.name).join() !== manifest.tools.map((t) => t.name).join())
    throw new Error('MCP tools/list and the manifest differ')
  const called = await (await rpc(callBody)).text()
  if (!called.includes('"isError":false') || !called.includes(session)) throw new Error(`MCP tools/call whoami failed: ${called}`)
  log(`mcp bench: ${TOOLS} tools + built-ins, ${listed.length} listed (budget ${JSON.stringify(manifest.budget)})`)

  const cases = [
    { name: 'MCP tools/list', run: async () => (await rpc(listBody)).text() },
    {
      name: 'GET manifest?format=mcp',
      run: async () => (await app.request(`${base}/processes/${session}/manifest?format=mcp`, { headers: auth })).text(),
    },
    { name: 'MCP tools/call whoami', run: async () => (await rpc(callBody)).text() },
    {
      name: 'POST tool-calls whoami',
      run: async () =>
        (
          await app.request(`${base}/processes/${session}/tool-calls`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json' },
            body: restCall,
          })
        ).text(),
    },
    { name: 'MCP 2026 tools/list', run: async () => (await modernList()).text() },
    { name: 'MCP 2026 tools/call whoami', run: async () => (await modernCall()).text() },
  ]
  for (const c of cases) for (let i = 0; i < 200; i++) await c.run() // warm-up
  // Wall time per request, and this process's CPU time per request (steadier on a shared machine).
  const perOp: number[][] = cases.map(() => [])
  const cpuPerOp: number[][] = cases.map(() => [])
  const deadline = performance.now() + budgetMs
  let rounds = 0
  while (performance.now() < deadline && rounds < 2_000) {
    const order = rounds % 2 === 0 ? cases.map((_, i) => i) : cases.map((_, i) => cases.length - 1 - i)
    for (const i of order) {
      const c0 = process.cpuUsage()
      const t0 = performance.now()
      for (let k = 0; k < BATCH; k++) await cases[i].run()
      perOp[i].push((performance.now() - t0) / BATCH)
      const cpu = process.cpuUsage(c0)
      cpuPerOp[i].push((cpu.user + cpu.system) / 1000 / BATCH)
    }
    rounds++
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const rps = perOp.map((xs) => 1000 / median(xs))
  const cpuRps = cpuPerOp.map((xs) => 1000 / median(xs))
  for (let i = 0; i < cases.length; i++) {
    log(
      `  ${cases[i].name.padEnd(28)} ${rps[i].toFixed(0).padStart(8)} req/s  (median ${(median(perOp[i]) * 1000).toFixed(1)} µs/request wall, ${(median(cpuPerOp[i]) * 1000).toFixed(1)} µs CPU, ${perOp[i].length} batches of ${BATCH})`,
    )
  }
  const verdict = (r: number) => (r >= GOAL ? `goal ≥ ${GOAL}× met` : `goal ≥ ${GOAL}× NOT met`)
  const list = rps[0] / rps[1]
  const call = rps[2] / rps[3]
  const summary = [
    `mcp tools/list: ${rps[0].toFixed(0)} req/s = ${list.toFixed(2)}× the manifest route (${verdict(list)}); by CPU time ${(cpuRps[0] / cpuRps[1]).toFixed(2)}×`,
    `mcp tools/call whoami: ${rps[2].toFixed(0)} req/s = ${call.toFixed(2)}× the tool-calls route (${verdict(call)}); by CPU time ${(cpuRps[2] / cpuRps[3]).toFixed(2)}×`,
    `mcp 2026-07-28 (no session): tools/list ${rps[4].toFixed(0)} req/s = ${(rps[4] / rps[1]).toFixed(2)}× the manifest route, tools/call whoami ${rps[5].toFixed(0)} req/s = ${(rps[5] / rps[3]).toFixed(2)}× the tool-calls route`,
  ]
  for (const line of summary) log(line)
  return { summary }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchMcp().then(
    () => process.exit(0),
    (e) => {
      console.error(e)
      process.exit(1)
    },
  )
}
