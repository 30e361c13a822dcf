import { expect } from 'vitest'
import type { createMemoryDeps } from '../../functions/deps'

/** Spawns a default-recipe process of alice in acme/p1 and gives the reference the surface takes. */
export async function spawnRef(deps: ReturnType<typeof createMemoryDeps>) {
  const { process } = await deps.processes.spawn('acme', 'p1', 'alice', { recipe: 'default' })
  return { tenant: 'acme', project: 'p1', id: process.id, subject: 'alice' }
}

type Deps = ReturnType<typeof createMemoryDeps>
type Ref = Awaited<ReturnType<typeof spawnRef>>

/**
 * A per-process memo under a budget: with room for one process (`tight`), asking for b pushes
 * a's manifest out, so a's comes back rendered again (equal, not the same object); with room for
 * both (`roomy`), a's stays the object it was.
 */
export async function expectPushedOutThenKept(tight: { deps: Deps; a: Ref; b: Ref }, roomy: { deps: Deps; a: Ref; b: Ref }) {
  const first = await tight.deps.surface.manifestBytes(tight.a)
  expect(await tight.deps.surface.manifestBytes(tight.a)).toBe(first)
  await tight.deps.surface.manifestBytes(tight.b)
  const again = await tight.deps.surface.manifestBytes(tight.a)
  expect(again).not.toBe(first)
  expect(again).toEqual(first)

  const kept = await roomy.deps.surface.manifestBytes(roomy.a)
  await roomy.deps.surface.manifestBytes(roomy.b)
  expect(await roomy.deps.surface.manifestBytes(roomy.a)).toBe(kept)
}
