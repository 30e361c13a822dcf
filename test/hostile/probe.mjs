/**
 * Preloaded into the app under test (`node --import ./test/hostile/probe.mjs`): answers the
 * harness over the IPC channel with the process's own memory and event-loop delay, which only the
 * process itself can see. `{ probe, gc, reset }` → `{ probe, rss, heapUsed, loopMaxMs, loopP99Ms, cpuUs, loopBusyMs }`
 * (CPU time of the whole process and time its event loop was busy, both since start: the bench
 * takes differences, so the work one attack request costs is counted, not timed against others).
 * It answers only once the event loop is free again, so a stalled app answers late, never wrongly.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'

const delay = monitorEventLoopDelay({ resolution: 10 })
delay.enable()

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
    loopBusyMs: performance.eventLoopUtilization().active,
  })
  if (message.reset) delay.reset()
})
// the channel must not keep the app alive on its own, nor stop it from exiting on SIGINT
process.channel?.unref()
