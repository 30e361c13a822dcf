/**
 * `npm run bench -- store-thread` (issue 21): what `npm start`'s embedded stores on a thread of
 * their own (functions/emulator-thread.ts) cost one store request, against the floor of the same
 * stores on the calling thread (functions/emulators.ts `startEmulators`, as before), in the same
 * run. One GetItem of a 200-byte item at a time through the service's own DynamoDB client, on the
 * on-disk dynalite `npm start` uses; rounds alternate (ABAB) so load drifts hit both sides.
 * Per request: CPU of the calling thread (what the service's event loop pays — /proc/thread-self,
 * 10 ms ticks), CPU of the whole process (both threads) and wall time. No goal: the move is for
 * the calling thread's figure; the process's and the wall's are its price.
 * `STORE_THREAD_REQUESTS` (default 3,000) per round, `STORE_THREAD_ROUNDS` (default 4).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startEmulatorThread } from '../functions/emulator-thread'
import { type EmulatorOptions, type Emulators, startEmulators } from '../functions/emulators'
import { destroyAwsClients, makeAwsClients } from '../lib/stores/aws/clients'
import { ensureTable } from '../lib/stores/aws/provision'

const TABLE = { name: 'store-thread', hashKey: { name: 'id', type: 'S' as const } }

/** CPU ms of the calling thread since it started (Linux; ticks of 10 ms). */
function threadCpuMs(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8')
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

interface Figures {
  threadMs: number
  processMs: number
  wallMs: number
}

async function round(start: (o: EmulatorOptions) => Promise<Emulators>, dir: string, requests: number): Promise<Figures> {
  const emulators = await start({ s3Directory: join(dir, 's3'), dynamoPath: join(dir, 'dynamodb') })
  const clients = makeAwsClients({
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    dynamoEndpoint: emulators.dynamoEndpoint,
    s3Endpoint: emulators.s3Endpoint,
  })
  try {
    await ensureTable(clients.dynamo, TABLE)
    await clients.dynamo.putItem({ TableName: TABLE.name, Item: { id: 'a', body: 'x'.repeat(200) } })
    const get = () => clients.dynamo.getItem({ TableName: TABLE.name, Key: { id: 'a' } })
    for (let i = 0; i < 300; i++) await get() // JIT and connections warm on both sides
    const cpu0 = process.cpuUsage()
    const thread0 = threadCpuMs()
    const t0 = performance.now()
    for (let i = 0; i < requests; i++) await get()
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    return { threadMs: (threadCpuMs() - thread0) / requests, processMs: (cpu.user + cpu.system) / 1000 / requests, wallMs: wall / requests }
  } finally {
    destroyAwsClients(clients)
    await emulators.close()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

export async function benchStoreThread() {
  const requests = Number(process.env.STORE_THREAD_REQUESTS ?? 3_000)
  const rounds = Number(process.env.STORE_THREAD_ROUNDS ?? 4)
  const dir = mkdtempSync(join(tmpdir(), 'server-tools-store-thread-'))
  const sides = { same: [] as Figures[], own: [] as Figures[] }
  try {
    for (let r = 0; r < rounds; r++) {
      sides.same.push(await round(startEmulators, join(dir, `same-${r}`), requests))
      sides.own.push(await round(startEmulatorThread, join(dir, `own-${r}`), requests))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const of = (side: Figures[], k: keyof Figures) => median(side.map((f) => f[k]))
  const line = (label: string, side: Figures[]) =>
    `  ${label.padEnd(36)} calling thread ${of(side, 'threadMs').toFixed(3)} ms   process ${of(side, 'processMs').toFixed(3)} ms   wall ${of(side, 'wallMs').toFixed(3)} ms`
  console.log(`\nstore-thread: one GetItem at a time, ${requests} per round, medians of ${rounds} interleaved rounds, per request`)
  console.log(line('stores on the calling thread (floor)', sides.same))
  console.log(line('stores on their own thread (npm start)', sides.own))
  const ratio = (k: keyof Figures) => (of(sides.own, k) / of(sides.same, k)).toFixed(2)
  const summary = [
    `store-thread: own thread / calling thread per GetItem: calling thread's CPU ${ratio('threadMs')}×, process CPU ${ratio('processMs')}×, wall ${ratio('wallMs')}×`,
  ]
  console.log(summary[0])
  return { summary }
}
