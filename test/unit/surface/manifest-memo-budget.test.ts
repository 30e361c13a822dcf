/**
 * Memoised manifest bodies of all processes share one byte budget (SurfaceSettings.manifestMemoBytes):
 * many processes push out the oldest bodies, which are rendered again when asked.
 */
import { describe, it } from 'vitest'
import { createMemoryDeps } from '../../../functions/deps'
import { expectPushedOutThenKept, spawnRef } from '../../support/processes'

const doc = (description: string) =>
  `type: doc_lookup\ndescription: ${description}\nprimary: true\nparameters:\n  path: documents/getting-started.md\n`

async function setUp(manifestMemoBytes?: number) {
  const deps = createMemoryDeps({ surface: manifestMemoBytes === undefined ? {} : { manifestMemoBytes } })
  for (const name of ['alpha', 'beta', 'gamma']) await deps.tools.put('acme', 'p1', name, doc(`The ${name} tool.`), { actor: 't' })
  return { deps, a: await spawnRef(deps), b: await spawnRef(deps) }
}

describe('the manifest memo budget', () => {
  it('renders a process’s manifest again after other processes’ bodies pushed it out, and keeps it while they fit', async () => {
    const measured = await setUp()
    const size = (await measured.deps.surface.manifestBytes(measured.a)).length
    // room for one body (counted at 5 bytes a character), not two
    await expectPushedOutThenKept(await setUp(Math.floor(size * 7.5)), await setUp())
  })
})
