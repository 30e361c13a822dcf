/**
 * A full garbage collection from inside a test, without running vitest under `--expose-gc`: V8
 * exposes `gc` to contexts created after the flag is set. Setting it at import also reaches the
 * worker threads started later (their isolates read the process's flags when they start).
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

setFlagsFromString('--expose-gc')

export const fullGc = runInNewContext('gc') as () => void
