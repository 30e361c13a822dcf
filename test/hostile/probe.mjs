/**
 * Preloaded into the app under test (`node --import ./test/hostile/probe.mjs`): answers the
 * harness over the IPC channel with the process's own memory and event-loop delay, which only the
 * process itself can see. `{ probe, gc, reset }` →
 * `{ probe, rss, heapUsed, loopMaxMs, loopP99Ms, cpuUs, mainCpuMs, loopBusyMs, gc, main, others, requests?, pauses? }`
 * (CPU time of the whole process, CPU time of the thread that serves requests, and time its event
 * loop was busy, all since start: the bench takes differences, so the work one attack request
 * costs is counted, not timed against others). The process's CPU includes its other threads —
 * sandbox and YAML workers, the embedded stores — which cost no tenant a turn on the event loop.
 * It answers only once the event loop is free again, so a stalled app answers late, never wrongly.
 */
import { subscribe } from 'node:diagnostics_channel'
import { readdirSync, readFileSync } from 'node:fs'
import { ServerResponse } from 'node:http'
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks'

/**
 * This thread's CPU time in ms (utime + stime of /proc/thread-self/stat, in ticks of 10 ms:
 * Linux's USER_HZ); NaN where there is no /proc. Node 20 has no per-thread CPU call.
 */
function threadCpuMs() {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return Number.NaN
  }
}

/**
 * A thread's scheduler figures in ms, from /proc/…/schedstat: time on a CPU and time runnable but
 * waiting on a run queue (what the 2 shared cores cost it); zeros where there is no /proc. The
 * wait is exact when read (it is settled as the thread gets a CPU); the run time may lag by the
 * current scheduler tick.
 */
function schedstat(path) {
  try {
    const [run, wait] = readFileSync(path, 'utf8').split(' ')
    return { runMs: Number(run) / 1e6, waitMs: Number(wait) / 1e6 }
  } catch {
    return { runMs: 0, waitMs: 0 }
  }
}

/** The same summed over this process's other threads (sandbox, YAML and store workers, V8's and libuv's helpers). */
function otherThreads() {
  const total = { runMs: 0, waitMs: 0 }
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      if (Number(tid) === process.pid) continue
      const s = schedstat(`/proc/self/task/${tid}/schedstat`)
      total.runMs += s.runMs
      total.waitMs += s.waitMs
    }
  } catch {}
  return total
}

/** Monotonic ms on the clock every process of the machine shares (CLOCK_MONOTONIC), so the bench can line its timings up with these. */
const monoMs = () => Number(process.hrtime.bigint()) / 1e6
const perfToMono = monoMs() - performance.now()

/**
 * `HOSTILE_TRACE=<path substring>` (the bench's victim, e.g. `/brain/bystander/`): each request
 * whose URL contains it is timed from its arrival (headers parsed) to its last bytes handed to the
 * socket (`end()`), with the main thread's schedstat at both ends, and every GC pause is kept, so the bench
 * can split a slow call into the app's CPU, its run-queue waits, GC and idle time. Off by default:
 * two /proc reads per traced request.
 */
const traced = process.env.HOSTILE_TRACE
const requests = []
const pauses = []
if (traced) {
  const open = new WeakMap()
  subscribe('http.server.request.start', ({ request, response }) => {
    if (!request.url?.includes(traced)) return
    const s = schedstat('/proc/thread-self/schedstat')
    open.set(response, { startMs: monoMs(), run0: s.runMs, wait0: s.waitMs })
  })
  // stamped as the last bytes are handed over, not at 'finish': that event comes a turn later,
  // when a busy or descheduled loop gets to it, sometimes after the client already read the answer
  const end = ServerResponse.prototype.end
  ServerResponse.prototype.end = function (...args) {
    const r = open.get(this)
    if (r && r.endMs === undefined) {
      const s = schedstat('/proc/thread-self/schedstat')
      r.endMs = monoMs()
      r.runMs = s.runMs - r.run0
      r.waitMs = s.waitMs - r.wait0
    }
    return end.apply(this, args)
  }
  subscribe('http.server.response.finish', ({ response }) => {
    const r = open.get(response)
    if (!r || r.endMs === undefined) return
    open.delete(response)
    if (requests.length < 100_000) requests.push({ startMs: r.startMs, endMs: r.endMs, runMs: r.runMs, waitMs: r.waitMs })
  })
}

const delay = monitorEventLoopDelay({ resolution: 10 })
delay.enable()

/**
 * Garbage collections of this thread (the one serving requests): a pause stops every tenant
 * alike, so what an attack allocates is read here as collections and their longest pause.
 * Counts since start; the longest pause since the last reset.
 */
const gc = { minor: 0, major: 0, pauseMs: 0, maxPauseMs: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minor++
    else if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++
    gc.pauseMs += entry.duration
    if (entry.duration > gc.maxPauseMs) gc.maxPauseMs = entry.duration
    if (traced && pauses.length < 100_000) pauses.push({ startMs: perfToMono + entry.startTime, ms: entry.duration })
  }
}).observe({ entryTypes: ['gc'] })

process.on('message', (message) => {
  if (!message || typeof message.probe !== 'number') return
  if (message.gc && typeof globalThis.gc === 'function') globalThis.gc()
  const memory = process.memoryUsage()
  const cpu = process.cpuUsage()
  process.send?.({
    probe: message.probe,
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    loopMaxMs: delay.max / 1e6,
    loopP99Ms: delay.percentile(99) / 1e6,
    cpuUs: cpu.user + cpu.system,
    mainCpuMs: threadCpuMs(),
    loopBusyMs: performance.eventLoopUtilization().active,
    gc: { ...gc },
    main: schedstat('/proc/thread-self/schedstat'),
    others: otherThreads(),
    ...(traced ? { requests: [...requests], pauses: [...pauses] } : {}),
  })
  if (message.reset) {
    delay.reset()
    gc.maxPauseMs = 0
    requests.length = 0
    pauses.length = 0
  }
})
// the channel must not keep the app alive on its own, nor stop it from exiting on SIGINT
process.channel?.unref()
