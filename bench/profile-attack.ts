/**
 * One attack class of test/hostile/attacks.ts against `npm start`'s app under `--cpu-prof`:
 * `nice -n 10 npx tsx bench/profile-attack.ts "<class name prefix>" [requests=50] [dir]` (default dir: test-results/cpu-profiles/<time>, git-ignored).
 * Prints the app's CPU ms per attack request (process.cpuUsage, every thread of the process), its
 * longest event-loop delay over the requests and the main thread's garbage collections, and
 * leaves one .cpuprofile per thread in `dir` (the main thread's is
 * `CPU.<date>.<time>.<pid>.0.<n>.cpuprofile`; open it in Chrome DevTools).
 * Requests are sent one at a time, so the profile shows one request's work, not a flood's.
 */
import { ATTACK_CLASSES } from '../test/hostile/attacks'
import { startApp, warmUp } from '../test/hostile/harness'

async function main() {
  const [prefix, count = '50', dir = `test-results/cpu-profiles/${Date.now()}`] = process.argv.slice(2)
  const attack = ATTACK_CLASSES.find((a) => prefix && a.name.startsWith(prefix))
  if (!attack) throw new Error(`no attack class starts with '${prefix}': ${ATTACK_CLASSES.map((a) => a.name).join('; ')}`)
  const n = Number(count)
  const app = await startApp({ nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100'] })
  try {
    await warmUp(app)
    const prepared = await attack.prepare?.(app, 'attacker')
    for (let i = 0; i < 3; i++) await attack.once(app, 'attacker', prepared)
    const before = await app.sample({ reset: true })
    for (let i = 0; i < n; i++) await attack.once(app, 'attacker', prepared)
    const after = await app.sample({ reset: true })
    console.log(
      `${attack.name}: ${((after.cpuMs - before.cpuMs) / n).toFixed(2)} CPU ms an attack, loop max ${after.loopMaxMs} ms;` +
        ` main thread: ${after.gc.minor - before.gc.minor} scavenges, ${after.gc.major - before.gc.major} mark-compacts, longest pause ${after.gc.maxPauseMs.toFixed(1)} ms; profiles in ${dir}`,
    )
  } finally {
    await app.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
