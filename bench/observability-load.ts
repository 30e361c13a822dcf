/**
 * The load generator of bench/observability.ts's served figures, in a child process of its own
 * (its CPU is not the server's): `CONCURRENCY` requests in flight over as many kept-alive
 * connections to 127.0.0.1, each sent as the one before it on its connection is answered.
 *
 * Answers `{ run: { port, ms, path, headers, body } }` with `{ done: { requests, cpu } }`:
 * requests answered within `ms`, and this process's CPU µs for them. A status other than 200
 * fails the run.
 */
import http from 'node:http'

const CONCURRENCY = 16

interface Run {
  port: number
  ms: number
  path: string
  headers: Record<string, string>
  body: string
}

/** One keep-alive agent per server, kept across rounds: the connections are opened in the warm-up, not in a round. */
const agents = new Map<number, http.Agent>()

function once(run: Run, agent: http.Agent, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: run.port,
        path: run.path,
        method: 'POST',
        agent,
        headers: { ...run.headers, 'content-length': body.length },
      },
      (res) => {
        res.on('data', () => {})
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

async function load(run: Run): Promise<{ requests: number; cpu: number }> {
  let agent = agents.get(run.port)
  if (!agent) agents.set(run.port, (agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })))
  const body = Buffer.from(run.body)
  let requests = 0
  const cpu0 = process.cpuUsage()
  const end = performance.now() + run.ms
  const worker = async () => {
    while (performance.now() < end) {
      const status = await once(run, agent, body)
      if (status !== 200) throw new Error(`bench request answered ${status}`)
      requests++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const cpu = process.cpuUsage(cpu0)
  return { requests, cpu: cpu.user + cpu.system }
}

if (process.env.BENCH_SERVED_LOAD && process.send) {
  process.on('message', (m: { run?: Run }) => {
    if (m.run)
      load(m.run).then(
        (done) => process.send?.({ done }),
        (e: Error) => process.send?.({ failed: e.message }),
      )
  })
  process.send({ ready: true })
  process.on('disconnect', () => process.exit(0))
}
