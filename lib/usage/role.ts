import { UNKNOWN_ROLE } from './ports'

/**
 * The role a process's calls count under (spec §14.4): its recipe name, else its engine name,
 * else `_unknown` (calls outside any process, or a process that names neither).
 */
export function usageRole(process: { recipe?: string | null; engine?: string | null } | undefined): string {
  const recipe = process?.recipe?.trim()
  if (recipe) return recipe
  const engine = process?.engine?.trim()
  if (engine) return engine
  return UNKNOWN_ROLE
}
