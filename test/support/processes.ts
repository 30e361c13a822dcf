import type { createMemoryDeps } from '../../functions/deps'

/** Spawns a default-recipe process of alice in acme/p1 and gives the reference the surface takes. */
export async function spawnRef(deps: ReturnType<typeof createMemoryDeps>) {
  const { process } = await deps.processes.spawn('acme', 'p1', 'alice', { recipe: 'default' })
  return { tenant: 'acme', project: 'p1', id: process.id, subject: 'alice' }
}
