/**
 * The per-process memo of visible sets and turns is weighed by the tools each process sees
 * (SurfaceSettings.surfaceMemoBytes, 1 KiB a tool): a process over a 1,000-operation pack kept
 * ~0.9 MB there, and 5,000 entries by count alone let spawns hold gigabytes (issue 21, third pass).
 */
import { describe, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import { SURFACE_MEMO_TOOL_BYTES } from '../../../lib/surface/surface'
import { echoPackFactory } from '../../support/pack-factory'
import { expectPushedOutThenKept, spawnRef } from '../../support/processes'

async function setUp(surfaceMemoBytes?: number) {
  const deps = createMemoryDeps({ extraFactories: [echoPackFactory], surface: surfaceMemoBytes === undefined ? {} : { surfaceMemoBytes } })
  const ops = Array.from({ length: 300 }, (_, i) => `o${i}`).join(', ')
  await deps.tools.put('acme', 'p1', 'wide', `type: echo_pack\ndescription: Wide\nprimary: true\nparameters:\n  ops: [${ops}]\n`, {
    actor: 't',
  })
  return { deps, a: await spawnRef(deps), b: await spawnRef(deps) }
}

describe('the surface memo budget', () => {
  it('computes a process’s turn again once processes over many tools pushed it out, and keeps it while they fit', async () => {
    // room for one process's 300-odd tools, not two
    await expectPushedOutThenKept(await setUp(400 * SURFACE_MEMO_TOOL_BYTES), await setUp())
  })
})
