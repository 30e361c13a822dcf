/**
 * Where scripts run. `worker`: in worker threads behind a hard watchdog — a script that stalls
 * QuickJS's interrupt polling (e.g. catching its own stack overflows) is terminated at its
 * deadline + 150 ms; costs ~200–350 µs per run. `inline`: on the calling thread — cheapest, and
 * right where one container serves one request at a time (Lambda), but such a script can hold the
 * thread seconds past its deadline.
 */
export type SandboxIsolation = 'worker' | 'inline'
export const SANDBOX_ISOLATIONS: SandboxIsolation[] = ['worker', 'inline']
