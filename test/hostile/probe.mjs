/**
 * Preloaded into the app under test (`node --import ./test/hostile/probe.mjs`): answers the
 * harness over the IPC channel with the process's own memory and event-loop delay, which only the
 * process itself can see. `{ probe, gc, reset }` → `{ probe, rss, heapUsed, loopMaxMs, loopP99Ms, cpuUs, mainCpuMs, loopBusyMs, gc }`
 * (CPU time of the whole process, CPU time of the thread that serves requests, and time its event
 * loop was busy, all since start: the bench takes differences, so the work one attack request
 * costs is counted, not timed against others). The process's CPU includes its other threads —
 * sandbox and YAML workers, the embedded stores — which cost no tenant a turn on the event loop.
 * It answers only once the event loop is free again, so a stalled app answers late, never wrongly.
 */
import { readFileSync } from 'node:fs'
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
  })
  if (message.reset) {
    delay.reset()
    gc.maxPauseMs = 0
  }
})
// the channel must not keep the app alive on its own, nor stop it from exiting on SIGINT
process.channel?.unref()
