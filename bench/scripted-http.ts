/**
 * Scripted tools through the HTTP invoke route (issue 3): invocations/s of `add_numbers` (a + b)
 * and of a script with one sibling call, against the same route invoking the built-in `whoami`
 * (everything but the sandbox) and a Hono hello-world route, all in one run, in process
 * (`app.request`, no sockets), interleaved in rounds so machine noise hits every variant alike.
 */
import { Hono } from 'hono'
import { createMemoryDeps } from '../functions/deps'
import { createApp } from '../functions/http/app'
import { issueToken } from '../functions/http/auth'

const ADD =
  'type: scripted\ndescription: Add.\nparameters:\n  inputs: [{ name: a, type: number }, { name: b, type: number }]\n  source: a + b\n'
const SIBLING =
  'type: scripted\ndescription: Whoami, then add.\nparameters:\n  inputs: [{ name: a, type: number }]\n  source: vance.tools.call("whoami", {}).tenant.length + a\n'

type Req = () => Promise<Response> | Response

async function rate(req: Req, ms: number, concurrency = 4): Promise<number> {
  let done = 0
  const until = performance.now() + ms
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const res = await req()
        if (res.status !== 200) throw new Error(`bench request failed with ${res.status}: ${await res.text()}`)
        await res.arrayBuffer()
        done++
      }
    }),
  )
  return done / (ms / 1000)
}

export async function benchScriptedHttp(opts: { rounds?: number; msPerRound?: number } = {}) {
  const rounds = opts.rounds ?? 5
  const ms = opts.msPerRound ?? 400
  // the npm start configuration: scripts in workers behind the watchdog
  const deps = createMemoryDeps({ jwtSecret: 'bench-secret', sandbox: { isolation: 'worker' } })
  const app = createApp(deps)
  const token = await issueToken(
    'bench-secret',
    { tenant: 'acme', sub: 'bench', scope: 'tools:read tools:write tools:invoke', expiresInSeconds: 3600 },
    Math.floor(Date.now() / 1000),
  )
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  for (const [name, yaml] of [
    ['add_numbers', ADD],
    ['add_sibling', SIBLING],
  ] as const) {
    await app.request(`/brain/acme/projects/p1/server-tools/${name}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: yaml,
    })
  }
  const invoke =
    (name: string, params: unknown): Req =>
    () =>
      app.request(`/brain/acme/projects/p1/tools/${name}/invoke`, { method: 'POST', headers, body: JSON.stringify({ params }) })
  const hello = new Hono().get('/', (c) => c.text('hello'))
  const variants: [string, Req][] = [
    ['hello-world route', () => hello.request('/')],
    ['invoke whoami (no sandbox)', invoke('whoami', {})],
    ['invoke add_numbers (a + b)', invoke('add_numbers', { a: 5, b: 7 })],
    ['invoke add_sibling (1 sibling)', invoke('add_sibling', { a: 1 })],
  ]
  for (const [, req] of variants) await rate(req, 150) // warm-up: WASM load, JIT, caches
  const totals = variants.map(() => [] as number[])
  for (let r = 0; r < rounds; r++) for (const [i, [, req]] of variants.entries()) totals[i].push(await rate(req, ms))
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const rps = totals.map(median)
  console.log('\nscripted tools through HTTP (in-process app.request, worker isolation, concurrency 4, median of rounds)')
  for (const [i, [name]] of variants.entries()) console.log(`  ${name.padEnd(34)} ${rps[i].toFixed(0).padStart(7)} req/s`)
  const summary = [
    `scripted add_numbers via HTTP invoke (worker isolation): ${rps[2].toFixed(0)} req/s = ${(rps[2] / rps[1]).toFixed(2)}x whoami via the same route, ${(rps[2] / rps[0]).toFixed(3)}x hello-world`,
    `scripted with one sibling via HTTP invoke (worker isolation): ${rps[3].toFixed(0)} req/s = ${(rps[3] / rps[1]).toFixed(2)}x whoami via the same route`,
  ]
  for (const line of summary) console.log(line)
  return { summary }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  benchScriptedHttp().then(() => process.exit(0))
}
